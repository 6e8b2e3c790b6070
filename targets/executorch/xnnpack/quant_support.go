package xnnpack

import (
	"github.com/fxport/fxport/ir"
)

// Quantized fully-connected and convolution support (PT2E qint8): the
// pattern
//
//	xq = quantize_per_tensor(x); xd = dequantize_per_tensor(xq)
//	wd = dequantize_per_tensor(w int8 constant) |
//	     dequantize_per_channel(w int8 constant, scales, zero_points, axis)
//	     [; permute_copy(wd, [1, 0])]
//	y  = addmm(b fp32 constant, xd, w') | mm(xd, w') | convolution(xd, wd, b)
//	yq = quantize_per_tensor(y); yd = dequantize_per_tensor(yq)
//
// is claimed whole: XNNConvert fp32→qint8, a qint8 XNNFullyConnected or
// XNNConv2d / XNNDepthwiseConv2d (qint8 filter, qint32 bias of scale
// s_x·s_w; per-channel weights give a qcint8 filter and a qcint32 bias of
// scales s_x·s_w[c]) and XNNConvert back to fp32.

var (
	opQuant     = ir.OpQuantizedDecomposedQuantizePerTensor
	opDequant   = ir.OpQuantizedDecomposedDequantizePerTensor
	opDequantCh = ir.OpQuantizedDecomposedDequantizePerChannel
)

func init() {
	addRule(ir.OpQuantizedDecomposedQuantizePerTensor, "QuantizedPerTensorConfig", checkQuant)
	addRule(ir.OpQuantizedDecomposedDequantizePerTensor, "DeQuantizedPerTensorConfig", checkDequant)
	addRule(ir.OpQuantizedDecomposedDequantizePerChannel, "DeQuantizedPerChannelConfig", checkDequantCh)
}

// qparams are one q/dq node's per-tensor parameters.
type qparams struct {
	scale float64
	zp    int64
}

// qparamsOf reads the per-tensor parameters of a q/dq node whose quantized
// side is int8; the reason is non-empty when they are unusable.
func qparamsOf(n *ir.Node) (qparams, string) {
	s, ok1 := number(n.Arg("scale"))
	zp := n.Arg("zero_point")
	lo, ok3 := number(n.Arg("quant_min"))
	hi, ok4 := number(n.Arg("quant_max"))
	if !ok1 || zp.Kind != ir.ArgInt || !ok3 || !ok4 {
		return qparams{}, "quantization parameters must be literals"
	}
	if !(s > 0) {
		return qparams{}, "scale must be positive"
	}
	if lo < -128 || hi > 127 || lo >= hi || zp.Int < -128 || zp.Int > 127 {
		return qparams{}, "only qint8 ranges within [-128, 127]"
	}
	q := n.Results[0]
	if n.Op == opDequant {
		q = n.Args[0].Value
		if n.Results[0].Tensor().DType != ir.Float32 {
			return qparams{}, "dequantize must produce fp32"
		}
	} else if n.Args[0].Value.Tensor().DType != ir.Float32 {
		return qparams{}, "quantize must read fp32"
	}
	if q.Tensor().DType != ir.Int8 {
		return qparams{}, "only int8 quantized tensors (qint8)"
	}
	return qparams{scale: s, zp: zp.Int}, ""
}

// qio is the quantized input and output side shared by the quantized
// fully-connected and convolution patterns.
type qio struct {
	xq, xd     *ir.Node // input quantize / dequantize
	yq         *ir.Node // output quantize
	x, yp      qparams
	outDequant []*ir.Node // dequantize users of yq
}

// qfc is the matched quantized fully-connected pattern around one addmm/mm.
type qfc struct {
	qio
	perm *ir.Node // permute_copy [1, 0] of the weight, or nil
	wq   *wquant  // the int8 [out, in] (perm != nil) or [in, out] weight
}

// matchQIn matches the input side: x = dequantize_per_tensor(quantize_per_tensor(_)).
func matchQIn(m *qio, x *ir.Value) string {
	var why string
	if x.Def == nil || x.Def.Op != opDequant {
		return "quantized weight with an unquantized input"
	}
	m.xd = x.Def
	if m.x, why = qparamsOf(m.xd); why != "" {
		return "input dequantize: " + why
	}
	xq := m.xd.Args[0].Value
	if xq.Def == nil || xq.Def.Op != opQuant {
		return "input dequantize must read a quantize"
	}
	m.xq = xq.Def
	if p, why := qparamsOf(m.xq); why != "" || p != m.x {
		return "input quantize/dequantize parameters differ"
	}
	return ""
}

