package xnnpack

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// Dynamically quantized fully-connected (PT2E dynamic qint8 activations,
// "qd8"): the pattern
//
//	s, z = choose_qparams.tensor(x, -128, 127, eps, int8)
//	xq = quantize_per_tensor.tensor(x, s, z, …); xd = dequantize_per_tensor.tensor(xq, s, z, …)
//
// or its per-token form (choose_qparams_per_token_asymmetric,
// quantize_per_token, dequantize_per_token: torchao's 8da4w), feeding the
// input of addmm/mm whose weight is
//
//	dequantize_per_channel(int8 constant, scales, zero points, out axis)   → qcint8 filter
//	dequantize_per_channel_group(int8 constant in [-8, 7], scales, …, g)   → qbint4 filter
//
// (under linear's permute_copy [1, 0]; a bare [in, out] per-channel weight
// is transposed). It is written as exir does: XNNConvert of x to a qdint8
// value (PerTokenDynamicQuant, num_nonbatch_dims 1: XNNPACK has no per-tensor
// dynamic quantization, so a per-tensor choose_qparams becomes per-row
// parameters at run time), an XNNFullyConnected with the quantized filter,
// the fp32 bias as it is and an fp32 output.

var (
	opChooseQP    = ir.OpQuantizedDecomposedChooseQparamsTensor
	opChooseQPTok = ir.OpQuantizedDecomposedChooseQparamsPerTokenAsymmetric
	opQuantT      = ir.OpQuantizedDecomposedQuantizePerTensorTensor
	opDequantT    = ir.OpQuantizedDecomposedDequantizePerTensorTensor
	opQuantTok    = ir.OpQuantizedDecomposedQuantizePerToken
	opDequantTok  = ir.OpQuantizedDecomposedDequantizePerToken
	opDequantGrp  = ir.OpQuantizedDecomposedDequantizePerChannelGroup
)

// xnnMinBlock is XNNPACK's XNN_MIN_BLOCKSIZE: blockwise (qb4w) group sizes
// must be multiples of it.
const xnnMinBlock = 32

func init() {
	addRule(ir.OpQuantizedDecomposedChooseQparamsTensor, "QuantizedPerTensorConfig", checkDynChoose)
	addRule(ir.OpQuantizedDecomposedChooseQparamsPerTokenAsymmetric, "ChooseQParamsAffineConfig", checkDynChoose)
	addRule(ir.OpQuantizedDecomposedQuantizePerTensorTensor, "QuantizedPerTensorConfig", checkDynQuant)
	addRule(ir.OpQuantizedDecomposedQuantizePerToken, "QuantizeAffineConfig", checkDynQuant)
	addRule(ir.OpQuantizedDecomposedDequantizePerTensorTensor, "DeQuantizedPerTensorConfig", checkDynDequant)
	addRule(ir.OpQuantizedDecomposedDequantizePerToken, "DeQuantizeAffineConfig", checkDynDequant)
	addRule(ir.OpQuantizedDecomposedDequantizePerChannelGroup, "DeQuantizeAffineConfig", checkDequantGroup)
}

// dynQOp reports whether op is one of the dynamic / group-wise quantization
// ops, whose scale and zero-point operands are not fp32 and whose rules
// check their tensors themselves.
func dynQOp(op ir.Op) bool {
	switch op {
	case opChooseQP, opChooseQPTok, opQuantT, opDequantT, opQuantTok, opDequantTok, opDequantGrp:
		return true
	}
	return false
}

// dynIn is the matched dynamic quantization of a fully-connected input.
type dynIn struct {
	choose, q, dq *ir.Node
}

// int8Range checks quant_min/quant_max literals of [-128, 127] and dtype int8.
func int8Range(n *ir.Node) string {
	lo, ok1 := number(n.Arg("quant_min"))
	hi, ok2 := number(n.Arg("quant_max"))
	if !ok1 || !ok2 || lo != -128 || hi != 127 {
		return "dynamic quantization must use the full int8 range [-128, 127]"
	}
	if d := n.Arg("dtype"); d.Kind != ir.ArgDType || d.DType() != ir.Int8 {
		return "dynamic quantization must produce int8"
	}
	return ""
}

