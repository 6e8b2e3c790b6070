package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/rewrite"
)

// The 3-d pools as two 2-d pools (legalize-kernels, ET-L01): ExecuTorch's
// portable library has avg_pool2d, _adaptive_avg_pool2d and
// max_pool2d_with_indices but no 3-d pool. A box pool over (D, H, W) is
// separable: stage 1 pools H and W of the input viewed as
// (1, lead·D, H, W) (lead = N·C, or C unbatched), stage 2 pools D of the
// result viewed as (1, lead, D, Ho·Wo) with a (kD, 1) window, and the
// result is viewed back as (…, Do, Ho, Wo). D, H and W must be static;
// one symbolic leading dim is carried through the views as -1.

var (
	etlOpAvgPool2d    = ir.OpAtenAvgPool2d
	etlOpAdaptive2d   = ir.OpAten_AdaptiveAvgPool2d
	etlOpDivScalarMod = ir.OpAtenDivScalarMode
)

func init() {
	etDecompositions = append(etDecompositions,
		etDecomp("avg-pool3d", ir.OpAtenAvgPool3d, etlAvgPool3d),
		etDecomp("adaptive-avg-pool3d", ir.OpAten_AdaptiveAvgPool3d, etlAdaptiveAvgPool3d),
		&rewrite.Pattern{Name: "max-pool3d-with-indices", Root: ir.OpAtenMaxPool3dWithIndices, Benefit: 1, Rewrite: etlMaxPool3d},
	)
	etDecompositionSet = rewrite.MustSet(etDecompositions...)
}

// etlPool3d is a 3-d pool's input and output geometry: D, H, W and the
// pooled sizes static, the leading (batch and channel) dims possibly
// symbolic.
type etlPool3d struct {
	lead       sym.Expr // the product of the input's dims before D
	d, h, w    int64
	out        []sym.Expr // the result's shape
	od, oh, ow int64
}

// etlPool3dGeom reads n's (N, C, D, H, W) or (C, D, H, W) input and its
// first result; ok is false for symbolic pooled dims or empty shapes.
func etlPool3dGeom(n *ir.Node) (g etlPool3d, ok bool) {
	t, err := ir.ArgTensor(n.Arg("self"), "self")
	out := n.Results[0].Tensor()
	if err != nil || out == nil || (t.Rank() != 4 && t.Rank() != 5) || out.Rank() != t.Rank() {
		return g, false
	}
	r := t.Rank()
	if !etStaticFrom(t, r-3) || !etStaticFrom(out, r-3) {
		return g, false
	}
	g.lead = sym.Const(1)
	symbolic := 0
	for i := 0; i < r-3; i++ {
		g.lead = sym.Mul(g.lead, t.Shape[i])
		c, isConst := t.Shape[i].Const()
		if isConst && c <= 0 {
			return g, false
		}
		if !isConst {
			symbolic++
		}
	}
	if symbolic > 1 {
		return g, false // the views spell one symbolic dim as -1
	}
	g.d, g.h, g.w = etDim(t, r-3), etDim(t, r-2), etDim(t, r-1)
	g.out = append(g.out, out.Shape...)
	g.od, g.oh, g.ow = etDim(out, r-3), etDim(out, r-2), etDim(out, r-1)
	for _, v := range []int64{g.d, g.h, g.w, g.od, g.oh, g.ow} {
		if v <= 0 {
			return g, false
		}
	}
	return g, true
}

// view builds view_copy(a, [1, lead·m, dims...]) when m > 0, else
// view_copy(a, [1, lead, dims...]); a symbolic lead is spelled -1 (the
// view infers it: legalize-kernels runs after to-executorch-prim, so it
// builds no SymInt arithmetic).
func (g etlPool3d) view(b *ir.Builder, a ir.Arg, m int64, dims ...int64) (*ir.Value, error) {
	c, ok := g.lead.Const()
	switch {
	case !ok:
		c = -1
	case m > 0:
		c *= m
	}
	return etlView(b, a, append([]int64{1, c}, dims...)...)
}

