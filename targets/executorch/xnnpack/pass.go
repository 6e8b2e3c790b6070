package xnnpack

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PartitionPass claims the XNNPACK-supported subgraphs of the lowered
// program (exir's XnnpackPartitioner + to_backend; ET-B02, ET-P16, ET-P38).
var PartitionPass = pm.RegisterPass(&pm.Pass{
	Name:     "xnnpack-partition",
	ID:       "ET-B02",
	Kind:     pm.KindLowering,
	Backends: []string{"executorch.xnnpack"},
	Stage:    pm.StageLowering,
	Doc: `partition the program for XNNPACK: supported nodes become executorch_call_delegate regions

Every node the XNNPACK support rules accept (targets/executorch/xnnpack:
fp32/fp16 tensors of rank ≤ 6, no empty or unbacked sizes, and the per-op
constraints: alpha 1 for add/sub, softmax over the last dim, static weights
for addmm/mm/convolution, 2-D convolution, avg_pool2d without ceil_mode,
mean over dims [2, 3] with keepdim, view_copy with at most one dynamic dim,
squeeze/unsqueeze with any number (ET-P16), prelu on rank-4 inputs only
(ET-P38), cat of any arity (chained Concatenate nodes),
max_pool2d_with_indices with used indices when stride = kernel (argmax
pooling; the window indices are turned into torch's flat indices by
portable ops after the call), and the PT2E quantized patterns: static
qint8 linear/conv/add/sub/mul, dynamically quantized linear with
per-channel int8 or blockwise 4-bit weights, …) is grouped greedily, in graph order,
into maximal convex partitions: a node joins its producers' partitions
unless that creates a path leaving the partition and re-entering it
through an undelegated node. A node stays in its partition only if what
its serialization needs (a quantized pattern's quantize/dequantize nodes, a
linear's weight transpose) is in the same partition or is a constant;
otherwise it is dropped with that reason and the grouping is redone.
Partitions of shape ops alone are left to portable kernels. Each partition becomes one

  %out… = higher_order.executorch_call_delegate(^lowered_module_N, "XnnpackBackend", %in…)

whose region holds the claimed nodes; its operands are the values the
partition reads (constant placeholders included: the serializer bakes them
in as named data), its results the values used after it. Later lowering
passes leave the region alone, and the planner sees one node whose inputs
and outputs are planned tensors.

Option partition-exclude (exir's partition_exclude) lists partitioner config names (AddConfig,
ViewCopyConfig, …; separated by "+" or ",") whose ops stay on portable
kernels; excluding every config is an error (disable the pass instead to
export without delegation). The statistics "partitions", "delegated-nodes"
and "rejected" count what happened; each partition fires on its call node,
and --debug prints every rejected node with its reason.`,
	Options: []pm.OptionSpec{{Name: "partition-exclude", Doc: "partitioner configs to leave out, separated by + or ,", Default: "",
		Check: func(v string) error {
			known := map[string]bool{}
			for _, c := range Configs() {
				known[c] = true
			}
			for _, e := range splitConfigs(v) {
				if !known[e] {
					return fmt.Errorf("unknown config %q (configs: %s)", e, strings.Join(Configs(), ", "))
				}
			}
			return nil
		}}},
	Requires: []pm.Requirement{
		{After: "to-executorch-prim", Why: "the support rules are written for edge ops (permute_copy, view_copy, addmm) and executorch_prim scalars"},
		{Before: "to-out-variants", Why: "the region must hold functional ops; out variants and memory.alloc belong to the portable part"},
	},
	Run: runXNNPACKPartition,
})

func splitConfigs(v string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == '+' || r == ',' || r == ' ' }) {
		out = append(out, f)
	}
	return out
}

func runXNNPACKPartition(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	res, err := Run(p, Options{Exclude: splitConfigs(c.Option("partition-exclude"))})
	if err != nil {
		return pm.Result{}, err
	}
	delegated := 0
	for _, pt := range res.Partitions {
		delegated += pt.Nodes
		c.Fired(pt.Call, fmt.Sprintf("%d nodes delegated to XNNPACK", pt.Nodes))
	}
	for _, r := range res.Rejected {
		c.Debugf(r.Node, "not delegated: %s", r.Reason)
	}
	c.Stat("partitions", int64(len(res.Partitions)))
	c.Stat("delegated-nodes", int64(delegated))
	c.Stat("rejected", int64(len(res.Rejected)))
	return pm.Result{Changed: len(res.Partitions) > 0}, nil
}
