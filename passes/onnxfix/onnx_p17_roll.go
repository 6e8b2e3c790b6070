package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// PatchONNXRoll rewrites roll along explicit dims as narrow + cat (ONNX-P17).
var PatchONNXRoll = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P17",
	Name:    "roll-narrow-cat",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.roll", "torch.Tensor.roll"},
	Doc: `rewrite roll along explicit dims as cat(narrow(tail), narrow(head))

torchlib's roll lowering produces Slice nodes that onnxruntime's shape
inference rejects (Gemma4-Unified). For roll(x, shifts, dims) with one
shift per dim, the patch rolls one dim at a time: with n the dim size and
k = shift mod n (Python modulo, so negative shifts work), the result is
cat([narrow(x, d, n-k, k), narrow(x, d, 0, n-k)], d), which is torch's
out[i] = x[(i - shift) mod n]. A shift that is a static multiple of a static
size is an identity for that dim. Symbolic sizes and shifts become SymInt
arithmetic; a symbolic size must be provably >= 1 (the modulo would divide
by zero otherwise), or the node is left alone. roll without dims (which
rolls the flattened tensor) and mismatched shifts/dims are left to the
original lowering, as in the Python patch.`,
	Rewrite: rewriteRoll,
})

func rewriteRoll(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	xa := n.Arg("self")
	if xa.Kind != ir.ArgValue || xa.Value.Tensor() == nil {
		return nil, nil
	}
	shifts, dims := n.Arg("shifts"), n.Arg("dims")
	if shifts.Kind != ir.ArgList || dims.Kind != ir.ArgList || len(dims.List) == 0 || len(shifts.List) != len(dims.List) {
		return nil, nil
	}
	xt := xa.Value.Tensor()
	type step struct {
		d     int
		shift ir.Arg
	}
	var steps []step
	for i, da := range dims.List {
		if da.Kind != ir.ArgInt {
			return nil, nil
		}
		d, ok := edit.NormDimLit(da.Int, xt.Rank())
		if !ok {
			return nil, n.Errorf("roll: dim %d out of range for %s", da.Int, xt)
		}
		size := xt.Shape[d]
		if _, static := size.Const(); !static && !edit.Known(n, sym.Ge(size, sym.Const(1))) {
			return nil, nil // a size that may be 0: leave the node
		}
		if sz, ok := size.Const(); ok && sz == 0 {
			continue
		}
		if s, ok := edit.IntLit(shifts.List[i]); ok {
			if sz, ok := size.Const(); ok && s%sz == 0 {
				continue
			}
		}
		steps = append(steps, step{d, shifts.List[i]})
	}
	t := edit.NewBuilder(b, n)
	x := xa.Value
	if len(steps) == 0 {
		return nil, nil // every shift is a whole turn: the backend's roll is exact
	}
	for _, s := range steps {
		size := t.Dim(x, s.d)
		k := t.RollAmount(n, s.shift, size)
		head := t.Sub(size, k)
		tail := t.V(edit.OpNarrow, ir.ValueArg(x), ir.IntArg(int64(s.d)), head, k)
		front := t.V(edit.OpNarrow, ir.ValueArg(x), ir.IntArg(int64(s.d)), ir.IntArg(0), head)
		x = t.V(edit.OpCat, ir.ValuesArg(tail, front), ir.IntArg(int64(s.d)))
		if t.Err != nil {
			return nil, t.Err
		}
	}
	c.Fired(n, "rolled "+dims.String()+" by "+shifts.String())
	return []*ir.Value{x}, nil
}
