package pm

import (
	"fmt"
	"strings"
)

// The default pipelines are written here, one table per target, in the
// spirit of Go's SSA `passes` array: each row is a named pass instance at
// its place, with the reason it sits there. The tables are the only source
// of pass order: registration order (Go's file-name init order) never
// matters. Build reads a table; nothing is sorted or inferred.
//
// A pass with a Stage must appear in some table: Build and CheckBuiltins
// fail on a registered pass no table names. A row names a pass by its
// registered name; a row whose pass is not registered (its package is not
// linked) fails only the pipelines that contain it.

// Row is one pass instance of a pipeline table.
type Row struct {
	// Stage is the stage the instance runs in, by local name ("lowering").
	Stage string
	// Pass is the pass's registered name.
	Pass string
	// Backends restricts the row to these export backends (or backend
	// families: "executorch"); empty means every backend the pass runs for.
	Backends []string
	// Why says why the pass is in the pipeline at this place.
	Why string
}

// Table is the default pipeline of one target: its rows in run order.
type Table struct {
	Target string
	Rows   []Row
}

// Constraint says that pass Before must run before pass After in every
// default pipeline holding both, for the reason Why. Like Go's passOrder,
// the constraints document the order; they never change it.
type Constraint struct {
	Before, After, Why string
}

// PatchRow is one patch in PatchOrder.
type PatchRow struct {
	// Patch is the patch's registered name.
	Patch string
	// Why, where set, says why the patch sits before or after another.
	Why string
}

// dynamoRows run first in every target (the Dynamo stages, docs/dynamo.md).
var dynamoRows = []Row{
	{Stage: StageSignature, Pass: "check-capture-steps", Why: "first: reports the capture steps and rejects what a missing one left in the traced program before anything rewrites it"},
	{Stage: StageModelPatches, Pass: PatchDriverName(StageModelPatches), Why: "the export's model-method patches, on the program as traced"},
	{Stage: StagePytree, Pass: "flat-io-names", Why: "names the flat inputs and outputs from the signature's pytree specs (DYN-S05), which apply-dynamic-shapes reads"},
	{Stage: StageDynamicShapes, Pass: "apply-dynamic-shapes", Why: "names and narrows the dynamic dims by the flat input names (DYN-S04)"},
	{Stage: StageStateCleanup, Pass: "drop-unused-weights", Why: "last Dynamo step: weights no node uses leave the signature (DYN-S10) before any target stage"},
}

var onnxRows = []Row{
	{Stage: StageTorchPatches, Pass: PatchDriverName(StageTorchPatches), Why: "legalizes the torch ops the ONNX exporter patches (ONNX-P*), before any node fix sees them"},
	{Stage: StageFXNodeFixes, Pass: "onnx-node-fixes", Why: "first run of the FX node fixes, before decomposition (§5.2 step 6)"},
	{Stage: StageONNXPatches, Pass: PatchDriverName(StageONNXPatches), Why: "decomposition to the ONNX table"},
	{Stage: StageONNXPatches, Pass: "onnx-node-fixes-after-decompose", Why: "decomposition re-creates patterns the node fixes remove, so they run again (ONNX-P18)"},
}

var executorchPrepareRows = []Row{
	{Stage: StageBackendPrepare, Pass: PassBackendPrepare, Why: "first, outside any patch scope: backend preparation and partitioner selection (ET-B*)"},
}

