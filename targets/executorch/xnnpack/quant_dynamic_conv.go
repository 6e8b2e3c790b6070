package xnnpack

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// Dynamically quantized convolution (PT2E's dynamic config on a conv2d):
//
//	s, z = choose_qparams.tensor(x, -128, 127, eps, int8)
//	xq = quantize_per_tensor.tensor(x, s, z, …); xd = dequantize_per_tensor.tensor(xq, s, z, …)
//	y = convolution(xd, dequantize_per_channel(int8 constant, scales, zero points, 0), bias, …)
//
// with a rank-4 input, transposed False and a convolution that is not
// depthwise. exir's ConvolutionConfig (gemm_configs.py) takes the
// DYNAMIC_QUANT precision for it (a per-tensor weight behind a dynamic
// input is refused, and so are non-2-D and depthwise convolutions);
// ChannelsLastTaggedReshapePass moves the channels-last copy in front of
// the choose_qparams / quantize chain, so the quantize's XNNConvert (exir's
// OpDynamicQuantizePerTensor) reads the NHWC fp32 input and writes an
// internal qdint8 value of NHWC dims with PerTokenDynamicQuant whose
// num_nonbatch_dims is what exir's QuantParams._from_dynamic_input_node
// writes for every dynamic input: 1. The convolution is an XNNConv2d with
// that input, a qcint8 OHWI filter (channel_dim 0), the fp32 bias as it is
// (from_bias leaves it unquantized for a dynamic input) and an fp32 NHWC
// output.

// dconv is a matched dynamically quantized convolution.
type dconv struct {
	in *dynIn
	wq *wquant // per-channel along axis 0
}

// dynConv reports whether n is a convolution reading a dynamically
// dequantized input.
func dynConv(n *ir.Node) bool {
	return n.Op == opConv && isDynDequant(n.Arg("input").Value)
}

// readByConv reports whether a use of x is a convolution (the pattern is
// then the convolution one: its qdint8 value is NHWC).
func readByConv(x *ir.Value) bool {
	for _, u := range x.Uses() {
		if !u.IsReturn() && u.Op == opConv {
			return true
		}
	}
	return false
}

