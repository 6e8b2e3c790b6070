// Package schema holds fxport's FlatBuffers schemas for ExecuTorch: the
// program (.pte, ET12), its scalar types, the XNNPACK delegate graph (XN01)
// the flat-tensor data file (.ptd, FT01) and the bundled program
// (.bpte, BP08). They were written from the
// documented vtable slot order (shared/reference/pte-format.md), are compiled
// to Go by fb/gen.sh, and are embedded here so that the .pte reader verifies
// buffers against exactly the schema that generated its accessors.
package schema

import "embed"

// FS holds the *.fbs files.
//
//go:embed *.fbs
var FS embed.FS

// Names of the schema files in FS.
const (
	ScalarType = "scalar_type.fbs"
	Program    = "program.fbs"
	XNNPACK    = "xnnpack.fbs"
	FlatTensor = "flat_tensor.fbs"
	Bundled    = "bundled_program.fbs"
)
