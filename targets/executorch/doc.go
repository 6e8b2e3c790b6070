// Package executorch declares the ExecuTorch catalog rows that are
// properties of fxport's lowering, planning and emission (the catalog's
// "invariant" ET-* rows) and the rows fxport does not implement, so that
// "fxport passes" lists every row with the test that pins it or the reason
// it is missing. The code lives in the subpackages (emit, plan, pte,
// xnnpack, cuda, run) and in the executorch passes; the tests named
// TestInvariant_ET_* of this directory exercise the properties that span
// them. docs/targets/executorch.md ("Catalog rows and invariants") maps
// every ET-* row.
package executorch