var executorchRows = []Row{
	{Stage: StageTorchPatches, Pass: PatchDriverName(StageTorchPatches), Why: "legalizes the torch ops the ExecuTorch exporter patches (ET-P*)"},
	{Stage: StageExecuTorchPatches, Pass: PatchDriverName(StageExecuTorchPatches), Why: "workarounds for ExecuTorch-internal passes"},

	{Stage: StageFXProgramFixes, Pass: "drop-runtime-asserts", Why: "the Python program fixes run in catalog order: ET-PF03 first"},
	{Stage: StageFXProgramFixes, Pass: "contiguous-constants", Why: "ET-PF04, after ET-PF03 as in the Python fixes list"},
	{Stage: StageFXProgramFixes, Pass: "widen-symbol-ranges", Why: "after drop-runtime-asserts: the bounds the asserts give must reach the Env before unbounded symbols get a heuristic bound (ET-PF01)"},

	{Stage: StageFXNodeFixes, Pass: "executorch-node-fixes", Why: "the ExecuTorch FX node fixes, on ATen ops before lowering"},

	// Delegates that take traced ATen ops partition before any edge lowering.
	{Stage: StageLowering, Pass: "cuda-partition", Backends: []string{"executorch.cuda"}, Why: "CUDA compiles plain ATen ops: its regions are cut before decomposition and edge lowering"},
	{Stage: StageLowering, Pass: "cuda-device-copies", Backends: []string{"executorch.cuda"}, Why: "lowers the partition's boundary copies before to-dim-order-ops would make them CPU-only _to_dim_order_copy"},
	{Stage: StageLowering, Pass: "openvino-partition", Backends: []string{"executorch.openvino"}, Why: "OpenVINO's frontend converts the traced ATen ops, not their core decompositions or edge ops"},
	// Edge lowering (exir's to_edge).
	{Stage: StageLowering, Pass: "decompose-to-core", Why: "to_edge starts with the core ATen decomposition (ET-L01)"},
	{Stage: StageLowering, Pass: "to-dim-order-ops", Why: "the _to_copy and clone nodes, the decompositions' included, get explicit dim orders (ET-L02)"},
	{Stage: StageLowering, Pass: "to-edge-views", Why: "views become their _copy forms, the decompositions' views included"},
	{Stage: StageLowering, Pass: "propagate-dim-orders", Why: "once views are copies, the dim orders torch derived from view strides are recomputed node by node (exir re-traces its edge program)"},
	{Stage: StageLowering, Pass: "to-executorch-prim", Why: "SymInt arithmetic becomes executorch_prim ops (ET-NF02); later passes build prim ops themselves"},
	{Stage: StageLowering, Pass: "functionalize-inplace", Why: "in-place ops whose mutation is not graph-visible become functional before fusion and partitioning match functional ops"},
	{Stage: StageLowering, Pass: "loop-carry-copies", Why: "after to-dim-order-ops (its copies are dim-order ops) and functionalize-inplace, before to-out-variants (the copies get planned storage)"},
	{Stage: StageLowering, Pass: "narrow-as-slice-copy", Why: "after to-executorch-prim (it builds prim ends itself) and before xnnpack-partition, so delegated crops see slice_copy"},
	// XNNPACK partitions the edge program.
	{Stage: StageLowering, Pass: "xnnpack-fuse-batch-norm", Backends: []string{"executorch.xnnpack"}, Why: "folds the functional inference batch norm into its convolution or linear before the partitioner claims them"},
	{Stage: StageLowering, Pass: "xnnpack-partition", Backends: []string{"executorch.xnnpack"}, Why: "the support rules are written for edge ops; the regions must hold functional ops, so before to-out-variants (ET-B02)"},
	{Stage: StageLowering, Pass: "decompose-unclaimed", Backends: []string{"executorch.xnnpack"}, Why: "the kept-whole ops no delegate claimed are decomposed as decompose-to-core would have (ET-L01)"},
	{Stage: StageLowering, Pass: "legalize-kernels", Why: "after the partitioners (what a delegate claims needs no kernel): every op left without an ExecuTorch kernel is decomposed or refused (ET-L01)"},
	// to_executorch.
	{Stage: StageLowering, Pass: "fold-constant-views", Why: "copies of constants fold into lifted constants once partitioning is done"},
	{Stage: StageLowering, Pass: "constant-propagation", Why: "after fold-constant-views: views of constants fold cheaper as byte views (off by default)"},
	{Stage: StageLowering, Pass: "scalar-to-tensor", Why: "literals in Tensor slots become 0-dim constants (exir's ScalarToTensorPass); after partitioning (delegates take their scalars as they are) and constant-propagation, before to-out-variants converts the full nodes it builds in regions"},
	{Stage: StageLowering, Pass: "replace-view-copy-with-view", Why: "before to-out-variants, which would give a view_copy a memory.alloc of its own (exir's order)"},
	{Stage: StageLowering, Pass: "to-out-variants", Why: "functional ops become .out variants writing into memory.alloc tensors"},
	{Stage: StageLowering, Pass: "insert-write-back", Why: "mutated buffers and inputs get their copy_ on the out-variant graph"},
	{Stage: StageLowering, Pass: "plan-memory", Why: "last: plans every tensor the earlier passes created (ET-L03)"},
}

