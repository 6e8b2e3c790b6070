// Package fb holds the Go code that Debian's flatc (flatbuffers-compiler
// 2.0.8) generates from the schemas in ../schema, one subpackage per schema
// namespace (executorch_flatbuffer, fb_xnnpack, flat_tensor_flatbuffer,
// bundled_program_flatbuffer), with the object API. Regenerate with
// `go generate ./targets/executorch/fb` (needs flatc); fresh_test.go checks
// that the committed code matches the schemas.
package fb

//go:generate sh gen.sh
