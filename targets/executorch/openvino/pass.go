package openvino

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PartitionPass takes the OpenVINO backend's partitions before the
// ExecuTorch lowering (ET-B06): the regions OpenVINO's frontend converts
// must hold plain ATen ops, not edge ops, out variants or memory.alloc.
// It is registered here, next to the support rules; its place in the
// pipeline is its row in pm/pipelines.go.
var PartitionPass = pm.RegisterPass(&pm.Pass{
	Name:     "openvino-partition",
	ID:       "ET-B06",
	Kind:     pm.KindLowering,
	Backends: []string{"executorch.openvino"},
	Stage:    pm.StageLowering,
	Required: true,
	Doc: `partition the program for OpenVINO: supported nodes become OpenvinoBackend executorch_call_delegate regions

A node is claimed when its op is on the partitioner's op list (a
subset of the OperatorSupport dict of OpenVINO's PyTorch frontend that
ExecuTorch's partitioner consults: linear, addmm, mm, bmm, convolution,
batch and layer norm, softmax, pooling, element-wise arithmetic and
activations, comparisons, reductions, view, permute, slice, cat, split,
index.Tensor, factories, _to_copy, sym_size and SymInt arithmetic, …;
targets/executorch/openvino.SupportedOps) and every value it reads and
writes is a SymInt or a tensor on the CPU of a dtype OpenVINO's CPU plugin
runs (f32, f16, bf16, i64, i32, i8, u8, bool) whose dims are positive
constants or symbolic sizes over backed symbols with a finite upper bound
(the delegate's boundary tensors are then DYNAMIC_BOUND, planned at those
bounds, and the region's .pt2 carries the symbols and their ranges);
unbounded or data-dependent dims, control flow and everything else stay
on portable kernels. Claimed nodes are grouped greedily, in graph order, into
maximal convex groups (several partitions are allowed; single-node
partitions are kept, as ExecuTorch's OpenvinoPartitioner allows them); a
node that would pass a non-contiguous tensor across a group's boundary
stays portable (the runtime hands OpenVINO raw buffers), and so does one
that would pass a SymInt across it (the delegate takes tensors only).
Each group becomes one

  %out… = higher_order.executorch_call_delegate(^openvino_partition_N, "OpenvinoBackend", %in…)

whose region holds the claimed nodes unchanged (plain ATen, written as a
standalone .pt2 for the external compile step); its operands are the
values the group reads (constant placeholders included: the compiled
model holds their bytes), its results the values used after it, with
their names. The call's metadata "compile_spec.device" is "CPU"
(OpenvinoPartitioner([CompileSpec("device", b"CPU")])). A program that
already has OpenvinoBackend calls is left alone. Later lowering passes
skip the regions. Statistics "partitions", "delegated-nodes", "rejected";
each partition fires on its call, and --debug prints every rejected node
with its reason.`,
	Requires: []pm.Requirement{
		{Before: "decompose-to-core", Why: "the regions must hold the traced ATen ops that OpenVINO's frontend converts, not their core decompositions or edge ops"},
	},
	Run: runOpenVINOPartition,
})

func runOpenVINOPartition(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	res, err := Partition(p)
	if err != nil {
		return pm.Result{}, err
	}
	if res.Existing {
		return pm.Result{}, nil
	}
	for _, r := range res.Rejected {
		c.Debugf(r.Node, "stays on portable kernels: %s", r.Reason)
	}
	for _, call := range res.Calls {
		c.Fired(call, fmt.Sprintf("%d nodes delegated to OpenvinoBackend", len(call.Args[0].Graph.Nodes())))
	}
	c.Stat("partitions", int64(len(res.Calls)))
	c.Stat("delegated-nodes", int64(res.Nodes))
	c.Stat("rejected", int64(len(res.Rejected)))
	return pm.Result{Changed: len(res.Calls) > 0}, nil
}
