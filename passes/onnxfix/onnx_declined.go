package onnxfix

import "github.com/fxport/fxport/pm"

// The ONNX torch patches fxport deliberately does not implement (catalog
// ONNX-P14, ONNX-P15; docs/targets/onnx.md, "Catalog rows"). Their only
// effect in the Python exporter is a semantics change on fully masked rows;
// the traced program already holds torch's own decomposition.
var (
	DeclinedONNXMaskedMean = pm.RegisterDeclined(&pm.Declined{ID: "ONNX-P14", Name: "onnx-masked-mean-zero-rows", Backend: pm.BackendONNX, Stage: pm.StageTorchPatches, Reason: "not applicable: torch.export traces torch.masked.mean into its ATen decomposition (sum / count with torch's semantics), so the program already computes torch's result (NaN for a fully masked row); the Python patch exists only to return 0 there, a semantics change fxport does not make"})
	DeclinedONNXMaskedVar  = pm.RegisterDeclined(&pm.Declined{ID: "ONNX-P15", Name: "onnx-masked-var-zero-rows", Backend: pm.BackendONNX, Stage: pm.StageTorchPatches, Reason: "not applicable, as ONNX-P14: torch.masked.var is traced into its ATen decomposition with torch's semantics; the Python patch only clamps the denominator to change the result of fully masked rows, which fxport does not do"})
)
