package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/rewrite"
)

// A 3-d convolution as one 2-d convolution (ET-L01): the portable
// convolution.out takes 3-D and 4-D inputs only, so a program that already
// holds aten.convolution with 5-D operands (a conv3d after
// run_decompositions; ET-P21 only sees aten.conv3d) is rewritten. The
// pattern is in decompose-to-core's set too, so in the XNNPACK pipeline the
// partitioner already sees the 2-d convolution and the permutes and views
// around it (the convolution itself stays portable while its weight is a
// view_copy of a parameter: XNNPACK wants a constant weight); legalize-kernels
// rewrites any that remain.

func init() {
	pat := etDecomp("convolution-3d", ir.OpAtenConvolution, etlConv3d)
	etDecompositions = append(etDecompositions, pat)
	etDecompositionSet = rewrite.MustSet(etDecompositions...)
	etCorePatterns = append(etCorePatterns, pat)
	etCoreSet = rewrite.MustSet(etCorePatterns...)
}

// etlKernelRefuses reports whether the portable kernel of n's op refuses
// n's operands: convolution.out takes 1-d and 2-d convolutions only.
func etlKernelRefuses(n *ir.Node) bool {
	if n.Op != ir.OpAtenConvolution || len(n.Args) == 0 {
		return false
	}
	t := n.Args[0].Value.Tensor()
	return t != nil && t.Rank() == 5
}

// convolution(x, w, bias, s, p, d, transposed=False, _, g) over a static
// (N, C, D, H, W) input and an (O, C/g, kD, kH, kW) weight → for every
// kernel depth kd the frames kd·dD, kd·dD + sD, … (Do of them, after
// zero-padding D by pD) are sliced and stacked as a new axis after C,
// giving (N, C, Do, kD, H, W); that is permuted to (N, Do, C, kD, H, W)
// and viewed as the 2-d batch (N·Do, C·kD, H, W). The weight viewed as
// (O, C/g·kD, kH, kW) keeps every group's channels together (C/g·kD
// each), so one convolution (H and W stride, padding and dilation, groups
// g, the bias once) computes every output frame; the result is viewed as
// (N, Do, O, Ho, Wo) and permuted back to (N, O, Do, Ho, Wo). The frames
// are copied kD times (kD·N·C·Do·H·W elements). Transposed convolutions
// and symbolic shapes other than the batch are left (no decomposition);
// a symbolic batch is spelled -1 in the views.
func etlConv3d(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	if !etlKernelRefuses(n) {
		return nil, nil
	}
	x, err1 := ir.ArgTensor(n.Arg("input"), "input")
	w, err2 := ir.ArgTensor(n.Arg("weight"), "weight")
	if err1 != nil || err2 != nil {
		return nil, nil
	}
	X, ok1 := etlConstShapeBut0(x)
	Wt, ok2 := etlConstShape(w)
	Y, ok3 := etlConstShapeBut0(n.Result().Tensor())
	s, ok4 := etIntTuple(n.Arg("stride"), 3, []int64{1, 1, 1})
	p, ok5 := etIntTuple(n.Arg("padding"), 3, []int64{0, 0, 0})
	d, ok6 := etIntTuple(n.Arg("dilation"), 3, []int64{1, 1, 1})
	tr, g := n.Arg("transposed"), n.Arg("groups")
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || len(Wt) != 5 || len(Y) != 5 || tr.Kind != ir.ArgBool || tr.Bool() || g.Kind != ir.ArgInt {
		return nil, nil
	}
	N, C, H, W := X[0], X[1], X[3], X[4]
	O, kD := Wt[0], Wt[2]
	Do, Ho, Wo := Y[2], Y[3], Y[4]
	if N == 0 || C <= 0 || Do <= 0 || kD <= 0 || g.Int <= 0 || C%g.Int != 0 || Wt[1]*g.Int != C {
		return nil, nil
	}
	xv := n.Arg("input").Value
	var err error
	if p[0] != 0 {
		if xv, err = b.Value(ir.OpAtenConstantPadNd, ir.ValueArg(xv), ir.IntsArg(0, 0, 0, 0, p[0], p[0]), ir.IntArg(0)); err != nil {
			return nil, err
		}
	}
	var frames []*ir.Value
	for kd := int64(0); kd < kD; kd++ {
		start := kd * d[0]
		sl, err := b.Value(etlOpSliceCopy, ir.ValueArg(xv), ir.IntArg(2), ir.IntArg(start), ir.IntArg(start+(Do-1)*s[0]+1), ir.IntArg(s[0]))
		if err != nil {
			return nil, err
		}
		u, err := b.Value(etlOpUnsqueeze, ir.ValueArg(sl), ir.IntArg(3))
		if err != nil {
			return nil, err
		}
		frames = append(frames, u)
	}
	st := frames[0]
	if kD > 1 {
		if st, err = b.Value(ir.OpAtenCat, ir.ValuesArg(frames...), ir.IntArg(3)); err != nil {
			return nil, err
		}
	}
	pm, err := b.Value(ir.OpAtenPermuteCopy, ir.ValueArg(st), ir.IntsArg(0, 2, 1, 3, 4, 5))
	if err != nil {
		return nil, err
	}
	fold := N * Do
	if N < 0 {
		fold = -1 // a symbolic batch: the view infers it
	}
	f, err := etlView(b, ir.ValueArg(pm), fold, C*kD, H, W)
	if err != nil {
		return nil, err
	}
	wv, err := etlView(b, n.Arg("weight"), O, Wt[1]*kD, Wt[3], Wt[4])
	if err != nil {
		return nil, err
	}
	y, err := b.Value(ir.OpAtenConvolution, ir.ValueArg(f), ir.ValueArg(wv), n.Arg("bias"), ir.IntsArg(s[1], s[2]), ir.IntsArg(p[1], p[2]),
		ir.IntsArg(d[1], d[2]), ir.BoolArg(false), ir.IntsArg(0, 0), g)
	if err != nil {
		return nil, err
	}
	y5, err := etlView(b, ir.ValueArg(y), N, Do, O, Ho, Wo)
	if err != nil {
		return nil, err
	}
	return b.Value(ir.OpAtenPermuteCopy, ir.ValueArg(y5), ir.IntsArg(0, 2, 1, 3, 4))
}

// etlConstShapeBut0 is t's shape with a symbolic dim 0 as -1 (every other
// dim static).
func etlConstShapeBut0(t *ir.TensorType) ([]int64, bool) {
	if t == nil || t.Rank() == 0 || !etStaticFrom(t, 1) {
		return nil, false
	}
	out := make([]int64, t.Rank())
	out[0] = -1
	if c, ok := t.Shape[0].Const(); ok {
		out[0] = c
	}
	for i := 1; i < len(out); i++ {
		out[i] = etDim(t, i)
	}
	return out, true
}
