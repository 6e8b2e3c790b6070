package onnx

import "github.com/fxport/fxport/ir"

// The Core ATen ops the ONNX target does not lower, each with a reason a
// user can act on (the export error and docs/targets/onnx.md print it).
func init() {
	Unsupported("a training (backward) op: ONNX export covers inference. Export the model in eval mode without autograd "+
		"(model.eval(); torch.export.export under torch.no_grad()) so no backward op is traced.",
		ir.OpAtenConvolutionBackward, ir.OpAten_AdaptiveAvgPool2dBackward, ir.OpAtenAvgPool2dBackward,
		ir.OpAtenMaxPool2dWithIndicesBackward, ir.OpAtenNativeGroupNormBackward,
		ir.OpAtenNativeLayerNormBackward, ir.OpAtenEmbeddingDenseBackward)
	Unsupported("an in-place or out= op: torch.export's functionalization removes it; a program that still holds it was not "+
		"functionalized. Export with torch.export.export (not a pre-dispatch trace) or call ep.run_decompositions().",
		ir.OpAtenResize_, ir.OpAtenAtan2Out)
	Unsupported("randperm is rewritten before the ONNX stages by the patch ONNX-P06 (randperm-argsort); this node was left "+
		"because that patch was excluded. Do not exclude ONNX-P06.", ir.OpAtenRandperm)
	Unsupported("Tensor.item() (a data-dependent scalar): fxport cannot lower it to ONNX yet. Keep the value a tensor in the model "+
		"(avoid .item() / int(tensor) in forward).", ir.OpAten_LocalScalarDense)
	Unsupported("masked_scatter is rewritten before the ONNX stages by the patch ONNX-P16 (masked-scatter-gather); this node was "+
		"left because that patch was excluded. Do not exclude ONNX-P16.", ir.OpAtenMaskedScatter)
}