// dynConvUsers returns the convolutions reading dynamically dequantized x,
// or the reason x has another kind of user.
func dynConvUsers(x *ir.Value) ([]*ir.Node, string) {
	var out []*ir.Node
	for _, u := range x.Uses() {
		if u.IsReturn() || u.Op != opConv || u.Arg("input").Value != x {
			return nil, "a dynamically quantized convolution input must feed only convolutions (as their input)"
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, "unused dequantize"
	}
	return out, ""
}

// matchDynConv matches the pattern around convolution n; the reason is
// empty on a match.
func matchDynConv(n *ir.Node, isConst func(*ir.Value) bool) (*dconv, string) {
	x := n.Arg("input").Value
	in, why := matchDynIn(x)
	if why != "" {
		return nil, why
	}
	if in.dq.Op != opDequantT {
		return nil, "a dynamically quantized convolution input must be quantized per tensor (choose_qparams.tensor)"
	}
	if _, why := dynConvUsers(x); why != "" {
		return nil, why
	}
	if n.Arg("transposed").Bool() {
		return nil, "XNNPACK has no dynamically quantized transposed convolution"
	}
	if t := x.Tensor(); t == nil || t.Rank() != 4 {
		return nil, "only 2-D convolution (rank-4 input)"
	}
	w := n.Arg("weight").Value
	if !isDequantW(w) {
		return nil, "a dynamically quantized input needs a quantized weight"
	}
	m := &dconv{in: in}
	if m.wq, why = matchWeight(w, isConst); why != "" {
		return nil, why
	}
	if !m.wq.perChannel() {
		return nil, "a dynamically quantized input needs a per-channel (qcint8) weight"
	}
	if m.wq.axis != 0 {
		return nil, "per-channel weight must be quantized along the output channels (axis 0)"
	}
	ws, _ := m.wq.w.Tensor().StaticShape()
	if len(ws) != 4 {
		return nil, "weight must be rank 4"
	}
	g := n.Arg("groups")
	if g.Kind != ir.ArgInt || g.Int < 1 {
		return nil, "groups must be a positive literal"
	}
	if g.Int > 1 && ws[1] == 1 { // convShape's depthwise rule

		return nil, "XNNPACK has no dynamically quantized depthwise convolution"
	}
	if b := n.Arg("bias"); b.Kind == ir.ArgValue {
		if b.Value.Tensor().DType != ir.Float32 || !isConst(b.Value) {
			return nil, "bias must be an fp32 constant"
		}
	}
	return m, ""
}

// checkDynConv matches the pattern around conv n and checks that no config
// of its nodes is excluded (the pattern is claimed whole or not at all).
func (c *checker) checkDynConv(n *ir.Node) string {
	m, why := matchDynConv(n, func(v *ir.Value) bool { return c.consts[v] })
	if why != "" {
		return why
	}
	for _, p := range []*ir.Node{m.in.choose, m.in.q, m.in.dq, m.wq.dq} {
		if c.exclude[ruleOf(p.Op).config] {
			return "its " + p.Op.Info().Name + " is excluded (" + ruleOf(p.Op).config + ")"
		}
	}
	return ""
}

// dynConvNeeds lists what a dynamically quantized convolution needs in its
// partition (checker.needs): choose_qparams, quantize, dequantize and the
// weight's dequantize; the qdint8 value between them exists only inside
// the delegate and the filter is baked from the weight's int8 constant.
func dynConvNeeds(n *ir.Node, isConst func(*ir.Value) bool) []*ir.Node {
	m, why := matchDynConv(n, isConst)
	if why != "" {
		return nil // not claimed: its rule refused it
	}
	return []*ir.Node{m.in.choose, m.in.q, m.in.dq, m.wq.dq}
}

// planDynConv records the pattern around conv n: choose_qparams and the
// weight dequantize fold into the nodes the quantize and the convolution
// write.
func (s *ser) planDynConv(n *ir.Node, isConst func(*ir.Value) bool) error {
	m, why := matchDynConv(n, isConst)
	if why != "" {
		return n.Errorf("xnnpack: dynamically quantized convolution: %s", why)
	}
	if s.dconvs == nil {
		s.dconvs = map[*ir.Node]*dconv{}
	}
	s.dconvs[n] = m
	s.skip[m.in.choose], s.skip[m.wq.dq] = true, true
	return nil
}

// dynConvQuantize writes quantize q of a dynamically quantized convolution
// input: XNNConvert of the NHWC form of its fp32 input into an internal
// qdint8 value of NHWC dims (PerTokenDynamicQuant, num_nonbatch_dims 1).
func (s *ser) dynConvQuantize(q *ir.Node) error {
	in, err := s.getNHWC(q.Args[0].Value)
	if err != nil {
		return err
	}
	r := q.Results[0]
	tv := &xnnfb.XNNTensorValueT{Datatype: xnnfb.XNNDatatypexnn_datatype_qdint8, ExternalId: internal}
	tv.Dims = permDims(dimsOf(r, s.env), toNHWC)
	tv.NumDims = uint32(len(tv.Dims))
	qid := s.defineRawQ(tv, &xnnfb.XNNQuantParamsT{Type: xnnfb.XNNQuantParamsPerTokenDynamicQuant,
		Value: &xnnfb.PerTokenDynamicQuantT{NumNonbatchDims: 1}})
	s.ids[r] = qid
	s.add(xnnfb.XNodeUnionXNNConvert, &xnnfb.XNNNode1x1T{InputId: in, OutputId: qid}, s.handle, nil)
	return nil
}

// dynConvDequantize makes dequantize d an alias of its quantize's NHWC
// qdint8 value, which only matched convolutions read.
func (s *ser) dynConvDequantize(d *ir.Node) error {
	q := d.Args[0].Value
	qid, ok := s.ids[q]
	if !ok {
		return fmt.Errorf("dynamic dequantize of %s, which has no qdint8 value", q)
	}
	r := d.Results[0]
	if _, isOut := s.outExt[r]; isOut {
		return fmt.Errorf("a dynamically dequantized value cannot be a delegate output")
	}
	for _, u := range r.Uses() {
		if u.IsReturn() || s.dconvs[u] == nil || s.dconvs[u].in.dq != d {
			return fmt.Errorf("dynamically dequantized %s is read by a node other than a matched convolution", r)
		}
	}
	s.ids[r] = qid
	s.tick = true
	return nil
}

// dynConvNode writes the XNNConv2d of a matched pattern: qdint8 NHWC
// input, qcint8 OHWI filter (channel_dim 0), fp32 bias, fp32 NHWC output
// (with a fused clamp when there is one).
func (s *ser) dynConvNode(n *ir.Node, m *dconv) error {
	in, ok := s.ids[m.in.dq.Results[0]]
	if !ok {
		return fmt.Errorf("input %s has no qdint8 value", m.in.dq.Results[0])
	}
	w := m.wq.w
	wd := dimsOf(w, s.env)
	kind, perm, node := s.convShape(n, wd)
	if kind != xnnfb.XNodeUnionXNNConv2d {
		return fmt.Errorf("dynamically quantized %s is not supported", kind)
	}
	wq, err := s.weightQuant(m.wq, 0) // quant_conv.go
	if err != nil {
		return err
	}
	l, err := s.permuted(w, wd, perm, 1)
	if err != nil {
		return err
	}
	filter, err := s.constValueQ(w, permDims(wd, perm), l, wq)
	if err != nil {
		return err
	}
	bias := uint32(internal)
	if b := n.Arg("bias"); b.Kind == ir.ArgValue {
		if bias, err = s.get(b.Value); err != nil {
			return err
		}
	}
	r, mm := s.result(n)
	out, err := s.outputNHWC(r)
	if err != nil {
		return err
	}
	node.Input1Id, node.FilterId, node.BiasId, node.OutputId = in, filter, bias, out
	s.add(kind, node, s.handle, mm)
	return nil
}

// dynConvPart reports whether dynamic quantize or dequantize n belongs to
// a matched dynamically quantized convolution (its dequantize feeds one).
func (s *ser) dynConvPart(n *ir.Node) bool {
	d := n
	if n.Op == opQuantT {
		us := n.Results[0].Uses()
		if len(us) != 1 || us[0].IsReturn() {
			return false
		}
		d = us[0]
	}
	if d.Op != opDequantT {
		return false
	}
	for _, u := range d.Results[0].Uses() {
		if !u.IsReturn() && s.dconvs[u] != nil {
			return true
		}
	}
	return false
}
