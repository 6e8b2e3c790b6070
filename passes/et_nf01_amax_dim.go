package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// FixAmaxDim makes reduction dims of amax non-negative (ET-NF01); for
// max.dim the same normalization is done by FixMaxValuesKeepdim (ET-NF07),
// since node-fix targets of one backend may not overlap.
var FixAmaxDim = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ET-NF01",
	Name:    "fix-amax-dim",
	Backend: pm.BackendExecuTorch,
	Targets: []ir.Op{ir.OpAtenAmax},
	Doc: `rewrite negative reduction dims of amax as rank + dim

XNNPACK's max-dim lowering compares the dim against 2 or 3 literally, so
-1 on a rank-4 input is not recognised. The rewrite is exact. The Python
fix also covered max.dim; here fix-max-values-keepdim (ET-NF07), which
owns max.dim, normalizes its dim first, because the registry does not let
two fixes of one backend target the same op.`,
	Fix: fixAmaxDim,
})

func fixAmaxDim(n *ir.Node, c *pm.Ctx) (bool, error) {
	self := n.Arg("self")
	if self.Kind != ir.ArgValue || self.Value.Tensor() == nil {
		return false, nil
	}
	rank := int64(self.Value.Tensor().Rank())
	i := n.Op.ArgIndex("dim")
	dim := n.Args[i]
	fixed, changed := normalizeDims(dim, rank)
	if !changed {
		return false, nil
	}
	n.SetArg(i, fixed)
	n.AddProvenance("fix-amax-dim")
	c.MarkChanged()
	c.Fired(n, "dim "+dim.String()+" -> "+fixed.String())
	// The node stays (it was rewritten in place): report it consumed so no
	// other fix rewrites it again.
	return true, nil
}

// normalizeDims maps negative int dims (a literal or a list) to rank + dim.
func normalizeDims(a ir.Arg, rank int64) (ir.Arg, bool) {
	switch a.Kind {
	case ir.ArgInt:
		if a.Int < 0 && rank > 0 {
			return ir.IntArg(a.Int + rank), true
		}
	case ir.ArgList:
		out := make([]ir.Arg, len(a.List))
		changed := false
		for i, e := range a.List {
			var c bool
			out[i], c = normalizeDims(e, rank)
			changed = changed || c
		}
		return ir.ListArg(out...), changed
	}
	return a, false
}
