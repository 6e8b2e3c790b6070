package xnnpack

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// planQuant matches the quantized fully-connected patterns of a region:
// the weight dequantize and permute fold into the qint8 filter, and the
// output quantize / dequantize pair is written with the fully-connected
// node (its qint8 output and XNNConvert back to fp32).
func (s *ser) planQuant(region *ir.Graph) error {
	isConst := func(v *ir.Value) bool { _, ok := s.consts[v]; return ok }
	for _, n := range region.Nodes() {
		var io *qio
		var wd *ir.Node
		switch {
		case isFC(n) && dynFC(n):
			if err := s.planDynFC(n, isConst); err != nil {
				return err
			}
			continue
		case isFC(n) && quantFC(n):
			m, why := matchQFC(n, isConst)
			if why != "" {
				return n.Errorf("xnnpack: quantized fully-connected: %s", why)
			}
			s.qfcs[n] = m
			if m.perm != nil {
				s.skip[m.perm] = true
			}
			io, wd = &m.qio, m.wq.dq
		case quantAdd(n):
			m, why := matchQAdd(n)
			if why != "" {
				return n.Errorf("xnnpack: quantized add: %s", why)
			}
			s.qadds[n] = m
			s.skip[m.yq] = true
			for _, d := range m.outDequant {
				s.skip[d] = true
			}
			continue
		case quantPool(n):
			m, why := matchQPool(n) // quant_pool.go
			if why != "" {
				return n.Errorf("xnnpack: quantized pooling: %s", why)
			}
			s.qpools[n] = m
			s.skip[m.yq] = true
			for _, d := range m.outDequant {
				s.skip[d] = true
			}
			continue
		case dynConv(n): // quant_dynamic_conv.go
			if err := s.planDynConv(n, isConst); err != nil {
				return err
			}
			continue
		case quantConv(n):
			m, why := matchQConv(n, isConst)
			if why != "" {
				return n.Errorf("xnnpack: quantized convolution: %s", why)
			}
			s.qconvs[n] = m
			io, wd = &m.qio, m.wq.dq
		default:
			continue
		}
		s.skip[wd] = true
		s.skip[io.yq] = true
		for _, d := range io.outDequant {
			s.skip[d] = true
		}
	}
	return nil
}

func qint8Of(p qparams) *quant {
	return &quant{dt: xnnfb.XNNDatatypexnn_datatype_qint8, scale: float32(p.scale), zp: int32(p.zp)}
}

// quantize emits nothing itself (its dequantize writes the conversion)
// but takes a debug handle, as exir numbers the pair.
func (s *ser) quantize(n *ir.Node) error {
	if _, why := qparamsOf(n); why != "" {
		return fmt.Errorf("%s", why)
	}
	s.tick = true
	return nil
}

// dequantize of a quantize: XNNConvert fp32→qint8 for the quantized value
// (once), then its fp32 form is the qint8 value itself when only quantized
// fully-connected ops read it, else an XNNConvert back to fp32.
func (s *ser) dequantize(n *ir.Node) error {
	p, why := qparamsOf(n)
	if why != "" {
		return fmt.Errorf("%s", why)
	}
	q := n.Args[0].Value
	if q.Def == nil || q.Def.Op != opQuant {
		return fmt.Errorf("dequantize of %s: only a quantize's result (or a quantized weight) is supported", q)
	}
	if s.convInput(n) {
		return s.dequantizeNHWC(n, p)
	}
	qid, ok := s.ids[q]
	if !ok {
		in, err := s.get(q.Def.Args[0].Value)
		if err != nil {
			return err
		}
		if qid, err = s.defineQ(q, dimsOf(q, s.env), internal, 0, 0, qint8Of(p)); err != nil {
			return err
		}
		s.ids[q] = qid
		s.add(xnnfb.XNodeUnionXNNConvert, &xnnfb.XNNNode1x1T{InputId: in, OutputId: qid}, s.handle, nil)
	}
	r := n.Results[0]
	_, isOut := s.outExt[r]
	alias := !isOut && r.NumUses() > 0
	for _, u := range r.Uses() {
		if u.IsReturn() || (s.qfcs[u] == nil || s.qfcs[u].xd != n) && !s.readsAsQAdd(u, n) {
			alias = false
		}
	}
	if alias {
		s.ids[r] = qid
		return nil
	}
	out, err := s.output(r)
	if err != nil {
		return err
	}
	s.add(xnnfb.XNodeUnionXNNConvert, &xnnfb.XNNNode1x1T{InputId: qid, OutputId: out}, s.handle, nil)
	return nil
}