// viewTo builds view_copy(a, shape): at most one symbolic dim, spelled -1.
func (g etlPool3d) viewTo(b *ir.Builder, a ir.Arg, shape []sym.Expr) (*ir.Value, error) {
	dims := make([]int64, len(shape))
	for i, d := range shape {
		c, ok := d.Const()
		if !ok {
			c = -1
		}
		dims[i] = c
	}
	return etlView(b, a, dims...)
}

// etlView builds view_copy(a, dims).
func etlView(b *ir.Builder, a ir.Arg, dims ...int64) (*ir.Value, error) {
	return b.Value(etlOpViewCopy, a, ir.IntsArg(dims...))
}

// avg_pool3d(x, k, s, p, ceil_mode, count_include_pad, divisor_override)
// → avg_pool2d over H, W (k, s, p of H and W), then avg_pool2d over D
// ((kD, 1), (sD, 1), (pD, 0)), same ceil_mode and count_include_pad. Each
// window's divisor is the product of its per-axis counts (clipped to the
// padded input with count_include_pad, to the input without), so the mean
// of the stage-1 means is torch's mean. With divisor_override stage 1 sums
// (divisor 1) and stage 2 divides once by the override.
func etlAvgPool3d(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	g, ok := etlPool3dGeom(n)
	if !ok {
		return nil, nil
	}
	k, ok1 := etIntTuple(n.Arg("kernel_size"), 3, nil)
	s, ok2 := etIntTuple(n.Arg("stride"), 3, k)
	p, ok3 := etIntTuple(n.Arg("padding"), 3, []int64{0, 0, 0})
	ceil, cip, div := n.Arg("ceil_mode"), n.Arg("count_include_pad"), n.Arg("divisor_override")
	if !ok1 || !ok2 || !ok3 || ceil.Kind != ir.ArgBool || cip.Kind != ir.ArgBool || !(div.IsNone() || (div.Kind == ir.ArgInt && div.Int != 0)) {
		return nil, nil
	}
	div1, div2 := ir.NoneArg(), ir.NoneArg()
	if !div.IsNone() {
		div1, div2 = ir.IntArg(1), div
	}
	x, err := g.view(b, n.Arg("self"), g.d, g.h, g.w)
	if err != nil {
		return nil, err
	}
	y1, err := b.Value(etlOpAvgPool2d, ir.ValueArg(x), ir.IntsArg(k[1], k[2]), ir.IntsArg(s[1], s[2]), ir.IntsArg(p[1], p[2]), ceil, cip, div1)
	if err != nil {
		return nil, err
	}
	if y1, err = g.view(b, ir.ValueArg(y1), 0, g.d, g.oh*g.ow); err != nil {
		return nil, err
	}
	y2, err := b.Value(etlOpAvgPool2d, ir.ValueArg(y1), ir.IntsArg(k[0], 1), ir.IntsArg(s[0], 1), ir.IntsArg(p[0], 0), ceil, cip, div2)
	if err != nil {
		return nil, err
	}
	return g.viewTo(b, ir.ValueArg(y2), g.out)
}

// _adaptive_avg_pool3d(x, [oD, oH, oW]) → _adaptive_avg_pool2d(·, [oH,
// oW]) over H, W, then _adaptive_avg_pool2d(·, [oD, oH·oW]) over D (the
// second axis keeps its size: bins of one element). The adaptive bins of
// each axis (floor(i·in/out) to ceil((i+1)·in/out)) do not depend on the
// other axes, so the divisor is separable as for avg_pool3d.
func etlAdaptiveAvgPool3d(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	g, ok := etlPool3dGeom(n)
	if !ok {
		return nil, nil
	}
	if o, ok := etIntTuple(n.Arg("output_size"), 3, nil); !ok || o[0] != g.od || o[1] != g.oh || o[2] != g.ow {
		return nil, nil
	}
	x, err := g.view(b, n.Arg("self"), g.d, g.h, g.w)
	if err != nil {
		return nil, err
	}
	y1, err := b.Value(etlOpAdaptive2d, ir.ValueArg(x), ir.IntsArg(g.oh, g.ow))
	if err != nil {
		return nil, err
	}
	if y1, err = g.view(b, ir.ValueArg(y1), 0, g.d, g.oh*g.ow); err != nil {
		return nil, err
	}
	y2, err := b.Value(etlOpAdaptive2d, ir.ValueArg(y1), ir.IntsArg(g.od, g.oh*g.ow))
	if err != nil {
		return nil, err
	}
	return g.viewTo(b, ir.ValueArg(y2), g.out)
}

