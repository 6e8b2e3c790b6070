package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

// PatchPadCrop splits negative or symbolic pads into a pad and crops (ET-P20).
var PatchPadCrop = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P20",
	Name:    "pad-negative-as-crop",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.nn.functional.pad"},
	Doc: `rewrite constant pads that may be negative as pad(max(p, 0)) plus narrows

ExecuTorch's constant_pad_nd kernel rejects negative pads, and a SymInt pad
may be negative at run time. Each pad p becomes max(p, 0) (folded for
literals, torch.sym_max for SymInts whose sign the ranges do not prove),
then every dim with a possibly negative side is cropped with
narrow(dim, max(-left, 0), size) where size is the dim of the original
result. Only constant-mode pads are rewritten; reflect and replicate pads
with negative amounts are errors in torch already.`,
	Rewrite: etRewritePadCrop,
})

var etOpConstantPad = ir.OpAtenConstantPadNd

func etRewritePadCrop(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	if i := n.Op.ArgIndex("mode"); i >= 0 && n.Args[i].Str != "constant" {
		return nil, nil
	}
	self := n.Arg("self")
	t, err := ir.ArgTensor(self, "self")
	if err != nil {
		return nil, nil
	}
	out := n.Result().Tensor()
	pad := n.Arg("pad")
	if pad.Kind != ir.ArgList || len(pad.List)%2 != 0 || len(pad.List)/2 > t.Rank() || out == nil {
		return nil, nil
	}
	env := n.Graph.Program.Env
	exprs := make([]sym.Expr, len(pad.List))
	need := false
	for i, a := range pad.List {
		e, err := ir.SymIntOf(a)
		if err != nil {
			return nil, nil
		}
		exprs[i] = e
		if !env.StaticallyKnownTrue(sym.Ge(e, sym.Const(0))) {
			need = true
		}
	}
	if !need {
		return nil, nil
	}
	pos := make([]ir.Arg, len(exprs))
	for i, e := range exprs {
		if env.StaticallyKnownTrue(sym.Ge(e, sym.Const(0))) {
			pos[i] = pad.List[i]
			continue
		}
		a, err := etSymArg(b, n, env.Simplify(sym.Max(e, sym.Const(0))))
		if err != nil {
			return nil, err
		}
		pos[i] = a
	}
	var value ir.Arg
	if n.Op == etOpConstantPad {
		value = n.Arg("value")
	} else if v := n.Arg("value"); !v.IsNone() {
		value = v
	} else {
		value = ir.IntArg(0)
	}
	cur, err := b.Value(etOpConstantPad, self, ir.ListArg(pos...), value)
	if err != nil {
		return nil, err
	}
	for j := 0; j < len(exprs)/2; j++ {
		left, right := exprs[2*j], exprs[2*j+1]
		if env.StaticallyKnownTrue(sym.Ge(left, sym.Const(0))) && env.StaticallyKnownTrue(sym.Ge(right, sym.Const(0))) {
			continue
		}
		d := t.Rank() - 1 - j
		start, err := etSymArg(b, n, env.Simplify(sym.Max(sym.Neg(left), sym.Const(0))))
		if err != nil {
			return nil, err
		}
		length, err := etSymArg(b, n, out.Shape[d])
		if err != nil {
			return nil, err
		}
		cur, err = b.Value(etOpNarrow, ir.ValueArg(cur), ir.IntArg(int64(d)), start, length)
		if err != nil {
			return nil, err
		}
	}
	if !etSameTypes(n, []*ir.Value{cur}) {
		return nil, nil
	}
	c.Fired(n, "pad "+ir.ListArg(pos...).String()+" and crop")
	return []*ir.Value{cur}, nil
}
