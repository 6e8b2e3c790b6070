package onnx

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// Opset-gated normalizations and attention: the newer ONNX ops are used when
// the chosen opset has them (GroupNormalization 21 — per-channel scale/bias,
// torch's semantics; 18's per-group form is not used —, RMSNormalization 23,
// Attention 23), otherwise an exact decomposition. LayerNormalization (17) is
// available at every supported opset (ops_nn.go).

// reduceMean is ReduceMean over axes, keeping them (axes attribute below
// opset 18, input from 18).
func (b *Builder) reduceMean(x string, axes ...int64) string {
	if b.opset >= 18 {
		return b.Tmp("ReduceMean", []string{x, b.I64s(axes...)}, AttrInt("keepdims", 1))
	}
	return b.Tmp("ReduceMean", []string{x}, AttrInts("axes", axes...), AttrInt("keepdims", 1))
}

// finfoEps is torch.finfo(dt).eps, rms_norm's default epsilon.
func finfoEps(dt ir.DType) float64 {
	switch dt {
	case ir.Float16:
		return 0.0009765625
	case ir.BFloat16:
		return 0.0078125
	case ir.Float64:
		return 2.220446049250313e-16
	}
	return 1.1920928955078125e-07
}

// optFloat reads a float? argument (ok false when absent or None).
func (r *argReader) optFloat(name string) (float64, bool) {
	if !r.Has(name) || r.Arg(name).IsNone() {
		return 0, false
	}
	return r.Float(name), true
}

// channelShape is [C, 1, …, 1] for broadcasting a per-channel tensor over a
// rank-`rank` NC… input.
func channelShape(c int64, rank int) []int64 {
	s := make([]int64, rank-1)
	s[0] = c
	for i := 1; i < len(s); i++ {
		s[i] = 1
	}
	return s
}

// groupNorm lowers native_group_norm (3 results) and group_norm.
func groupNorm(b *Builder, n *ir.Node) error {
	r := reader(b, n)
	dt := r.out(0).DType
	x := r.In("input", dt)
	shape := r.Shape("input")
	var groups int64
	var eps float64
	if n.Op.ArgIndex("group") >= 0 {
		groups, eps = r.Int("group"), r.Float("eps")
	} else {
		groups, eps = r.Int("num_groups"), r.Float("eps")
	}
	if r.err != nil {
		return r.err
	}
	if len(shape) < 2 {
		return fmt.Errorf("group_norm input of rank %d: want N, C, …", len(shape))
	}
	c, static := shape[1].Const()
	var weight, bias string
	if r.Has("weight") && !r.Arg("weight").IsNone() {
		weight = r.In("weight", dt)
	}
	if r.Has("bias") && !r.Arg("bias").IsNone() {
		bias = r.In("bias", dt)
	}
	if r.err != nil {
		return r.err
	}
	statsUsed := false
	for _, res := range n.Results[1:] {
		if res.NumUses() > 0 {
			statsUsed = true
		}
	}
	if b.opset >= 21 && static && !statsUsed {
		if weight == "" {
			weight = b.fill(dt, []int64{c}, 1)
		}
		if bias == "" {
			bias = b.fill(dt, []int64{c}, 0)
		}
		b.Emit(n.Results[0], "GroupNormalization", []string{x, weight, bias},
			AttrFloat("epsilon", eps), AttrInt("num_groups", groups))
		return nil
	}
	// Decomposition: statistics over [N, G, C/G·HxW].
	xr := b.Tmp("Reshape", []string{x, b.I64s(0, groups, -1)})
	mean := b.reduceMean(xr, 2)
	d := b.Tmp("Sub", []string{xr, mean})
	variance := b.reduceMean(b.Tmp("Mul", []string{d, d}), 2)
	e, err := b.Scalar(dt, eps)
	if err != nil {
		return err
	}
	rstd := b.Tmp("Reciprocal", []string{b.Tmp("Sqrt", []string{b.Tmp("Add", []string{variance, e})})})
	y := b.Tmp("Reshape", []string{b.Tmp("Mul", []string{d, rstd}), b.Tmp("Shape", []string{x})})
	if weight != "" || bias != "" {
		if !static {
			return fmt.Errorf("group_norm with a symbolic channel count %s and an affine transform is not lowered", shape[1])
		}
		cs := b.I64s(channelShape(c, len(shape))...)
		if weight != "" {
			y = b.Tmp("Mul", []string{y, b.Tmp("Reshape", []string{weight, cs})})
		}
		if bias != "" {
			y = b.Tmp("Add", []string{y, b.Tmp("Reshape", []string{bias, cs})})
		}
	}
	b.Bind(n.Results[0], y)
	if len(n.Results) == 3 {
		ax := b.I64s(2)
		if n.Results[1].NumUses() > 0 {
			b.Emit(n.Results[1], "Squeeze", []string{mean, ax})
		}
		if n.Results[2].NumUses() > 0 {
			b.Emit(n.Results[2], "Squeeze", []string{rstd, ax})
		}
	}
	return nil
}