// paramArgs are the scale and zero-point operand names of a dynamic q/dq.
func paramArgs(op ir.Op) (string, string) {
	if op == opQuantTok || op == opDequantTok {
		return "scales", "zero_points"
	}
	return "scale", "zero_point"
}

// matchDynIn matches x = dequantize(quantize(v, s, z), s, z) with s, z the
// results of one choose_qparams of v (per tensor or per token).
func matchDynIn(x *ir.Value) (*dynIn, string) {
	if x.Def == nil || x.Def.Op != opDequantT && x.Def.Op != opDequantTok {
		return nil, "input is not dynamically dequantized"
	}
	m := &dynIn{dq: x.Def}
	wantQ, wantC := opQuantT, opChooseQP
	if m.dq.Op == opDequantTok {
		wantQ, wantC = opQuantTok, opChooseQPTok
	}
	qv := m.dq.Args[0].Value
	if qv.Def == nil || qv.Def.Op != wantQ {
		return nil, "dynamic dequantize must read its quantize"
	}
	m.q = qv.Def
	if qv.NumUses() != 1 {
		return nil, "dynamic quantize must feed only its dequantize"
	}
	sn, zn := paramArgs(m.q.Op)
	s, z := m.q.Arg(sn), m.q.Arg(zn)
	if s.Kind != ir.ArgValue || z.Kind != ir.ArgValue || s.Value.Def == nil || s.Value.Def != z.Value.Def ||
		s.Value.Def.Op != wantC || s.Value != s.Value.Def.Results[0] || z.Value != s.Value.Def.Results[1] {
		return nil, "dynamic quantize parameters must be the scale and zero point of one choose_qparams"
	}
	m.choose = s.Value.Def
	if ds, dz := m.dq.Arg(sn), m.dq.Arg(zn); ds.Kind != ir.ArgValue || dz.Kind != ir.ArgValue || ds.Value != s.Value || dz.Value != z.Value {
		return nil, "dynamic quantize/dequantize parameters differ"
	}
	src := m.q.Args[0].Value
	if m.choose.Args[0].Value != src {
		return nil, "choose_qparams must measure the tensor it quantizes"
	}
	if t := src.Tensor(); t == nil || t.DType != ir.Float32 {
		return nil, "dynamic quantization of a non-fp32 tensor"
	}
	for _, n := range []*ir.Node{m.q, m.dq} {
		if why := int8Range(n); why != "" {
			return nil, why
		}
	}
	if m.choose.Op == opChooseQP {
		if why := int8Range(m.choose); why != "" {
			return nil, why
		}
	} else if d := m.choose.Arg("dtype"); d.Kind != ir.ArgDType || d.DType() != ir.Int8 {
		return nil, "dynamic quantization must produce int8"
	}
	if t := x.Tensor(); t == nil || t.DType != ir.Float32 {
		return nil, "dynamic dequantize must produce fp32"
	}
	for _, r := range m.choose.Results {
		for _, u := range r.Uses() {
			if u.IsReturn() || u != m.q && u != m.dq {
				return nil, "choose_qparams results have other users"
			}
		}
	}
	return m, ""
}

// dfc is a matched dynamically quantized fully-connected op.
type dfc struct {
	in    *dynIn
	view  *ir.Node // linear's flattening view_copy of the input, or nil
	perm  *ir.Node // permute_copy [1, 0] of the weight, or nil
	wdq   *ir.Node // the weight's dequantize
	w     *ir.Value
	wq    *wquant // per-channel weight (qcint8), or nil
	group int64   // group size of a dequantize_per_channel_group weight (qbint4)
}

// fcInput returns the input operand of addmm / mm fc.
func fcInput(fc *ir.Node) *ir.Value {
	if fc.Op == opAddmm {
		return fc.Arg("mat1").Value
	}
	return fc.Arg("self").Value
}

func isDynDequant(v *ir.Value) bool {
	return v.Def != nil && (v.Def.Op == opDequantT || v.Def.Op == opDequantTok)
}

