// Package bundled_program_flatbuffer is flatc-generated FlatBuffers code for the bundled program (.bpte) tables
// (schema in targets/executorch/schema; regenerate with targets/executorch/fb/gen.sh).
package bundled_program_flatbuffer