// quantFC writes a qint8 XNNFullyConnected: filter [out, in] qint8 (qcint8
// per output channel), bias quantized to qint32 with scale s_x·s_w
// (qcint32 with scales s_x·s_w[c]) and zero point 0, output qint8, then
// XNNConvert of the output to each fp32 dequantized result.
func (s *ser) quantFC(n *ir.Node, m *qfc) error {
	in, err := s.qNCHWOf(m.xq, m.x) // quant_nhwc.go
	if err != nil {
		return err
	}
	filter, wq, err := s.fcFilter(m.wq, m.perm == nil) // quant_qc4w.go
	if err != nil {
		return err
	}
	bias := uint32(internal)
	if n.Op == opAddmm {
		if bias, err = s.quantBias(n.Arg("self").Value, m.x.scale, wq); err != nil {
			return err
		}
	}
	out, err := s.quantOut(&m.qio, false)
	if err != nil {
		return err
	}
	s.add(xnnfb.XNodeUnionXNNFullyConnected, &xnnfb.XNNFullyConnectedT{Input1Id: in, FilterId: filter, BiasId: bias, OutputId: out}, s.handle, nil)
	return s.quantOutConverts(&m.qio, out, false)
}

// quantOut defines the qint8 output of a quantized pattern (NHWC for a
// convolution).
func (s *ser) quantOut(m *qio, nhwc bool) (uint32, error) {
	yq := m.yq.Results[0]
	d := dimsOf(yq, s.env)
	if nhwc {
		d = permDims(d, toNHWC)
	}
	out, err := s.defineQ(yq, d, internal, 0, 0, qint8Of(m.yp))
	if err != nil {
		return 0, err
	}
	if nhwc {
		s.nhwc[yq] = out
	} else {
		s.ids[yq] = out
	}
	return out, nil
}

// quantOutConverts writes XNNConvert of the qint8 output to each fp32
// dequantized result (their NHWC forms for a convolution).
func (s *ser) quantOutConverts(m *qio, out uint32, nhwc bool) error {
	for _, d := range m.outDequant {
		if s.onlyQuantReaders(d) { // quant_nhwc.go
			continue
		}
		var o uint32
		var err error
		if nhwc {
			o, err = s.outputNHWC(d.Results[0])
		} else {
			o, err = s.output(d.Results[0])
		}
		if err != nil {
			return err
		}
		s.add(xnnfb.XNodeUnionXNNConvert, &xnnfb.XNNNode1x1T{InputId: out, OutputId: o}, s.handle, nil)
	}
	return nil
}

// quantBias quantizes the fp32 constant bias b to int32 with scale
// s_x·s_w (qint32), or s_x·s_w[c] per channel (qcint32 along dim 0).
func (s *ser) quantBias(b *ir.Value, sx float64, wq *quant) (uint32, error) {
	src, ok := s.consts[b]
	if !ok {
		return 0, fmt.Errorf("bias %s is not a constant", b)
	}
	q := &quant{dt: xnnfb.XNNDatatypexnn_datatype_qint32, scale: float32(sx) * wq.scale}
	scales := []float32{q.scale}
	if wq.scales != nil {
		q.dt, q.scale = xnnfb.XNNDatatypexnn_datatype_qcint32, 0
		q.scales = make([]float32, len(wq.scales))
		for i, sw := range wq.scales {
			q.scales[i] = float32(sx) * sw
		}
		scales = q.scales
		if src.Size != 4*uint64(len(scales)) {
			return 0, fmt.Errorf("bias %s: %d bytes for %d channels", b, src.Size, len(scales))
		}
	}
	data, err := s.derived(b, "quantized to int32", func(fb []byte) ([]byte, error) { return quantizeBias(fb, scales) })
	if err != nil {
		return 0, fmt.Errorf("bias %s: %w", b, err)
	}
	return s.constValueQ(b, dimsOf(b, s.env), data, q)
}

// quantizeBias rounds fp32 little-endian values to int32 multiples of their
// scale (one for all, or one per value; half to even), saturating.
func quantizeBias(b []byte, scales []float32) ([]byte, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of fp32 values", len(b))
	}
	out := make([]byte, len(b))
	for i := 0; i < len(b); i += 4 {
		scale := scales[0]
		if len(scales) > 1 {
			scale = scales[i/4]
		}
		v := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))) / float64(scale)
		q := math.RoundToEven(v)
		q = math.Max(math.MinInt32, math.Min(math.MaxInt32, q))
		if math.IsNaN(v) {
			return nil, fmt.Errorf("NaN bias value")
		}
		binary.LittleEndian.PutUint32(out[i:], uint32(int32(q)))
	}
	return out, nil
}