// dynInput returns the dynamically dequantized value fc reads, directly or
// through the flattening view_copy of a linear of rank > 2 (folded into
// the fully-connected node, which flattens leading dims itself), or nil.
func dynInput(fc *ir.Node) *ir.Value {
	x := fcInput(fc)
	if x.Def != nil && x.Def.Op == opView && x.NumUses() == 1 {
		x = x.Def.Args[0].Value
	}
	if isDynDequant(x) {
		return x
	}
	return nil
}

// dynFC reports whether fc reads a dynamically dequantized input.
func dynFC(fc *ir.Node) bool {
	return isFC(fc) && dynInput(fc) != nil
}

// dynUsers returns the fully-connected ops reading dynamically dequantized
// x (directly or through a flattening view), or the reason x has another
// kind of user.
func dynUsers(x *ir.Value) ([]*ir.Node, string) {
	var fcs []*ir.Node
	for _, u := range x.Uses() {
		fc := u
		if !u.IsReturn() && u.Op == opView && u.Results[0].NumUses() == 1 {
			fc = u.Results[0].Uses()[0]
		}
		if fc.IsReturn() || !isFC(fc) || dynInput(fc) != x {
			return nil, "dynamically quantized input must feed only fully-connected ops (as their input)"
		}
		fcs = append(fcs, fc)
	}
	if len(fcs) == 0 {
		return nil, "unused dequantize"
	}
	return fcs, ""
}

// matchDynFC matches the pattern around fc; the reason is empty on a match.
func matchDynFC(fc *ir.Node, isConst func(*ir.Value) bool) (*dfc, string) {
	x := dynInput(fc)
	if x == nil {
		return nil, "input is not dynamically dequantized"
	}
	in, why := matchDynIn(x)
	if why != "" {
		return nil, why
	}
	if _, why := dynUsers(x); why != "" {
		return nil, why
	}
	m := &dfc{in: in}
	if v := fcInput(fc); v != x {
		st, vt := x.Tensor(), v.Tensor()
		if st.Rank() < 2 || !st.Shape[st.Rank()-1].Equal(vt.Shape[1]) {
			return nil, "the view of a dynamically quantized input must only flatten its leading dims"
		}
		r := fc.Results[0]
		if r.NumUses() != 1 || r.Uses()[0].IsReturn() || r.Uses()[0].Op != opView || r.Uses()[0].Results[0].Tensor().Rank() != st.Rank() {
			return nil, "a flattened dynamically quantized linear must restore its leading dims with one view"
		}
		m.view = v.Def
	}
	w := fc.Arg("mat2").Value
	axis := int64(1)
	if w.Def != nil && w.Def.Op == opPermute {
		if d, ok := ints(w.Def.Arg("dims"), 0); !ok || len(d) != 2 || !(d[0] == 1 || d[0] == -1) || !(d[1] == 0 || d[1] == -2) {
			return nil, "weight permute must be [1, 0]"
		}
		if w.NumUses() != 1 {
			return nil, "weight permute has other users"
		}
		m.perm = w.Def
		w = w.Def.Args[0].Value
		axis = 0
	}
	switch {
	case w.Def != nil && w.Def.Op == opDequantGrp:
		if m.perm == nil {
			return nil, "group-quantized weight must be [out, in] under a permute [1, 0]"
		}
		if w.NumUses() != 1 {
			return nil, "weight dequantize has other users"
		}
		m.wdq, m.w = w.Def, w.Def.Args[0].Value
		if m.group, why = qparamsGroupOf(m.wdq, isConst); why != "" {
			return nil, "weight dequantize: " + why
		}
	case isDequantW(w):
		if m.wq, why = matchWeight(w, isConst); why != "" {
			return nil, why
		}
		if !m.wq.perChannel() {
			return nil, "a dynamically quantized input needs a per-channel (qcint8) or group-wise (qbint4) weight"
		}
		if m.wq.axis != axis {
			return nil, "per-channel weight must be quantized along the output channels"
		}
		m.wdq, m.w = m.wq.dq, m.wq.w
	default:
		return nil, "a dynamically quantized input needs a quantized weight"
	}
	if fc.Op == opAddmm {
		if b := fc.Arg("self").Value; b.Tensor().DType != ir.Float32 || !isConst(b) {
			return nil, "bias must be an fp32 constant"
		}
	}
	return m, ""
}

