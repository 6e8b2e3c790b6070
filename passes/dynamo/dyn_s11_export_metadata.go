package dynamo

import "github.com/fxport/fxport/pm"

// DYN-S11 (build_export_metadata) is not a rewrite: the flat I/O names
// flat-io-names records (ir.Program.IONames) and the program
// metadata travel with the program, and each target's writer stores the
// export metadata document in its artifact (ONNX-S03, ET-L04).
var InvariantExportMetadata = pm.RegisterInvariant(&pm.Invariant{
	ID:      "DYN-S11",
	Name:    "export-metadata",
	Backend: pm.BackendAll,
	Stage:   pm.StagePytree,
	Where:   "passes/dynamo/dyn_s05_flat_io_names.go, ir/ionames.go, targets/onnx/emit.go, targets/executorch/emit/metadata.go",
	Test:    "passes/dynamo.TestIONamesReadsWhatFlatIONamesWrote, targets/onnx.TestEmitDeterministicAndMetadata, targets/executorch.TestInvariant_ET_L04",
	Doc: `every export carries its export metadata: I/O names, user-output count and program metadata

flat-io-names writes the flat input and output names to the program
metadata; the ONNX emitter stores the JSON document in
metadata_props["fxport.export_metadata"] (ONNX-S03), the ExecuTorch emitter
as the constant method fxport.export_metadata (ET-L04), and the .pt2 writer
keeps the program metadata. The Python exporter built this dict once after
capture and returned it next to the program.`,
})