// rmsNorm lowers rms_norm: RMSNormalization from 23, else
// x · 1/sqrt(mean(x²) + eps) · weight.
func rmsNorm(b *Builder, n *ir.Node) error {
	r := reader(b, n)
	dt := r.out(0).DType
	x := r.In("input", dt)
	rank := r.Rank("input")
	ns := r.Ints("normalized_shape")
	eps, ok := r.optFloat("eps")
	if !ok {
		eps = finfoEps(dt)
	}
	var weight string
	if r.Has("weight") && !r.Arg("weight").IsNone() {
		weight = r.In("weight", dt)
	}
	if r.err != nil {
		return r.err
	}
	k := len(ns)
	if k == 0 || k > rank {
		return fmt.Errorf("rms_norm: normalized_shape %v does not fit an input of rank %d", ns, rank)
	}
	if b.opset >= 23 {
		if weight == "" {
			weight = b.fill(dt, ns, 1)
		}
		b.Emit(n.Results[0], "RMSNormalization", []string{x, weight},
			AttrInt("axis", -int64(k)), AttrFloat("epsilon", eps))
		return nil
	}
	axes := make([]int64, k)
	for i := range axes {
		axes[i] = int64(rank - k + i)
	}
	ms := b.reduceMean(b.Tmp("Mul", []string{x, x}), axes...)
	e, err := b.Scalar(dt, eps)
	if err != nil {
		return err
	}
	inv := b.Tmp("Reciprocal", []string{b.Tmp("Sqrt", []string{b.Tmp("Add", []string{ms, e})})})
	if weight == "" {
		b.Emit(n.Results[0], "Mul", []string{x, inv})
		return nil
	}
	b.Emit(n.Results[0], "Mul", []string{b.Tmp("Mul", []string{x, inv}), weight})
	return nil
}

