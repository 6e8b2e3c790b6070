package onnxfix

import "github.com/fxport/fxport/pm"

// The capture-only rows of the ONNX exporter's torch patches (catalog
// ONNX-P04, ONNX-P19). They replace model-library code during tracing, so
// a traced program no longer shows what they changed; the capture shim
// applies them and lists their IDs in export.capture_steps. Targets are the
// patch factories in transformers' exporter_onnx; ONNX-P04 patches
// transformers.masking_utils._vmap_expansion_sdpa, ONNX-P19 the
// mamba_selective_scan of the falcon_mamba, jamba, mamba and zamba models.
var (
	CaptureONNXMaskExpansion = pm.RegisterCaptureStep(&pm.CaptureStep{ID: "ONNX-P04", Name: "onnx-broadcast-mask-expansion", Backend: pm.BackendONNX, Stage: pm.StageModelPatches, Target: "transformers.exporters.exporter_onnx._patch_broadcast_mask_expansion", Reason: "the vmap-based mask construction traces into batched ops of an arbitrary mask closure with no stable pattern to rewrite; the shim swaps in the broadcast index-grid expansion (_non_vmap_expansion_sdpa) and .expand(B, H, Q, KV) before tracing"})
	CaptureONNXMambaScan     = pm.RegisterCaptureStep(&pm.CaptureStep{ID: "ONNX-P19", Name: "onnx-mamba-sequential-scan", Backend: pm.BackendONNX, Stage: pm.StageModelPatches, Target: "transformers.exporters.exporter_onnx._patch_mamba_selective_scan", Reason: "the CPU associative scan is traced through vmap and cannot be decomposed for ONNX; use_associative_scan=False must be forced (unless the device is cuda/xpu) while the model is traced, which decides the loop the graph contains"})
)
