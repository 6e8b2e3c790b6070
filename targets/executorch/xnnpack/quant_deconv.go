package xnnpack

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// Quantized transposed convolution (static qint8): dequantize(qint8 input)
// → convolution(transposed=True) with a dequantized int8 constant weight →
// quantize, matched by matchQConv like the regular one and written as a
// qint8 XNNConvTranspose2d on NHWC values. The filter has the fp32 path's
// layout (deconv: [groups·O, kh, kw, I]); a per-channel weight must be
// quantized along torch's output-channel axis 1 of [groups·I, O, kh, kw]
// with groups 1 (exir's ConvolutionConfig refuses per-channel transposed
// weights with groups > 1 or another axis), and becomes qcint8 along the
// filter's dim 0, its output channels.

// deconvWeightAxis checks a transposed convolution's weight quantization:
// per tensor, or per channel along axis 1 with groups 1.
func deconvWeightAxis(n *ir.Node, w *wquant) string {
	if !w.perChannel() {
		return ""
	}
	if g := n.Arg("groups"); g.Kind != ir.ArgInt || g.Int != 1 || w.axis != 1 {
		return "per-channel weight of a transposed convolution must be quantized along the output channels (axis 1) with groups 1"
	}
	return ""
}

// quantDeconv writes the qint8 XNNConvTranspose2d of a matched pattern:
// input the NHWC qint8 value, filter qint8 (qcint8 along dim 0), bias as
// for quantConv, output qint8 NHWC converted to each fp32 dequantized
// result.
func (s *ser) quantDeconv(n *ir.Node, m *qconv) error {
	w := m.wq.w
	if _, ok := s.consts[w]; !ok {
		return fmt.Errorf("weight %s is not a constant", w)
	}
	g := n.Arg("groups").Int
	wd := dimsOf(w, s.env) // [groups·I, O, kh, kw]
	if g < 1 || len(wd) != 4 || int64(wd[0])%g != 0 {
		return fmt.Errorf("transposed convolution with groups %d and weight dims %v", g, wd)
	}
	in, err := s.qNHWCOf(m.xq, m.x) // quant_nhwc.go
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	wq, err := s.weightQuant(m.wq, 0)
	if err != nil {
		return err
	}
	gi := wd[0] / uint32(g)
	gd := []uint32{uint32(g), gi, wd[1], wd[2], wd[3]}
	perm := []int{0, 2, 3, 4, 1} // [groups, O, kh, kw, I]
	fd := []uint32{uint32(g) * wd[1], wd[2], wd[3], gi}
	l, err := s.permuted(w, gd, perm, 1)
	if err != nil {
		return err
	}
	filter, err := s.constValueQ(w, fd, l, wq)
	if err != nil {
		return err
	}
	bias := uint32(internal)
	if b := n.Arg("bias"); b.Kind == ir.ArgValue {
		if bias, err = s.quantBias(b.Value, m.x.scale, wq); err != nil {
			return err
		}
	}
	out, err := s.quantOut(&m.qio, true)
	if err != nil {
		return err
	}
	stride, _ := ints(n.Arg("stride"), 2)
	pad, _ := ints(n.Arg("padding"), 2)
	dil, _ := ints(n.Arg("dilation"), 2)
	adj, _ := ints(n.Arg("output_padding"), 2)
	s.add(xnnfb.XNodeUnionXNNConvTranspose2d, &xnnfb.XNNNodeConvT{
		PaddingTop: uint32(pad[0]), PaddingRight: uint32(pad[1]), PaddingBottom: uint32(pad[0]), PaddingLeft: uint32(pad[1]),
		KernelHeight: wd[2], KernelWidth: wd[3], SubsamplingHeight: uint32(stride[0]), SubsamplingWidth: uint32(stride[1]),
		DilationHeight: uint32(dil[0]), DilationWidth: uint32(dil[1]),
		GroupInputChannels: gi, GroupOutputChannels: wd[1], Groups: uint32(g),
		AdjustmentHeight: uint32(adj[0]), AdjustmentWidth: uint32(adj[1]),
		Input1Id: in, FilterId: filter, BiasId: bias, OutputId: out,
	}, s.handle, nil)
	return s.quantOutConverts(&m.qio, out, true)
}