// max_pool3d_with_indices(x, k, s, p, dilation, ceil_mode) →
// max_pool2d_with_indices over H, W, then over D ((kD, 1) window, (dD, 1)
// dilation). When the indices are used: the stage-2 index i2 is
// d·(Ho·Wo) + j, so the depth is d = i2 // (Ho·Wo); the stage-1 index at
// that depth (gather along D) is the flat h·W + w, and the flat index into
// D·H·W is d·H·W + that. Torch scans a window depth-major and keeps the
// first maximum; stage 1 keeps the first in (h, w) order at every depth
// and stage 2 the first depth, which is the same element.
func etlMaxPool3d(b *ir.Builder, n *ir.Node) ([]*ir.Value, error) {
	g, ok := etlPool3dGeom(n)
	if !ok || len(n.Results) != 2 {
		return nil, nil
	}
	k, ok1 := etIntTuple(n.Arg("kernel_size"), 3, nil)
	s, ok2 := etIntTuple(n.Arg("stride"), 3, k)
	p, ok3 := etIntTuple(n.Arg("padding"), 3, []int64{0, 0, 0})
	dil, ok4 := etIntTuple(n.Arg("dilation"), 3, []int64{1, 1, 1})
	ceil := n.Arg("ceil_mode")
	if !ok1 || !ok2 || !ok3 || !ok4 || ceil.Kind != ir.ArgBool {
		return nil, nil
	}
	x, err := g.view(b, n.Arg("self"), g.d, g.h, g.w)
	if err != nil {
		return nil, err
	}
	st1, err := b.Call(etlOpMaxPool2dIdx, ir.ValueArg(x), ir.IntsArg(k[1], k[2]), ir.IntsArg(s[1], s[2]), ir.IntsArg(p[1], p[2]), ir.IntsArg(dil[1], dil[2]), ceil)
	if err != nil {
		return nil, err
	}
	hw := g.oh * g.ow
	v1, err := g.view(b, ir.ValueArg(st1.Results[0]), 0, g.d, hw)
	if err != nil {
		return nil, err
	}
	st2, err := b.Call(etlOpMaxPool2dIdx, ir.ValueArg(v1), ir.IntsArg(k[0], 1), ir.IntsArg(s[0], 1), ir.IntsArg(p[0], 0), ir.IntsArg(dil[0], 1), ceil)
	if err != nil {
		return nil, err
	}
	vals, err := g.viewTo(b, ir.ValueArg(st2.Results[0]), g.out)
	if err != nil {
		return nil, err
	}
	if len(n.Results[1].Uses()) == 0 {
		return []*ir.Value{vals, nil}, nil
	}
	depth, err := b.CallKw(etlOpDivScalarMod, []ir.Arg{ir.ValueArg(st2.Results[1]), ir.IntArg(hw)}, map[string]ir.Arg{"rounding_mode": ir.StringArg("floor")})
	if err != nil {
		return nil, err
	}
	i1, err := g.view(b, ir.ValueArg(st1.Results[1]), 0, g.d, hw)
	if err != nil {
		return nil, err
	}
	at, err := b.Value(etOpGather, ir.ValueArg(i1), ir.IntArg(2), ir.ValueArg(depth.Result()))
	if err != nil {
		return nil, err
	}
	off, err := b.Value(etlOpMulScalar, ir.ValueArg(depth.Result()), ir.IntArg(g.h*g.w))
	if err != nil {
		return nil, err
	}
	flat, err := b.Value(ir.OpAtenAddTensor, ir.ValueArg(off), ir.ValueArg(at))
	if err != nil {
		return nil, err
	}
	idx, err := g.viewTo(b, ir.ValueArg(flat), g.out)
	if err != nil {
		return nil, err
	}
	return []*ir.Value{vals, idx}, nil
}
