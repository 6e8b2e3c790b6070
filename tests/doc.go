// Package tests holds fxport's golden-file regression tests.
//
// Each tests/testdata/<area>/<name>.fxir is an input program in IR text (or
// <name>.fx, an FX text dump torch prints, read by frontends/fxtext) whose
// leading comment lines configure the run:
//
//	# target: onnx                   target (dynamo, onnx, executorch); default dynamo
//	# backend: executorch.xnnpack    backend; default the target's
//	# passes: onnx-node-fixes, dce   run only these passes of the target's pipeline
//	# pipeline: onnx: onnx.fx-node-fixes(onnx-node-fixes)   or an explicit pipeline
//	# exclude-patches: where-promote patches not installed in the export
//	# error: substring               the run must fail with this message
//
// A file may hold several cases separated by a line "# -----"; each case may
// add its own header lines. The expected output sits beside the input as
// <name>.golden: per case, the IR after the pipeline and the deterministic
// report lines of what fired. `go test ./tests -update` rewrites the
// goldens (never an input); a mismatch prints a diff and writes <name>.got.
//
// Every case is also checked for idempotence (running the pipeline on its
// own output changes nothing), for an exact print/parse round trip of the
// output, for determinism (two runs give identical bytes) and, with
// verify-each, for IR validity after every pass.
package tests
