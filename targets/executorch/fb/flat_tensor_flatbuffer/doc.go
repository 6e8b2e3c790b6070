// Package flat_tensor_flatbuffer is flatc-generated FlatBuffers code for the flat-tensor data file (.ptd) tables
// (schema in targets/executorch/schema; regenerate with targets/executorch/fb/gen.sh).
package flat_tensor_flatbuffer