// qparamsGroupOf checks a dequantize_per_channel_group of a 2-d int8
// constant holding 4-bit values ([-8, 7]) with constant fp32 scales (one
// per row and group) and constant integer zero points (or none), groups a
// multiple of XNNPACK's minimum block size; it returns the group size.
func qparamsGroupOf(n *ir.Node, isConst func(*ir.Value) bool) (int64, string) {
	w := n.Args[0].Value
	wt := w.Tensor()
	if wt.DType != ir.Int8 || !isConst(w) {
		return 0, "weight must be an int8 constant"
	}
	shape, ok := wt.StaticShape()
	if !ok || len(shape) != 2 {
		return 0, "weight must be a static matrix"
	}
	if d := n.Arg("output_dtype"); d.Kind != ir.ArgDType || d.DType() != ir.Float32 {
		return 0, "dequantize must produce fp32"
	}
	if d := n.Arg("dtype"); d.Kind != ir.ArgDType || d.DType() != ir.Int8 {
		return 0, "only int8-stored weights"
	}
	lo, ok1 := number(n.Arg("quant_min"))
	hi, ok2 := number(n.Arg("quant_max"))
	if !ok1 || !ok2 || lo != -8 || hi != 7 {
		return 0, "only 4-bit group-wise weights (quant range [-8, 7], qbint4)"
	}
	g := n.Arg("group_size")
	if g.Kind != ir.ArgInt {
		return 0, "group_size must be a literal"
	}
	st := n.Arg("scales").Value.Tensor()
	if !isConst(n.Arg("scales").Value) || st.DType != ir.Float32 {
		return 0, "scales must be an fp32 constant"
	}
	ss, ok := st.StaticShape()
	if !ok {
		return 0, "scales shape must be static"
	}
	group := g.Int
	if group > shape[1] && len(ss) > 0 && ss[len(ss)-1] == 1 {
		group = shape[1] // torch's rule for a single group per row
	}
	if group <= 1 || shape[1]%group != 0 {
		return 0, fmt.Sprintf("group size %d does not divide the %d input channels", group, shape[1])
	}
	if group%xnnMinBlock != 0 {
		return 0, fmt.Sprintf("group size %d is not a multiple of %d (XNNPACK's minimum block size)", group, xnnMinBlock)
	}
	want := shape[0] * shape[1] / group
	if numel(ss) != want {
		return 0, fmt.Sprintf("%d scales for %d groups", numel(ss), want)
	}
	if z := n.Arg("zero_points"); z.Kind == ir.ArgValue {
		zt := z.Value.Tensor()
		if !isConst(z.Value) || zt == nil || zt.DType.IsFloat() {
			return 0, "zero points must be an integer constant"
		}
	} else if z.Kind != ir.ArgNone {
		return 0, "zero points must be a tensor or None"
	}
	return group, ""
}

func numel(s []int64) int64 {
	n := int64(1)
	for _, d := range s {
		n *= d
	}
	return n
}

// checkDynFC matches the dynamically quantized fully-connected pattern
// around fc and checks that no config of its nodes is excluded (the
// pattern is claimed whole or not at all).
func (c *checker) checkDynFC(fc *ir.Node) string {
	m, why := matchDynFC(fc, func(v *ir.Value) bool { return c.consts[v] })
	if why != "" {
		return why
	}
	nodes := []*ir.Node{m.in.choose, m.in.q, m.in.dq, m.wdq, m.perm, m.view}
	for _, n := range nodes {
		if n != nil && c.exclude[ruleOf(n.Op).config] {
			return "its " + n.Op.Info().Name + " is excluded (" + ruleOf(n.Op).config + ")"
		}
	}
	return ""
}

// checkDynChoose: a choose_qparams whose quantize/dequantize pair is
// delegated.
func checkDynChoose(c *checker, n *ir.Node) string {
	if why := c.tensorOKAs(n.Args[0].Value, false); why != "" {
		return "input: " + why
	}
	for _, u := range n.Results[0].Uses() {
		if !u.IsReturn() && (u.Op == opQuantT || u.Op == opQuantTok) {
			return checkDynQuant(c, u)
		}
	}
	return "choose_qparams does not feed a dynamic quantize"
}