// matchQOut matches the output side: r feeds one quantize_per_tensor whose
// users are all dequantize_per_tensor with the same parameters.
func matchQOut(m *qio, r *ir.Value, what string) string {
	var why string
	if r.NumUses() != 1 || r.Uses()[0].IsReturn() || r.Uses()[0].Op != opQuant {
		return what + " result must feed one quantize"
	}
	m.yq = r.Uses()[0]
	if m.yp, why = qparamsOf(m.yq); why != "" {
		return "output quantize: " + why
	}
	yq := m.yq.Results[0]
	if yq.NumUses() == 0 {
		return "output quantize is unused"
	}
	for _, u := range yq.Uses() {
		if u.IsReturn() || u.Op != opDequant {
			return "output quantize must feed only dequantize nodes"
		}
		if p, why := qparamsOf(u); why != "" || p != m.yp {
			return "output quantize/dequantize parameters differ"
		}
		m.outDequant = append(m.outDequant, u)
	}
	return ""
}

// matchQFC matches the pattern around fc (addmm or mm); isConst says which
// values are constants. The reason is empty on a match.
func matchQFC(fc *ir.Node, isConst func(*ir.Value) bool) (*qfc, string) {
	var x, w *ir.Value
	if fc.Op == opAddmm {
		x, w = fc.Arg("mat1").Value, fc.Arg("mat2").Value
	} else {
		x, w = fc.Arg("self").Value, fc.Arg("mat2").Value
	}
	m := &qfc{}
	if why := matchQIn(&m.qio, x); why != "" {
		return nil, why
	}
	axis := int64(1) // the out dim of a bare [in, out] weight
	if w.Def != nil && w.Def.Op == opPermute {
		if d, ok := ints(w.Def.Arg("dims"), 0); !ok || len(d) != 2 || !(d[0] == 1 && d[1] == 0 || d[0] == -1 && d[1] == -2 || d[0] == 1 && d[1] == -2 || d[0] == -1 && d[1] == 0) {
			return nil, "weight permute must be [1, 0]"
		}
		if w.NumUses() != 1 {
			return nil, "weight permute has other users"
		}
		m.perm = w.Def
		w = w.Def.Args[0].Value
		axis = 0
	}
	var why string
	if m.wq, why = matchWeight(w, isConst); why != "" {
		return nil, why
	}
	if m.wq.perChannel() && m.wq.axis != axis {
		return nil, "per-channel weight must be quantized along the output channels"
	}
	if why := matchQOut(&m.qio, fc.Results[0], "quantized fully-connected"); why != "" {
		return nil, why
	}
	if fc.Op == opAddmm {
		if b := fc.Arg("self").Value; b.Tensor().DType != ir.Float32 {
			return nil, "bias must be fp32"
		}
	}
	return m, ""
}

// quantFC reports whether fc's weight is dequantized (the quantized form).
func quantFC(fc *ir.Node) bool {
	w := fc.Arg("mat2").Value
	if w.Def != nil && w.Def.Op == opPermute {
		w = w.Def.Args[0].Value
	}
	return isDequantW(w)
}

// isDequantW reports whether w is a dequantize (per tensor or per channel).
func isDequantW(w *ir.Value) bool {
	return w.Def != nil && (w.Def.Op == opDequant || w.Def.Op == opDequantCh)
}

// isQOp reports whether n is an op a quantized pattern forms around: a
// fully-connected op, a convolution (regular or transposed) or an add of
// two dequantized operands.
func isQOp(n *ir.Node) bool {
	return isFC(n) || n.Op == opConv || quantAdd(n) || quantPool(n)
}

func isFC(n *ir.Node) bool {
	return n.Op == opAddmm || n.Op == ir.OpAtenMm
}

// checkQuant: a quantize whose every user is a supported dequantize.
func checkQuant(c *checker, n *ir.Node) string {
	if _, why := qparamsOf(n); why != "" {
		return why
	}
	r := n.Results[0]
	if r.NumUses() == 0 {
		return "unused quantize"
	}
	for _, u := range r.Uses() {
		if u.IsReturn() || u.Op != opDequant {
			return "quantize must feed only dequantize nodes"
		}
		if why := c.supported(u); why != "" {
			return "its dequantize is not delegated: " + why
		}
	}
	return ""
}

// checkDequant: a dequantize that is part of a supported quantized
// fully-connected pattern (weight, input or output side).
func checkDequant(c *checker, n *ir.Node) string {
	if _, why := qparamsOf(n); why != "" {
		return why
	}
	in := n.Args[0].Value
	// Output side: dequantize(quantize(fc or conv)).
	if in.Def != nil && in.Def.Op == opQuant {
		if src := in.Def.Args[0].Value; src.Def != nil && isQOp(src.Def) {
			if why := qopOK(c, src.Def); why != "" {
				return "its fully-connected or convolution op is not delegated: " + why
			}
			return ""
		}
	}
	return checkDequantUsers(c, n)
}

// checkDequantCh: a per-channel dequantize of a quantized weight.
func checkDequantCh(c *checker, n *ir.Node) string {
	if _, why := qparamsChOf(n, func(v *ir.Value) bool { return c.consts[v] }); why != "" {
		return why
	}
	return checkDequantUsers(c, n)
}

