package onnx

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// ONNX-TR11: higher_order.associative_scan, only for the first-order SSM
// combine
//
//	combine((a_l, b_l), (a_r, b_r)) = (a_l·a_r, a_r·b_l + b_r)
//
// which is the recurrence h_t = a_t·h_{t-1} + b_t. It lowers to a Loop with a
// dynamic trip count (the leading dim of xs, the scan axis: torch moves the
// user's dim there and flips around the op for reverse=True, so the op itself
// always scans forward over dim 0). Any other combine region is rejected.

// ssmCombine checks that region f is exactly the first-order SSM combine
// over inputs (a_l, b_l, a_r, b_r); it explains the first mismatch.
func ssmCombine(f *ir.Graph) error {
	if len(f.Inputs) != 4 {
		return fmt.Errorf("combine_fn has %d inputs, want 4 (a_l, b_l, a_r, b_r)", len(f.Inputs))
	}
	al, bl, ar, br := f.Inputs[0], f.Inputs[1], f.Inputs[2], f.Inputs[3]
	outs := f.Outputs()
	if len(outs) != 2 || outs[0].Kind != ir.ArgValue || outs[1].Kind != ir.ArgValue {
		return fmt.Errorf("combine_fn must return two tensors")
	}
	var body []*ir.Node
	for _, n := range f.Nodes() {
		if !n.IsReturn() {
			body = append(body, n)
		}
	}
	if len(body) != 3 {
		return fmt.Errorf("combine_fn has %d nodes, want 3 (mul, mul, add)", len(body))
	}
	// binary reports whether v = op(x, y) in either operand order (with
	// alpha absent or 1 for add), returning the defining node.
	binary := func(v *ir.Value, op ir.Op, x, y *ir.Value) bool {
		n := v.Def
		if n == nil || n.Op != op || len(n.Args) < 2 || len(v.Def.Results) != 1 {
			return false
		}
		for _, a := range n.Args[2:] {
			if a.IsNone() {
				continue
			}
			// The only further argument of mul/add.Tensor is add's alpha.
			if (a.Kind == ir.ArgInt && a.Int == 1) || (a.Kind == ir.ArgFloat && a.Float == 1) {
				continue
			}
			return false
		}
		p, q := n.Args[0], n.Args[1]
		if p.Kind != ir.ArgValue || q.Kind != ir.ArgValue {
			return false
		}
		return (p.Value == x && q.Value == y) || (p.Value == y && q.Value == x)
	}
	if !binary(outs[0].Value, ir.OpAtenMulTensor, al, ar) {
		return fmt.Errorf("combine_fn output 0 is not a_l·a_r (aten.mul.Tensor of inputs 0 and 2)")
	}
	add := outs[1].Value.Def
	if add == nil || add.Op != ir.OpAtenAddTensor || len(add.Args) < 2 || add.Args[0].Kind != ir.ArgValue || add.Args[1].Kind != ir.ArgValue {
		return fmt.Errorf("combine_fn output 1 is not a_r·b_l + b_r (aten.add.Tensor)")
	}
	x, y := add.Args[0].Value, add.Args[1].Value
	if y == br {
		x, y = y, x
	}
	if x != br || y.Def == nil || !binary(y, ir.OpAtenMulTensor, ar, bl) || !binary(outs[1].Value, ir.OpAtenAddTensor, x, y) {
		return fmt.Errorf("combine_fn output 1 is not a_r·b_l + b_r (aten.add.Tensor of input 3 and aten.mul.Tensor of inputs 2 and 1)")
	}
	return nil
}

