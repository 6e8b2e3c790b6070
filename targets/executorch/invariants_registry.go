package executorch

import "github.com/fxport/fxport/pm"

// Test references of the golden cases (tests/testdata/lowering).
const (
	goldenCore     = "tests.TestGolden/testdata/lowering/et_l01_core_decompose"
	goldenDimOrder = "tests.TestGolden/testdata/lowering/et_lower_dim_order_ops"
	goldenPrim     = "tests.TestGolden/testdata/lowering/et_lower_executorch_prim"
	goldenPlan     = "tests.TestGolden/testdata/lowering/et_lower_plan_memory"
)

const et, xnn, cuda = pm.BackendExecuTorch, "executorch.xnnpack", "executorch.cuda"

// The invariant ET-* rows: each replaced a patch of ExecuTorch's internals
// or an argument of its lowering, and is upheld by construction here.
var (
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-B02", Name: "et-xnnpack-partitioner-selection", Backend: xnn, Stage: pm.StageLowering, Where: "passes/et_xnnpack_partition.go, targets/executorch/xnnpack", Test: "targets/executorch/xnnpack.TestInvariant_ET_B02, targets/executorch/xnnpack.TestPartitionExclude", Doc: "only executorch.xnnpack partitions; its configs are all configs minus partition-exclude, and excluding every config is an error"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-B04", Name: "et-cuda-method-name-compile-spec", Backend: cuda, Stage: pm.StageEmit, Where: "targets/executorch/cuda/package.go", Test: "targets/executorch/cuda.TestWritePackagesStandinPayload", Doc: "the CUDA delegate's compile spec method_name is the model class name"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-L01", Name: "et-core-aten-exceptions", Backend: et, Stage: pm.StageLowering, Where: "passes/et_l01_core_decompose.go", Test: goldenCore, Doc: "non-core ops on the exception list are left for portable kernels, never decomposed or delegated\n\ndecompose-to-core keeps the ops of EtCoreExceptions, as EdgeCompileConfig's _core_aten_ops_exception_list did."})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-L02", Name: "et-dim-order-ops-symbolic", Backend: et, Stage: pm.StageLowering, Where: "passes/et_lower_dim_order_ops.go", Test: goldenDimOrder, Doc: "dim-order ops take no size argument, so symbolic sizes stay symbolic (no _skip_dim_order toggle)"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-L03", Name: "et-plan-alloc-flags", Backend: et, Stage: pm.StageLowering, Where: "targets/executorch/plan", Test: "targets/executorch/plan.TestAllocFlags, " + goldenPlan, Doc: "the planner options alloc-graph-input, alloc-graph-output and alloc-mutable-buffers leave those values unplanned"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-L04", Name: "et-export-metadata-method", Backend: et, Stage: pm.StageEmit, Where: "targets/executorch/emit/metadata.go", Test: "targets/executorch.TestInvariant_ET_L04", Doc: "the export metadata is the constant method fxport.export_metadata of the .pte (the ExecuTorch consumer of DYN-S11)"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-P09", Name: "et-expand-materialized", Backend: et, Stage: pm.StageLowering, Where: "passes/et_lower_edge_views.go", Test: "targets/executorch/plan.TestLoweredAliasing", Doc: "expand becomes expand_copy, materialized at full size: no tensor has a stride-0 dim"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-P10", Name: "et-plan-upper-bounds", Backend: et, Stage: pm.StageLowering, Where: "targets/executorch/plan", Test: "targets/executorch/plan.TestUpperBoundsAndUnbounded, " + goldenPlan, Doc: "the planner sizes tensors at sym.Env.UpperBound and invents no bound: an unbounded dim is an error pointing at ET-PF01"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-P11", Name: "et-cat-inputs-kept", Backend: et, Stage: pm.StageLowering, Where: "targets/executorch/plan", Test: "targets/executorch/plan.TestCatKeepsEmptyAndUnbackedInputs", Doc: "no pass prunes cat inputs: empty and unbacked-size inputs are kept and planned"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-P12", Name: "et-complex-dtypes-accepted", Backend: et, Stage: pm.StageLowering, Where: "passes/et_lower_*.go", Test: "targets/executorch.TestInvariant_ET_P12", Doc: "complex64 and complex128 tensors pass the lowering: there is no dtype-matching verifier that rejects them"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-P14", Name: "et-constant-placeholders", Backend: et, Stage: pm.StageEmit, Where: "targets/executorch/emit", Test: "targets/executorch.TestInvariant_ET_P14", Doc: "the emitter marks as constants exactly the parameters, non-mutated buffers and lifted constants"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-P15", Name: "et-sym-ops-need-prim-kernels", Backend: et, Stage: pm.StageLowering, Where: "passes/et_lower_executorch_prim.go", Test: goldenPrim, Doc: "symbolic ops map only to executorch_prim ops that have kernels; any other fails listing every such node (EtPrimTwins)"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-P16", Name: "et-xnnpack-squeeze-static-reshape", Backend: xnn, Stage: pm.StageEmit, Where: "targets/executorch/xnnpack", Test: "targets/executorch/xnnpack.TestInvariant_ET_P16", Doc: "XNNPACK squeeze and unsqueeze become XNNStaticReshape with 0 for each dynamic dim"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-P34", Name: "et-signature-matches-placeholders", Backend: et, Stage: pm.StageEmit, Where: "ir (Program.Signature), targets/executorch/emit", Test: "targets/executorch.TestInvariant_ET_P34", Doc: "Signature.Inputs[i] describes Main.Inputs[i] by construction, so input specs need no reordering\n\nThe emitter still refuses constant_input placeholders with an error naming them (not done; the test pins that error)."})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-P35", Name: "et-view-copy-kept", Backend: et, Stage: pm.StageLowering, Where: "passes/et_lower_edge_views.go", Test: "targets/executorch/plan.TestLoweredAliasing", Doc: "no pass turns view_copy back into a view: a view_copy never aliases its base"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-P37", Name: "et-output-clones-kept", Backend: et, Stage: pm.StageLowering, Where: "passes/et_lower_out_variants.go", Test: "targets/executorch/plan.TestLoweredAliasing", Doc: "clones are never removed; a clone feeding a graph output keeps its own storage"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-P38", Name: "et-xnnpack-prelu-rank4", Backend: xnn, Stage: pm.StageLowering, Where: "targets/executorch/xnnpack", Test: "targets/executorch/xnnpack.TestInvariant_ET_P38", Doc: "the XNNPACK partitioner delegates prelu only for rank-4 inputs"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-P39", Name: "et-xnnpack-nonfinite-floats", Backend: xnn, Stage: pm.StageEmit, Where: "targets/executorch/xnnpack", Test: "targets/executorch/xnnpack.TestInvariant_ET_P39", Doc: "the XNNPACK FlatBuffer builder writes floats directly: ±inf and NaN constants and min/max bounds survive bit-exactly (no JSON round trip)"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-P40", Name: "et-size-one-dim-orders-canonical", Backend: et, Stage: pm.StageLowering, Where: "passes/et_lower_dim_order_ops.go", Test: goldenDimOrder, Doc: "size-one dims are canonicalized in every dim order (EtCanonicalDimOrder) before serialization"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-P41", Name: "et-nonzero-contiguous", Backend: et, Stage: pm.StageLowering, Where: "ir/infer_index.go", Test: "targets/executorch.TestInvariant_ET_P41", Doc: "shape inference gives nonzero a contiguous (nnz, ndim) result whatever the input's layout"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-P42", Name: "et-backed-symbols-kept", Backend: et, Stage: pm.StageLowering, Where: "passes/et_lower_*.go", Test: "targets/executorch.TestInvariant_ET_P42, " + goldenPrim, Doc: "no lowering pass specializes a backed symbol: the .pte stays DYNAMIC_BOUND and runs at several sizes"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-PF02", Name: "et-weight-placeholders-typed", Backend: et, Stage: pm.StageFXProgramFixes, Where: "frontends/pt2", Test: "targets/executorch.TestInvariant_ET_PF02", Doc: "the frontend types every parameter, buffer and lifted-constant placeholder from its weight, so no placeholder lacks a type"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-NF02", Name: "et-sym-ops-as-prim", Backend: et, Stage: pm.StageLowering, Where: "passes/et_lower_executorch_prim.go", Test: goldenPrim, Doc: "Python symbolic ops (torch.sym_*, math.*, operator.* on SymInts) map to executorch_prim ops during lowering, without specializing dynamic axes"})
	_ = pm.RegisterInvariant(&pm.Invariant{ID: "ET-NF04", Name: "et-sym-pow-as-mul", Backend: et, Stage: pm.StageLowering, Where: "passes/et_lower_executorch_prim.go", Test: goldenPrim, Doc: "x**n on a SymInt with a literal n ≥ 1 becomes n−1 executorch_prim mul.Scalar ops"})
)

// The ET-* rows fxport does not implement, with the reason.
var (
	_ = pm.RegisterDeclined(&pm.Declined{ID: "ET-B06", Name: "et-openvino-prepare", Backend: "executorch.openvino", Stage: pm.StageBackendPrepare, Reason: "not done: fxport has no executorch.openvino backend (pm.Build rejects it), so there is no OpenVINO partitioner or compile spec to pin"})
	_ = pm.RegisterDeclined(&pm.Declined{ID: "ET-P13", Name: "et-dim-order-from-stride", Backend: et, Stage: pm.StageLowering, Reason: "not done: the IR carries dim orders, not strides, so no dim order is derived from (possibly unbacked) strides yet and there is nothing a test could pin"})
	_ = pm.RegisterDeclined(&pm.Declined{ID: "ET-P36", Name: "et-guards-never-printed", Backend: et, Stage: pm.StageTorchPatches, Reason: "holds trivially, untestable: fxport never converts guards to code or prints them; there is no such code path, so no test could exercise the property"})
)
