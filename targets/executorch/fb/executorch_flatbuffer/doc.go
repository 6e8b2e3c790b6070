// Package executorch_flatbuffer is flatc-generated FlatBuffers code for the ExecuTorch program (.pte) and scalar-type tables
// (schema in targets/executorch/schema; regenerate with targets/executorch/fb/gen.sh).
package executorch_flatbuffer