// checkDynQuant: a dynamic quantize whose dequantize is delegated.
func checkDynQuant(c *checker, n *ir.Node) string {
	if n.Results[0].NumUses() != 1 || n.Results[0].Uses()[0].IsReturn() {
		return "dynamic quantize must feed only its dequantize"
	}
	return checkDynDequant(c, n.Results[0].Uses()[0])
}

// checkDynDequant: a dynamic dequantize feeding only supported
// dynamically quantized fully-connected ops.
func checkDynDequant(c *checker, n *ir.Node) string {
	if n.Op != opDequantT && n.Op != opDequantTok {
		return "dynamic quantize must feed a dynamic dequantize"
	}
	if _, why := matchDynIn(n.Results[0]); why != "" {
		return why
	}
	// Each fully-connected op's rule (checkDynFC) checks the exclusions of
	// the whole pattern.
	if why := c.tensorOKAs(n.Results[0], false); why != "" {
		return "result: " + why
	}
	if readByConv(n.Results[0]) { // quant_dynamic_conv.go
		convs, why := dynConvUsers(n.Results[0])
		if why != "" {
			return why
		}
		for _, u := range convs {
			if why := c.supported(u); why != "" {
				return "its convolution is not delegated: " + why
			}
		}
		return ""
	}
	fcs, why := dynUsers(n.Results[0])
	if why != "" {
		return why
	}
	for _, u := range fcs {
		if why := c.supported(u); why != "" {
			return "its fully-connected op is not delegated: " + why
		}
	}
	return ""
}

// checkDequantGroup: a group-wise weight dequantize of a supported
// dynamically quantized fully-connected op.
func checkDequantGroup(c *checker, n *ir.Node) string {
	if _, why := qparamsGroupOf(n, func(v *ir.Value) bool { return c.consts[v] }); why != "" {
		return why
	}
	return checkDequantUsers(c, n)
}

// dynNeeds lists the nodes of the dynamically quantized pattern around fc
// (checker.needs): choose_qparams, quantize, dequantize, the weight's
// dequantize and permute, and the flattening / restoring view pair of a
// linear of rank > 2, which the serializer folds into the fully-connected
// node. The qdint8 value between them exists only inside the delegate.
func dynNeeds(fc *ir.Node, isConst func(*ir.Value) bool) []*ir.Node {
	m, why := matchDynFC(fc, isConst)
	if why != "" {
		return nil // not claimed: its rule refused it
	}
	out := []*ir.Node{m.in.choose, m.in.q, m.in.dq, m.wdq}
	if m.perm != nil {
		out = append(out, m.perm)
	}
	if m.view != nil {
		out = append(out, m.view, fc.Results[0].Uses()[0])
	}
	return out
}

// dynQNeeds lists what a dynamic choose_qparams, quantize or dequantize
// needs in its partition: the rest of the input quantization and, for the
// dequantize, the fully-connected ops reading it (the qdint8 value has no
// form outside the delegate). ok is false for other ops.
func dynQNeeds(n *ir.Node) ([]*ir.Node, bool) {
	switch n.Op {
	case opChooseQP, opChooseQPTok:
		return usersOf(n), true
	case opQuantT, opQuantTok:
		out := usersOf(n)
		if s := n.Args[1].Value; s != nil && s.Def != nil {
			out = append(out, s.Def)
		}
		return out, true
	case opDequantT, opDequantTok:
		out := []*ir.Node{}
		if q := n.Args[0].Value.Def; q != nil {
			out = append(out, q)
		}
		if readByConv(n.Results[0]) { // quant_dynamic_conv.go
			convs, _ := dynConvUsers(n.Results[0])
			return append(out, convs...), true
		}
		fcs, _ := dynUsers(n.Results[0])
		for _, fc := range fcs {
			if v := fcInput(fc); v.Def != nil && v.Def.Op == opView {
				out = append(out, v.Def)
			}
			out = append(out, fc)
		}
		return out, true
	}
	return nil, false
}