func lowerAssociativeScan(b *Builder, n *ir.Node) error {
	r := reader(b, n)
	fa := r.Arg("combine_fn")
	xs := r.Arg("xs")
	extra := r.Arg("additional_inputs")
	if r.err != nil {
		return r.err
	}
	if fa.Kind != ir.ArgGraph || fa.Graph == nil {
		return fmt.Errorf("associative_scan: combine_fn is not a region")
	}
	if err := ssmCombine(fa.Graph); err != nil {
		return fmt.Errorf("associative_scan %%%s: only the first-order SSM combine (a_l·a_r, a_r·b_l + b_r) is translatable to ONNX: %v", n.Results[0].Name, err)
	}
	if extra.Kind == ir.ArgList && len(extra.List) > 0 {
		return fmt.Errorf("associative_scan %%%s: additional_inputs are not supported by the SSM translation", n.Results[0].Name)
	}
	if xs.Kind != ir.ArgList || len(xs.List) != 2 || len(n.Results) != 2 {
		return fmt.Errorf("associative_scan %%%s: want xs = [a, b] and two results", n.Results[0].Name)
	}
	var in [2]string
	var types [2]*ir.TensorType
	for i, el := range xs.List {
		if el.Kind != ir.ArgValue || el.Value.Tensor() == nil {
			return fmt.Errorf("associative_scan: xs[%d] is not a tensor", i)
		}
		rt := n.Results[i].Tensor()
		if rt == nil {
			return fmt.Errorf("associative_scan: result %d is not a tensor", i)
		}
		types[i] = rt
		s, err := b.Value(el.Value)
		if err != nil {
			return err
		}
		if in[i], err = b.CastTo(s, el.Value.Tensor().DType, rt.DType); err != nil {
			return err
		}
		if rt.Rank() < 1 {
			return fmt.Errorf("associative_scan: xs[%d] has rank 0; the scan needs a leading dim", i)
		}
	}
	// The per-step values have the shapes of xs without the leading dim; the
	// combine is elementwise with broadcasting, so both operands are first
	// expanded to the results' shapes.
	for i := range in {
		shape, err := b.ShapeTensor(types[i].Shape)
		if err != nil {
			return err
		}
		in[i] = b.Tmp("Expand", []string{in[i], shape})
	}
	trip := b.Tmp("Gather", []string{b.Tmp("Shape", []string{in[0]}), b.I64(0)}, AttrInt("axis", 0))
	a0 := b.Tmp("Gather", []string{in[0], b.I64(0)}, AttrInt("axis", 0))
	b0 := b.Tmp("Gather", []string{in[1], b.I64(0)}, AttrInt("axis", 0))
	ra, rb := types[0].Rank()-1, types[1].Rank()-1
	lb, err := b.NewLoop("assoc_scan", LoopVar(types[0].DType, ra), LoopVar(types[1].DType, rb))
	if err != nil {
		return err
	}
	// Step i: (a, h) ← (a·a_i, a_i·h + b_i); step 0 is (a_0, b_0) exactly.
	ai := lb.Tmp("Gather", []string{in[0], lb.Iter}, AttrInt("axis", 0))
	bi := lb.Tmp("Gather", []string{in[1], lb.Iter}, AttrInt("axis", 0))
	first := lb.Tmp("Equal", []string{lb.Iter, lb.I64(0)})
	an := lb.Tmp("Mul", []string{lb.Carried[0], ai})
	bn := lb.Tmp("Add", []string{lb.Tmp("Mul", []string{ai, lb.Carried[1]}), bi})
	an = lb.Tmp("Where", []string{first, ai, an})
	bn = lb.Tmp("Where", []string{first, bi, bn})
	outs, err := lb.Build(trip, []string{a0, b0}, []string{an, bn}, []string{an, bn},
		[]loopVar{LoopVar(types[0].DType, ra), LoopVar(types[1].DType, rb)})
	if err != nil {
		return err
	}
	b.Bind(n.Results[0], outs[2])
	b.Bind(n.Results[1], outs[3])
	return nil
}

func init() {
	translation("ONNX-TR11", "translate-associative-scan",
		"associative_scan of the first-order SSM combine as a Loop\n\nOnly the combine (a_l·a_r, a_r·b_l + b_r), i.e. h_t = a_t·h_{t-1} + b_t, is recognised (exactly: mul, mul, add of the region inputs, either operand order); it lowers to a Loop over the leading (scan) dim with a dynamic trip count, carrying (a, h) and stacking both as scan outputs. Any other combine fails naming the node.",
		lowerAssociativeScan, ir.OpHigherOrderAssociativeScan)
}