func qopOK(c *checker, n *ir.Node) string {
	if !isQOp(n) {
		return "not a fully-connected or convolution op"
	}
	return c.supported(n)
}

// checkDequantUsers: the input or weight side, where every user (through a
// weight permute) is a supported fully-connected or convolution op.
func checkDequantUsers(c *checker, n *ir.Node) string {
	r := n.Results[0]
	if r.NumUses() == 0 {
		return "unused dequantize"
	}
	for _, u := range r.Uses() {
		if u.IsReturn() {
			return "dequantized value is returned"
		}
		if u.Op == opPermute {
			pu := u.Results[0].Uses()
			if len(pu) != 1 || pu[0].IsReturn() {
				return "weight permute must feed one fully-connected op"
			}
			u = pu[0]
		}
		if why := qopOK(c, u); why != "" {
			return "its fully-connected or convolution op is not delegated: " + why
		}
	}
	return ""
}

// members are the nodes of a matched quantized pattern around its op,
// besides the op: input quantize/dequantize, output quantize and its
// dequantizes.
func (m *qio) members() []*ir.Node {
	return append([]*ir.Node{m.xq, m.xd, m.yq}, m.outDequant...)
}

// quantNeeds lists what the serialization of a quantized-pattern node
// needs in its own partition (checker.needs), or ok false when n is not
// one. The rule, one line per kind:
//
//   - dynamically quantized convolution: choose_qparams, quantize,
//     dequantize and the weight's dequantize (quant_dynamic_conv.go);
//   - quantized fully-connected, convolution, add/sub/mul: every node of
//     its pattern (input quantize/dequantize, the weight's dequantize and
//     permute, output quantize and dequantizes): the int8 values between
//     them have no XNNPACK datatype outside the pattern, and the filter is
//     the weight's int8 constant, baked in only when the dequantize is
//     folded into the op;
//   - quantize: its dequantizes (its int8 result cannot leave the delegate);
//   - dequantize of a quantize: the quantize (the int8 input cannot come
//     from outside), and the op of the pattern it belongs to: the producer
//     of the quantized value on the output side, else its consumers;
//   - dequantize of an int8 weight: the ops it is the weight of, through the
//     permute (it is only written folded into their filter).
func (c *checker) quantNeeds(n *ir.Node) ([]*ir.Node, bool) {
	isConst := func(v *ir.Value) bool { return c.consts[v] }
	switch {
	case isFC(n) && dynFC(n):
		return dynNeeds(n, isConst), true // quant_dynamic.go
	case isFC(n) && quantFC(n):
		m, why := matchQFC(n, isConst)
		if why != "" {
			return nil, true // not claimed: its rule refused it
		}
		out := append(m.members(), m.wq.dq)
		if m.perm != nil {
			out = append(out, m.perm)
		}
		return out, true
	case dynConv(n): // quant_dynamic_conv.go
		return dynConvNeeds(n, isConst), true
	case quantConv(n):
		m, why := matchQConv(n, isConst)
		if why != "" {
			return nil, true
		}
		return append(m.members(), m.wq.dq), true
	case quantAdd(n):
		m, why := matchQAdd(n)
		if why != "" {
			return nil, true
		}
		return append(m.members(), m.bq, m.bd), true
	case quantPool(n): // quant_pool.go
		m, why := matchQPool(n)
		if why != "" {
			return nil, true
		}
		return m.members(), true
	case n.Op == opQuant:
		return usersOf(n), true
	case n.Op == opDequant && n.Args[0].Value.Def != nil && n.Args[0].Value.Def.Op == opQuant:
		q := n.Args[0].Value.Def
		if src := q.Args[0].Value; src.Def != nil && isQOp(src.Def) {
			return []*ir.Node{q, src.Def}, true // output side
		}
		return append([]*ir.Node{q}, patternUsers(n)...), true // input side
	case n.Op == opDequant || n.Op == opDequantCh || n.Op == opDequantGrp:
		return patternUsers(n), true
	}
	return dynQNeeds(n) // quant_dynamic.go
}

// usersOf lists the nodes reading n's results (not the return).
func usersOf(n *ir.Node) []*ir.Node {
	var out []*ir.Node
	for _, r := range n.Results {
		for _, u := range r.Uses() {
			if !u.IsReturn() {
				out = append(out, u)
			}
		}
	}
	return out
}

// patternUsers lists the users of an input or weight dequantize n, with
// the op behind each weight permute (checkDequantUsers's view of them).
func patternUsers(n *ir.Node) []*ir.Node {
	var out []*ir.Node
	for _, u := range usersOf(n) {
		out = append(out, u)
		if u.Op == opPermute {
			out = append(out, usersOf(u)...)
		}
	}
	return out
}
