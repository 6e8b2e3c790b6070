package xnnpack

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// convInput reports whether dequantize n feeds only quantized convolutions
// (as their input) and is not a region output: its qint8 value is then used
// in NHWC form directly.
func (s *ser) convInput(n *ir.Node) bool {
	r := n.Results[0]
	if _, isOut := s.outExt[r]; isOut || r.NumUses() == 0 {
		return false
	}
	for _, u := range r.Uses() {
		if u.IsReturn() {
			return false
		}
		if m := s.qpools[u]; m != nil && m.xd == n { // quant_pool.go: NHWC too
			continue
		}
		if s.qconvs[u] == nil || s.qconvs[u].xd != n {
			return false
		}
	}
	return true
}

// dequantizeNHWC writes XNNConvert fp32→qint8 of the NHWC form of the
// quantize's input (once) and makes it the NHWC form of n's result.
func (s *ser) dequantizeNHWC(n *ir.Node, p qparams) error {
	q := n.Args[0].Value
	qid, ok := s.nhwc[q]
	if !ok {
		in, err := s.getNHWC(q.Def.Args[0].Value)
		if err != nil {
			return err
		}
		if qid, err = s.defineQ(q, permDims(dimsOf(q, s.env), toNHWC), internal, 0, 0, qint8Of(p)); err != nil {
			return err
		}
		s.nhwc[q] = qid
		s.add(xnnfb.XNodeUnionXNNConvert, &xnnfb.XNNNode1x1T{InputId: in, OutputId: qid}, s.handle, nil)
	}
	s.nhwc[n.Results[0]] = qid
	return nil
}

// quantConv writes a qint8 XNNConv2d or XNNDepthwiseConv2d on NHWC
// values: filter OHWI (1HWO depthwise) qint8, or qcint8 along the output
// channels (channel_dim 0, 3 for depthwise), bias as for quantFC, output
// qint8 NHWC converted to each fp32 dequantized result.
func (s *ser) quantConv(n *ir.Node, m *qconv) error {
	in, err := s.qNHWCOf(m.xq, m.x) // quant_nhwc.go
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	w := m.wq.w
	if _, ok := s.consts[w]; !ok {
		return fmt.Errorf("weight %s is not a constant", w)
	}
	wd := dimsOf(w, s.env)
	kind, perm, node := s.convShape(n, wd)
	chDim := int32(0)
	if kind == xnnfb.XNodeUnionXNNDepthwiseConv2d {
		chDim = 3
	}
	wq, err := s.weightQuant(m.wq, chDim)
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
		if bias, err = s.quantBias(b.Value, m.x.scale, wq); err != nil {
			return err
		}
	}
	out, err := s.quantOut(&m.qio, true)
	if err != nil {
		return err
	}
	node.Input1Id, node.FilterId, node.BiasId, node.OutputId = in, filter, bias, out
	s.add(kind, node, s.handle, nil)
	return s.quantOutConverts(&m.qio, out, true)
}

// weightQuant is the XNNPACK quantization of a weight: qint8 per tensor, or
// qcint8 along chDim with the scales read from their constant (every zero
// point must be 0).
func (s *ser) weightQuant(w *wquant, chDim int32) (*quant, error) {
	if !w.perChannel() {
		return qint8Of(w.pt), nil
	}
	sv := w.dq.Arg("scales").Value
	sb, ok, err := s.constBytes(sv)
	if err != nil {
		return nil, fmt.Errorf("scales %s: %w", sv, err)
	}
	if !ok {
		return nil, fmt.Errorf("scales %s are not a constant", sv)
	}
	var scales []float32
	switch sv.Tensor().DType {
	case ir.Float32:
		for i := 0; i+4 <= len(sb); i += 4 {
			scales = append(scales, math.Float32frombits(binary.LittleEndian.Uint32(sb[i:])))
		}
	case ir.Float64:
		for i := 0; i+8 <= len(sb); i += 8 {
			scales = append(scales, float32(math.Float64frombits(binary.LittleEndian.Uint64(sb[i:]))))
		}
	default:
		return nil, fmt.Errorf("scales %s: dtype %s", sv, sv.Tensor().DType)
	}
	ch := dimsOf(w.w, s.env)[w.axis]
	if len(scales) != int(ch) {
		return nil, fmt.Errorf("scales %s: %d values for %d channels", sv, len(scales), ch)
	}
	for i, x := range scales {
		if !(x > 0) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("scales %s: scale %d is %g (must be positive and finite)", sv, i, x)
		}
	}
	if z := w.dq.Arg("zero_points"); z.Kind == ir.ArgValue {
		zb, ok, err := s.constBytes(z.Value)
		if err != nil {
			return nil, fmt.Errorf("zero points %s: %w", z.Value, err)
		}
		if !ok {
			return nil, fmt.Errorf("zero points %s are not a constant", z.Value)
		}
		for i, c := range zb {
			if c != 0 {
				return nil, fmt.Errorf("zero points %s: value %d is not 0 (XNNPACK needs symmetric weights)", z.Value, i/z.Value.Tensor().DType.Size())
			}
		}
	}
	return &quant{dt: xnnfb.XNNDatatypexnn_datatype_qcint8, scales: scales, dim: chDim}, nil
}
