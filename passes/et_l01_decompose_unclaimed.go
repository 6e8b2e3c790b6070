package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// DecomposeUnclaimed decomposes the ops decompose-to-core kept whole for
// the partitioner that the partitioner then left on portable kernels
// (ET-L01).
var DecomposeUnclaimed = pm.RegisterPass(&pm.Pass{
	Name:     etlDecomposeUnclaimedName,
	ID:       "ET-L01",
	Kind:     pm.KindLowering,
	Backends: []string{xnnpackBackend},
	Stage:    pm.StageLowering,
	Required: true,
	Doc: `decompose the kept-whole ops the partitioner did not claim, as decompose-to-core would have

In a delegate's pipeline decompose-to-core leaves the nodes the backend
declared (RegisterEtKeepWhole; XNNPACK: hardswish, when the XNNPACK support
rules accept the node) whole, so the partitioner receives one node instead of
a chain of scalar ops (exir's Partitioner.ops_to_not_decompose in
to_edge_transform_and_lower). A node the partitioner still leaves outside
every delegate — its config excluded with partition-exclude, or released
while partitioning — is decomposed here exactly as decompose-to-core
decomposes it, so the portable part of the program holds core ATen only and
to-out-variants never sees a non-core op. (exir leaves such a node in place
and only warns, in _sanity_check_graph_for_non_decomp_ops.) Delegate regions
are left alone. The statistic "decomposed" counts the nodes rewritten; each
fires on its replacement.`,
	Requires: []pm.Requirement{
		{After: "xnnpack-partition", Why: "only the nodes left outside every delegate are decomposed"},
		{Before: etlOutVariantsName, Why: "out variants exist for the core decomposition, not for every kept-whole op"},
	},
	Run: runDecomposeUnclaimed,
})

const etlDecomposeUnclaimedName = "decompose-unclaimed"

func runDecomposeUnclaimed(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	ops := map[ir.Op]bool{}
	for _, op := range etKeepWholeFor(c).Ops {
		ops[op] = true
	}
	if len(ops) == 0 {
		return pm.Result{}, nil
	}
	n, err := etlApply(p, c, etCoreSet, etlDecomposeUnclaimedName, func(n *ir.Node) bool { return ops[n.Op] })
	if n > 0 {
		c.Stat("decomposed", int64(n))
	}
	return pm.Result{Changed: n > 0}, err
}
