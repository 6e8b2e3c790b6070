package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// FixMaxValuesKeepdim rewrites values-only max.dim as amax (ET-NF07).
var FixMaxValuesKeepdim = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ET-NF07",
	Name:    "fix-max-values-keepdim",
	Backend: pm.BackendExecuTorch,
	Targets: []ir.Op{ir.OpAtenMaxDim},
	Doc: `rewrite max.dim whose indices are unused as amax(keepdim=True) and squeeze

A max.dim whose indices nobody reads is a plain reduction; XNNPACK lowers
amax with keepdim=True but not the two-result max.dim. The values become
amax(x, [dim], keepdim=True), squeezed at dim unless the node kept it.
This fix also owns ET-NF01's rule for max.dim (the registry forbids two
fixes of one backend on one op): a negative dim becomes rank + dim first,
also when the indices are used and the node stays.`,
	Fix: fixMaxValuesKeepdim,
})

var etOpSqueezeDims = ir.OpAtenSqueezeDims

func fixMaxValuesKeepdim(n *ir.Node, c *pm.Ctx) (bool, error) {
	self := n.Arg("self")
	t, err := ir.ArgTensor(self, "self")
	if err != nil {
		return false, nil
	}
	di := n.Op.ArgIndex("dim")
	dim, normalized := normalizeDims(n.Args[di], int64(t.Rank()))
	if n.Results[1].NumUses() > 0 || t.Rank() == 0 {
		if !normalized {
			return false, nil
		}
		old := n.Args[di]
		n.SetArg(di, dim)
		n.AddProvenance("fix-max-values-keepdim")
		c.Fired(n, "dim "+old.String()+" -> "+dim.String()+" (ET-NF01)")
		return true, nil
	}
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = "fix-max-values-keepdim"
	meta := n.Meta.Clone()
	meta.Delete(ir.MetaProvenance)
	b.Meta = &meta
	v, err := b.Value(etOpAmax, self, ir.ListArg(dim), ir.BoolArg(true))
	if err != nil {
		return false, err
	}
	if !n.Arg("keepdim").Bool() {
		v, err = b.Value(etOpSqueezeDims, ir.ValueArg(v), ir.ListArg(dim))
		if err != nil {
			return false, err
		}
	}
	if !ir.TypeEqual(v.Type, n.Results[0].Type) {
		return false, n.Errorf("max values as amax: type %s differs from %s", v.Type, n.Results[0].Type)
	}
	n.Results[0].ReplaceAllUsesWith(v)
	c.Fired(n, "amax over dim "+dim.String())
	return true, n.Erase()
}