// sdpa lowers scaled_dot_product_attention: Attention from 23 (4-D q/k/v,
// no dropout, causal only with equal query and key lengths — ONNX aligns the
// causal mask bottom-right, torch top-left), else MatMul/Softmax/MatMul.
// A fully masked row is NaN in torch and in the decomposition; Attention
// (onnx ≥ 1.23 errata) may give zeros there (ONNX-P03's later semantics).
func sdpa(b *Builder, n *ir.Node) error {
	r := reader(b, n)
	dt := r.out(0).DType
	q, k, v := r.In("query", dt), r.In("key", dt), r.In("value", dt)
	qs, ks := r.Shape("query"), r.Shape("key")
	dropout := r.Float("dropout_p")
	causal := r.Has("is_causal") && r.Bool("is_causal")
	gqa := r.Has("enable_gqa") && r.Bool("enable_gqa")
	scale, hasScale := r.optFloat("scale")
	mask, maskDT := "", ir.Bool
	if r.Has("attn_mask") && !r.Arg("attn_mask").IsNone() {
		maskDT = r.DT("attn_mask")
		mask = r.In("attn_mask", maskDT)
	}
	if r.err != nil {
		return r.err
	}
	if dropout != 0 {
		return fmt.Errorf("scaled_dot_product_attention with dropout_p=%g is not lowered (inference export needs dropout 0)", dropout)
	}
	rank := len(qs)
	if rank < 2 || len(ks) != rank {
		return fmt.Errorf("scaled_dot_product_attention: query rank %d, key rank %d", rank, len(ks))
	}
	if !hasScale {
		e, ok := qs[rank-1].Const()
		if !ok {
			return fmt.Errorf("scaled_dot_product_attention: symbolic head size %s needs an explicit scale", qs[rank-1])
		}
		scale = 1 / math.Sqrt(float64(e))
	}
	L, S := qs[rank-2], ks[rank-2]
	sameLen := sym.Compare(L, S) == 0
	if b.opset >= 23 && rank == 4 && (!causal || sameLen) {
		ins := []string{q, k, v}
		if mask != "" {
			ins = append(ins, mask)
		}
		attrs := []*pb.AttributeProto{AttrFloat("scale", scale)}
		if causal {
			attrs = append(attrs, AttrInt("is_causal", 1))
		}
		b.Emit(n.Results[0], "Attention", ins, attrs...)
		return nil
	}
	if gqa && rank >= 3 && sym.Compare(qs[rank-3], ks[rank-3]) != 0 {
		var err error
		if k, err = repeatHeads(b, k, ks, qs[rank-3]); err != nil {
			return err
		}
		if v, err = repeatHeads(b, v, r.Shape("value"), qs[rank-3]); err != nil {
			return err
		}
	}
	perm := make([]int64, rank)
	for i := range perm {
		perm[i] = int64(i)
	}
	perm[rank-2], perm[rank-1] = perm[rank-1], perm[rank-2]
	sc, err := b.Scalar(dt, scale)
	if err != nil {
		return err
	}
	s := b.Tmp("Mul", []string{b.Tmp("MatMul", []string{q, b.Tmp("Transpose", []string{k}, AttrInts("perm", perm...))}), sc})
	ninf, err := b.Scalar(dt, math.Inf(-1))
	if err != nil {
		return err
	}
	if causal {
		l, okL := L.Const()
		sl, okS := S.Const()
		if !okL || !okS {
			return fmt.Errorf("scaled_dot_product_attention: is_causal with symbolic lengths (%s, %s) is not lowered below opset 23", L, S)
		}
		keep := make([]byte, l*sl)
		for i := int64(0); i < l; i++ {
			for j := int64(0); j <= i && j < sl; j++ {
				keep[i*sl+j] = 1
			}
		}
		cm, err := b.Const(ir.Bool, []int64{l, sl}, keep)
		if err != nil {
			return err
		}
		s = b.Tmp("Where", []string{cm, s, ninf})
	}
	if mask != "" {
		if maskDT == ir.Bool {
			s = b.Tmp("Where", []string{mask, s, ninf})
		} else {
			s = b.Tmp("Add", []string{s, mask})
		}
	}
	p := b.Tmp("Softmax", []string{s}, AttrInt("axis", -1))
	b.Emit(n.Results[0], "MatMul", []string{p, v})
	return nil
}

// repeatHeads repeats each key/value head (dim -3) to hq heads, as torch's
// enable_gqa does (repeat_interleave): Unsqueeze, Expand, Reshape.
func repeatHeads(b *Builder, x string, shape []sym.Expr, hq sym.Expr) (string, error) {
	rank := len(shape)
	hkv, ok1 := shape[rank-3].Const()
	h, ok2 := hq.Const()
	if !ok1 || !ok2 || hkv == 0 || h%hkv != 0 {
		return "", fmt.Errorf("scaled_dot_product_attention enable_gqa: %s query heads over %s key/value heads is not lowered", hq, shape[rank-3])
	}
	u := b.Tmp("Unsqueeze", []string{x, b.I64s(int64(rank - 2))})
	exp := append(append(append([]sym.Expr{}, shape[:rank-2]...), sym.Const(h/hkv)), shape[rank-2:]...)
	es, err := b.ShapeTensor(exp)
	if err != nil {
		return "", err
	}
	out := append(append(append([]sym.Expr{}, shape[:rank-3]...), hq), shape[rank-2:]...)
	os, err := b.ShapeTensor(out)
	if err != nil {
		return "", err
	}
	return b.Tmp("Reshape", []string{b.Tmp("Expand", []string{u, es}), os}), nil
}

func init() {
	// The same lowering at each opset where its choice changes, so the
	// coverage table shows the gates; each checks Builder.Opset itself.
	lower(17, groupNorm, ir.OpAtenNativeGroupNorm, ir.OpAtenGroupNorm)
	lower(21, groupNorm, ir.OpAtenNativeGroupNorm, ir.OpAtenGroupNorm)
	lower(17, rmsNorm, ir.OpAtenRmsNorm)
	lower(23, rmsNorm, ir.OpAtenRmsNorm)
	lower(17, sdpa, ir.OpAtenScaledDotProductAttention)
	lower(23, sdpa, ir.OpAtenScaledDotProductAttention)
}
