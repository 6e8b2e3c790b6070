// Package passes holds fxport's generic passes and the workaround catalog:
// one small file per workaround, named after its catalog ID
// (onnx_fx03_detach_inplace.go for ONNX-FX03), each registering itself with
// one line into the pm registry of its kind.
//
// Importing the package (for its side effects, as cmd/fxport does) fills
// pm.Default. Each workaround has a golden test in
// tests/testdata/passes/<id>.fxir showing its input and output; see
// docs/extending.md.
package passes
