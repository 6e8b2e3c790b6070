package xnnpack

import (
	"github.com/fxport/fxport/ir"
)

var opConv = ir.OpAtenConvolution

// wquant is a quantized weight: a dequantize of an int8 constant, per
// tensor (zero point 0) or per channel along axis (all zero points 0,
// checked when the scales are read).
type wquant struct {
	dq   *ir.Node
	w    *ir.Value // the int8 constant
	pt   qparams   // per-tensor parameters (dq is dequantize_per_tensor)
	axis int64     // per-channel axis, normalized (dq is dequantize_per_channel)
}

func (q *wquant) perChannel() bool { return q.dq.Op == opDequantCh }

// matchWeight matches w = dequantize(int8 constant) used once.
func matchWeight(w *ir.Value, isConst func(*ir.Value) bool) (*wquant, string) {
	if !isDequantW(w) || w.NumUses() != 1 {
		return nil, "weight must be a dequantize of an int8 constant used once"
	}
	q := &wquant{dq: w.Def, w: w.Def.Args[0].Value}
	var why string
	if q.dq.Op == opDequant {
		if q.pt, why = qparamsOf(q.dq); why != "" {
			return nil, "weight dequantize: " + why
		}
		if q.pt.zp != 0 {
			return nil, "weight zero point must be 0"
		}
	} else if q.axis, why = qparamsChOf(q.dq, isConst); why != "" {
		return nil, "weight dequantize: " + why
	}
	if !isConst(q.w) {
		return nil, "weight must be a constant"
	}
	if _, ok := q.w.Tensor().StaticShape(); !ok {
		return nil, "weight shape must be static"
	}
	return q, ""
}

// qparamsChOf checks a dequantize_per_channel of an int8 tensor to fp32
// with constant scales (fp32 or fp64, one per channel) and constant integer
// zero points (or none); it returns the normalized axis.
func qparamsChOf(n *ir.Node, isConst func(*ir.Value) bool) (int64, string) {
	in := n.Args[0].Value.Tensor()
	if in.DType != ir.Int8 {
		return 0, "only int8 quantized tensors (qint8)"
	}
	if n.Results[0].Tensor().DType != ir.Float32 {
		return 0, "dequantize must produce fp32"
	}
	a := n.Arg("axis")
	lo, ok1 := number(n.Arg("quant_min"))
	hi, ok2 := number(n.Arg("quant_max"))
	if a.Kind != ir.ArgInt || !ok1 || !ok2 {
		return 0, "quantization parameters must be literals"
	}
	if lo < -128 || hi > 127 || lo >= hi {
		return 0, "only qint8 ranges within [-128, 127]"
	}
	axis := a.Int
	if axis < 0 {
		axis += int64(in.Rank())
	}
	if axis < 0 || axis >= int64(in.Rank()) {
		return 0, "axis out of range"
	}
	ch, ok := in.Shape[axis].Const()
	if !ok {
		return 0, "channel count must be static"
	}
	vec := func(v *ir.Value, what string, dts ...ir.DType) string {
		t := v.Tensor()
		if t == nil || !isConst(v) {
			return what + " must be a constant"
		}
		if t.Rank() != 1 {
			return what + " must be a vector"
		}
		if k, ok := t.Shape[0].Const(); !ok || k != ch {
			return what + " must have one entry per channel"
		}
		for _, d := range dts {
			if t.DType == d {
				return ""
			}
		}
		return what + " dtype " + t.DType.String() + " is not supported"
	}
	if why := vec(n.Arg("scales").Value, "scales", ir.Float32, ir.Float64); why != "" {
		return 0, why
	}
	if z := n.Arg("zero_points"); z.Kind == ir.ArgValue {
		if why := vec(z.Value, "zero points", ir.Int64, ir.Int32); why != "" {
			return 0, why
		}
	} else if z.Kind != ir.ArgNone {
		return 0, "zero points must be a tensor or None"
	}
	return axis, ""
}

// qconv is the matched quantized convolution pattern.
type qconv struct {
	qio
	wq *wquant // [O, I/groups, kh, kw]
}

// quantConv reports whether conv's weight is dequantized (a regular or a
// transposed convolution: quant_deconv.go) and its input is not
// dynamically quantized (quant_dynamic_conv.go).
func quantConv(n *ir.Node) bool {
	return n.Op == opConv && isDequantW(n.Arg("weight").Value) && !dynConv(n)
}

// matchQConv matches the quantized pattern around a 2-D convolution.
func matchQConv(n *ir.Node, isConst func(*ir.Value) bool) (*qconv, string) {
	m := &qconv{}
	if why := matchQIn(&m.qio, n.Arg("input").Value); why != "" {
		return nil, why
	}
	for _, u := range m.xd.Results[0].Uses() {
		if u.IsReturn() || !quantConv(u) || u.Arg("input").Value != m.xd.Results[0] {
			return nil, "input dequantize must feed only quantized convolutions"
		}
	}
	var why string
	if m.wq, why = matchWeight(n.Arg("weight").Value, isConst); why != "" {
		return nil, why
	}
	if m.wq.w.Tensor().Rank() != 4 {
		return nil, "weight must be rank 4"
	}
	if n.Arg("transposed").Bool() {
		if why := deconvWeightAxis(n, m.wq); why != "" {
			return nil, why
		}
	} else if m.wq.perChannel() && m.wq.axis != 0 {
		return nil, "per-channel weight must be quantized along the output channels (axis 0)"
	}
	if b := n.Arg("bias"); b.Kind == ir.ArgValue {
		if b.Value.Tensor().DType != ir.Float32 || !isConst(b.Value) {
			return nil, "bias must be an fp32 constant"
		}
	}
	if why := matchQOut(&m.qio, n.Results[0], "quantized convolution"); why != "" {
		return nil, why
	}
	return m, ""
}
