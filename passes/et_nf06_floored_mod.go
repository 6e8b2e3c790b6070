package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

// FixFlooredMod makes modulo by a positive literal floored (ET-NF06).
var FixFlooredMod = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ET-NF06",
	Name:    "fix-floored-mod",
	Backend: pm.BackendExecuTorch,
	Targets: []ir.Op{ir.OpOperatorMod, ir.OpAtenRemainderScalar},
	Doc: `rewrite a % b with a literal b > 0 as ((a % b) + b) % b

Python's % and torch.remainder are floored (the result has the sign of b);
ExecuTorch's prim mod is C's truncated %. With b > 0 the formula gives the
floored result under either semantics. It is skipped when the ranges prove
a >= 0 (both agree), for non-literal or non-positive b, and on the two mods
of an already rewritten pattern.`,
	Fix: fixFlooredMod,
})

var etOpAddScalar = ir.OpAtenAddScalar

func fixFlooredMod(n *ir.Node, c *pm.Ctx) (bool, error) {
	a, bv := n.Args[0], n.Args[1]
	if !etPositiveLiteral(bv) || etFlooredModPart(n) {
		return false, nil
	}
	add := etOpPyAdd
	if n.Op != etOpPyMod {
		t, err := ir.ArgTensor(a, "self")
		if err != nil || !(t.DType.IsSigned() || t.DType.IsFloat()) {
			return false, nil
		}
		add = etOpAddScalar
	} else {
		e, err := ir.SymIntOf(a)
		if err != nil || n.Graph.Program.Env.StaticallyKnownTrue(sym.Ge(e, sym.Const(0))) {
			return false, nil
		}
	}
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = "fix-floored-mod"
	meta := n.Meta.Clone()
	meta.Delete(ir.MetaProvenance)
	b.Meta = &meta
	inner, err := b.Value(n.Op, a, bv)
	if err != nil {
		return false, err
	}
	sum, err := b.Value(add, ir.ValueArg(inner), bv)
	if err != nil {
		return false, err
	}
	outer, err := b.Value(n.Op, ir.ValueArg(sum), bv)
	if err != nil {
		return false, err
	}
	if !ir.TypeEqual(outer.Type, n.Result().Type) {
		return false, n.Errorf("floored mod: rewritten type %s differs from %s", outer.Type, n.Result().Type)
	}
	n.Result().ReplaceAllUsesWith(outer)
	c.Fired(n, "((a % b) + b) % b")
	return true, n.Erase()
}

// etPositiveLiteral reports an int or float literal > 0.
func etPositiveLiteral(a ir.Arg) bool {
	return a.Kind == ir.ArgInt && a.Int > 0 || a.Kind == ir.ArgFloat && a.Float > 0
}

// etFlooredModPart reports whether n is one of the two mods of
// ((a % b) + b) % b: its operand is an add of a same-op mod and b, or its
// only user is such an add feeding a same-op mod.
func etFlooredModPart(n *ir.Node) bool {
	isAddOf := func(x *ir.Node, m *ir.Node) bool {
		return x != nil && (x.Op == etOpPyAdd || x.Op == etOpAddScalar) && len(x.Args) >= 2 &&
			x.Args[0].Kind == ir.ArgValue && x.Args[0].Value.Def == m && x.Args[1].Equal(n.Args[1])
	}
	if a := n.Args[0]; a.Kind == ir.ArgValue && a.Value.Def != nil {
		x := a.Value.Def
		if len(x.Args) > 0 && x.Args[0].Kind == ir.ArgValue && x.Args[0].Value.Def != nil && x.Args[0].Value.Def.Op == n.Op && isAddOf(x, x.Args[0].Value.Def) {
			return true
		}
	}
	users := n.Result().Uses()
	if len(users) != 1 || !isAddOf(users[0], n) {
		return false
	}
	for _, u := range users[0].Result().Uses() {
		if u.Op == n.Op && u.Args[1].Equal(n.Args[1]) {
			return true
		}
	}
	return false
}
