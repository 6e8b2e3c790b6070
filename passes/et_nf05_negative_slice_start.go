package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

// FixNegativeSliceStart makes symbolic negative slice starts absolute (ET-NF05).
var FixNegativeSliceStart = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ET-NF05",
	Name:    "fix-negative-slice-start",
	Backend: pm.BackendExecuTorch,
	Targets: []ir.Op{ir.OpAtenSliceTensor, ir.OpAtenSliceCopyTensor},
	Doc: `rewrite a symbolic slice start that is provably negative as size + start

ExecuTorch's slice kernels take a SymInt start as computed, without
Python's wrap-around, so x[-n:] with a symbolic n reads from a negative
offset. When the ranges prove the start negative it becomes
sym_size(x, dim) + start, wrapped in sym_max(…, 0) unless the ranges also
prove the sum non-negative (torch clamps a start below -size to 0; the
Python fix assumed it could not happen). Literal starts are left alone.`,
	Fix: fixNegativeSliceStart,
})

func fixNegativeSliceStart(n *ir.Node, c *pm.Ctx) (bool, error) {
	self := n.Arg("self")
	t, err := ir.ArgTensor(self, "self")
	if err != nil || t.Rank() == 0 {
		return false, nil
	}
	si := n.Op.ArgIndex("start")
	start := n.Args[si]
	if start.Kind != ir.ArgValue {
		return false, nil
	}
	e, err := ir.SymIntOf(start)
	if err != nil {
		return false, nil
	}
	env := n.Graph.Program.Env
	if !env.StaticallyKnownTrue(sym.Lt(e, sym.Const(0))) {
		return false, nil
	}
	d, err := etNormDim(n.Arg("dim"), t.Rank())
	if err != nil {
		return false, err
	}
	abs := sym.Add(t.Shape[d], e)
	if !env.StaticallyKnownTrue(sym.Ge(abs, sym.Const(0))) {
		abs = sym.Max(abs, sym.Const(0))
	}
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = "fix-negative-slice-start"
	meta := n.Meta.Clone()
	meta.Delete(ir.MetaProvenance)
	b.Meta = &meta
	a, err := etSymArg(b, n, env.Simplify(abs))
	if err != nil {
		return false, err
	}
	n.SetArg(si, a)
	types, err := ir.InferTypes(n)
	if err != nil {
		return false, err
	}
	n.Result().SetType(types[0])
	n.AddProvenance("fix-negative-slice-start")
	c.Fired(n, "start "+e.String()+" -> "+abs.String())
	return true, nil
}