func concatRows(parts ...[]Row) []Row {
	var out []Row
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Tables are the default pipelines, one per target, in Targets order.
var Tables = []Table{
	{TargetDynamo, dynamoRows},
	{TargetONNX, concatRows(dynamoRows, onnxRows)},
	{TargetExecuTorch, concatRows(executorchPrepareRows, dynamoRows, executorchRows)},
}

// PassOrder documents the order constraints of the tables; init checks
// each against every backend's pipeline holding both passes.
var PassOrder = []Constraint{
	{"flat-io-names", "apply-dynamic-shapes", "the dynamic-shape spec names inputs by their flat names"},
	{"onnx-node-fixes", "onnx-node-fixes-after-decompose", "the second run repeats the first after decomposition"},
	{"drop-runtime-asserts", "widen-symbol-ranges", "assert bounds reach the Env before heuristic bounds are given"},
	{"cuda-partition", "cuda-device-copies", "the copies are inserted by the partition"},
	{"cuda-device-copies", "to-dim-order-ops", "to-dim-order-ops would turn the copies into CPU-only _to_dim_order_copy"},
	{"openvino-partition", "decompose-to-core", "the regions hold traced ATen ops"},
	{"decompose-to-core", "to-dim-order-ops", "decompositions create _to_copy and clone nodes"},
	{"decompose-to-core", "to-edge-views", "decompositions create views"},
	{"to-edge-views", "propagate-dim-orders", "the view copies' contiguous results are what the dim orders follow"},
	{"propagate-dim-orders", "loop-carry-copies", "the carry copies compare the recomputed dim orders"},
	{"propagate-dim-orders", "xnnpack-partition", "the delegate's inputs carry the recomputed dim orders"},
	{"to-executorch-prim", "narrow-as-slice-copy", "narrow-as-slice-copy builds executorch_prim ends itself"},
	{"to-executorch-prim", "xnnpack-partition", "the support rules are written for edge ops and executorch_prim scalars"},
	{"functionalize-inplace", "xnnpack-fuse-batch-norm", "the fusion matches the functional batch norm"},
	{"narrow-as-slice-copy", "xnnpack-partition", "delegated crops must see slice_copy"},
	{"xnnpack-fuse-batch-norm", "xnnpack-partition", "the fused convolution or linear is what the partitioner claims"},
	{"xnnpack-partition", "decompose-unclaimed", "only the nodes left outside every delegate are decomposed"},
	{"fold-constant-views", "constant-propagation", "views of constants fold cheaper as byte views"},
	{"replace-view-copy-with-view", "to-out-variants", "a view_copy left to to-out-variants gets its own memory.alloc"},
	{"scalar-to-tensor", "to-out-variants", "the full([], v) nodes it builds inside regions need their out variant"},
	{"xnnpack-partition", "to-out-variants", "delegate regions hold functional ops"},
	{"decompose-unclaimed", "to-out-variants", "out variants exist for the core decomposition"},
	{"xnnpack-partition", "legalize-kernels", "nodes a delegate claims need no portable kernel"},
	{"legalize-kernels", "fold-constant-views", "decompositions may build copies of constants"},
	{"legalize-kernels", "to-out-variants", "to-out-variants converts legal ops to their kernels"},
	{"to-out-variants", "insert-write-back", "the write-back copy_ follows the out-variant graph"},
	{"to-out-variants", "plan-memory", "the planner places the memory.alloc tensors"},
	{"insert-write-back", "plan-memory", "the planner sees the write-back copies"},
}

// PatchOrder is the order in which a stage's patch driver applies the
// export's patches (a patch of another stage or backend is simply skipped).
// Every registered patch must be listed. A patch sees the nodes that exist
// when it starts, so a patch whose output another patch targets must come
// first for the second to see it.
var PatchOrder = []PatchRow{
	// ExecuTorch torch-patches.
	{Patch: "split-as-narrows", Why: "CUDA (ET-P01) rewrites every split before unbacked-split-as-narrows looks for unbacked ones"},
	{Patch: "chunk-as-narrows"},
	{Patch: "topk-as-argsort"},
	{Patch: "detach-identity"},
	{Patch: "dropout-identity"},
	{Patch: "bernoulli-as-rand"},
	{Patch: "unbacked-split-as-narrows"},
	{Patch: "argsort-as-topk"},
	{Patch: "unsqueeze-as-reshape"},
	{Patch: "avg-pool2d-as-conv", Why: "before adaptive-avg-pool2d-as-pool: the avg_pool2d that one builds stays a pool on CUDA"},
	{Patch: "pad-negative-as-crop"},
	{Patch: "conv3d-as-conv2d-sum"},
	{Patch: "adaptive-avg-pool2d-as-pool"},
	{Patch: "one-hot-as-compare"},
	{Patch: "reshape-contiguous-input"},
	{Patch: "bucketize-as-compare"},
	{Patch: "varlen-attn-as-masked-sdpa", Why: "before sdpa-for-cuda, which rewrites the masked sdpa this builds"},
	{Patch: "searchsorted-as-compare"},
	{Patch: "sdpa-for-cuda"},
	{Patch: "cummax-as-reduction"},
	{Patch: "cummin-as-reduction"},
	// ONNX torch-patches.
	{Patch: "where-promote"},
	{Patch: "randperm-argsort"},
	{Patch: "histc-float-input"},
	{Patch: "split-symint-narrows"},
	{Patch: "chunk-dynamic-narrows"},
	{Patch: "roll-narrow-cat"},
	{Patch: "bucketize-compare-sum"},
	{Patch: "complex-unsqueeze-real-view"},
	{Patch: "irfft-hermitian-ifft"},
	{Patch: "rms-norm-decompose"},
	{Patch: "complex-exp-euler"},
	{Patch: "masked-scatter-gather"},
	{Patch: "sdpa-safe-softmax"},
	{Patch: "searchsorted-compare-sum"},
	{Patch: "cummax-tril-mask"},
	{Patch: "cummin-tril-mask"},
}

func init() {
	// Like Go's passOrder check: a bad edit of the tables fails every binary
	// linking pm, at once, whatever is registered.
	if err := checkTables(Tables, PassOrder, PatchOrder); err != nil {
		panic(err)
	}
	for _, target := range Targets() {
		if _, ok := tableFor(Tables, target); !ok {
			panic("pm: pipeline tables: no table for target " + target)
		}
	}
}

// cloneTables copies tables deeply, so a catalog's edits stay its own.
func cloneTables(tables []Table) []Table {
	out := make([]Table, len(tables))
	for i, t := range tables {
		out[i] = Table{Target: t.Target, Rows: append([]Row(nil), t.Rows...)}
	}
	return out
}

// tableFor returns target's table.
func tableFor(tables []Table, target string) (Table, bool) {
	for _, t := range tables {
		if t.Target == target {
			return t, true
		}
	}
	return Table{}, false
}

// rowApplies reports whether a row's backend condition admits backend b.
func (r Row) applies(b string) bool { return appliesAny(r.Backends, b) }

// checkTables checks the tables without the registry: one table per
// target; rows with a valid pass name, a stage of the target in stage
// order, known backends that run in the target and a reason; no pass
// twice in one backend's pipeline (a repeatable pass needs distinct
// instances, which the registry checks); every constraint naming passes of
// the tables, holding in every backend's pipeline with both; PatchOrder
// without duplicates.
func checkTables(tables []Table, order []Constraint, patches []PatchRow) error {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	seenTarget := map[string]bool{}
	known := map[string]bool{}
	for _, t := range tables {
		if targetStages(t.Target) == nil {
			add("table for unknown target %q", t.Target)
			continue
		}
		if seenTarget[t.Target] {
			add("two tables for target %s", t.Target)
		}
		seenTarget[t.Target] = true
		last := -1
		for i, r := range t.Rows {
			where := fmt.Sprintf("%s table row %d (%s)", t.Target, i+1, r.Pass)
			known[r.Pass] = true
			if !ValidName(r.Pass) {
				add("%s: bad pass name", where)
			}
			if r.Why == "" {
				add("%s: no Why", where)
			}
			si := StageIndex(t.Target, r.Stage)
			switch {
			case si < 0:
				add("%s: %q is not a stage of target %s", where, r.Stage, t.Target)
			case si < last:
				add("%s: stage %s comes after stage %s", where, r.Stage, targetStages(t.Target)[last].Name)
			default:
				last = si
			}
			for _, b := range r.Backends {
				if !ValidBackend(b) || !contains(targetsOf(b), t.Target) {
					add("%s: backend %q does not run in target %s", where, b, t.Target)
				}
			}
		}
		for _, b := range exportBackends(t.Target) {
			pos := map[string]int{}
			for i, r := range t.Rows {
				if !r.applies(b) {
					continue
				}
				if _, dup := pos[r.Pass]; dup {
					add("%s table: pass %s appears twice for backend %s", t.Target, r.Pass, b)
				}
				pos[r.Pass] = i
			}
			for _, c := range order {
				i, okA := pos[c.Before]
				j, okB := pos[c.After]
				if okA && okB && i > j {
					add("%s table, backend %s: %s must run before %s (%s)", t.Target, b, c.Before, c.After, c.Why)
				}
			}
		}
	}
	for _, c := range order {
		if c.Why == "" || !known[c.Before] || !known[c.After] {
			add("constraint %s before %s: both must be table passes and have a Why", c.Before, c.After)
		}
	}
	seen := map[string]bool{}
	for _, p := range patches {
		if seen[p.Patch] || !ValidName(p.Patch) {
			add("PatchOrder: bad or duplicate patch %q", p.Patch)
		}
		seen[p.Patch] = true
	}
	if len(problems) > 0 {
		return fmt.Errorf("pm: pipeline tables:\n\t%s", strings.Join(problems, "\n\t"))
	}
	return nil
}
