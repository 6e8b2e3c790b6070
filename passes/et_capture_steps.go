package passes

import "github.com/fxport/fxport/pm"

// The capture-only rows of the ExecuTorch exporter (catalog ET-B01, ET-B03,
// ET-B05, ET-B07, ET-P27, ET-P29, ET-P30, ET-P31). They change the model or
// its sample inputs before or during tracing, so fxport cannot redo them on
// a traced program: the capture shim applies them and lists the IDs it
// applied in the program metadata export.capture_steps. Targets are the
// Python functions of transformers' exporters package that implement each
// step (the backend prepares and the patch factories).
var (
	CapturePrepareXNNPACK  = pm.RegisterCaptureStep(&pm.CaptureStep{ID: "ET-B01", Name: "prepare-for-xnnpack", Backend: "executorch.xnnpack", Stage: pm.StageBackendPrepare, Target: "transformers.exporters.exporter_executorch.prepare_for_xnnpack", Reason: "the model is frozen (requires_grad_(False)), moved to the CPU and switched to the batched_mm experts implementation before tracing (XNNPACK has no _grouped_mm.out kernel); the traced ops depend on it"})
	CapturePrepareCUDA     = pm.RegisterCaptureStep(&pm.CaptureStep{ID: "ET-B03", Name: "prepare-for-cuda", Backend: "executorch.cuda", Stage: pm.StageBackendPrepare, Target: "transformers.exporters.exporter_executorch.prepare_for_cuda", Reason: "the model is frozen and (in revision A) cast to bfloat16 before tracing, and the export needs a visible GPU; the traced dtypes depend on it"})
	CaptureMakeContiguous  = pm.RegisterCaptureStep(&pm.CaptureStep{ID: "ET-B05", Name: "make-inputs-contiguous", Backend: pm.BackendExecuTorch, Stage: pm.StageBackendPrepare, Target: "transformers.exporters.exporter_executorch._make_contiguous", Reason: "sample inputs are made contiguous before tracing, since ExecuTorch rejects stride-0 input placeholders; the traced input layouts depend on it"})
	CapturePrepareMLX      = pm.RegisterCaptureStep(&pm.CaptureStep{ID: "ET-B07", Name: "prepare-for-mlx", Backend: "executorch.mlx", Stage: pm.StageBackendPrepare, Target: "transformers.exporters.exporter_executorch.prepare_for_mlx", Reason: "the model is moved to the CPU and switched to batched_mm experts before tracing, and StaticCache models are rejected; the traced ops depend on it"})
	CaptureMaskExpansion   = pm.RegisterCaptureStep(&pm.CaptureStep{ID: "ET-P27", Name: "broadcast-mask-expansion", Backend: pm.BackendExecuTorch, Stage: pm.StageTorchPatches, Target: "transformers.exporters.exporter_executorch._patch_broadcast_mask_expansion", Reason: "masking_utils._vmap_expansion_sdpa builds the mask with vmap, which traces into ops ExecuTorch cannot lower; the patch builds it by broadcasting before the trace"})
	CaptureDeepseekRotary  = pm.RegisterCaptureStep(&pm.CaptureStep{ID: "ET-P29", Name: "deepseek-v2-real-rotary", Backend: pm.BackendExecuTorch, Stage: pm.StageTorchPatches, Target: "transformers.exporters.exporter_executorch._patch_deepseek_v2_rotary_forward", Reason: "DeepseekV2's rotary embedding computes with complex polar tensors; the patch swaps in a real [cos, sin] formulation before tracing (a general complex-lowering pass would make it post-trace)"})
	CaptureMambaScan       = pm.RegisterCaptureStep(&pm.CaptureStep{ID: "ET-P30", Name: "mamba-sequential-scan", Backend: pm.BackendExecuTorch, Stage: pm.StageTorchPatches, Target: "transformers.exporters.exporter_executorch._patch_mamba_selective_scan", Reason: "mamba_selective_scan (falcon_mamba, jamba, mamba, zamba) must be traced with use_associative_scan=False; the Python branch taken decides which ops the trace contains"})
	CaptureAssociativeScan = pm.RegisterCaptureStep(&pm.CaptureStep{ID: "ET-P31", Name: "associative-scan-as-scan", Backend: pm.BackendExecuTorch, Stage: pm.StageTorchPatches, Target: "transformers.exporters.exporter_executorch._patch_associative_scan", Reason: "ExecuTorch has no associative_scan; the patch traces the sequential scan HOP instead, which lowers at a symbolic length"})
)
