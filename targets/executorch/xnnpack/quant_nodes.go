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
	for _, n := range region.Nodes() {
		if !isFC(n) || !quantFC(n) {
			continue
		}
		m, why := matchQFC(n, func(v *ir.Value) bool { _, ok := s.consts[v]; return ok })
		if why != "" {
			return n.Errorf("xnnpack: quantized fully-connected: %s", why)
		}
		s.qfcs[n] = m
		s.skip[m.wd] = true
		if m.perm != nil {
			s.skip[m.perm] = true
		}
		s.skip[m.yq] = true
		for _, d := range m.outDequant {
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
		if u.IsReturn() || s.qfcs[u] == nil || s.qfcs[u].xd != n {
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

// quantFC writes a qint8 XNNFullyConnected: filter [out, in] qint8, bias
// quantized to qint32 with scale s_x·s_w and zero point 0, output qint8,
// then XNNConvert of the output to each fp32 dequantized result.
func (s *ser) quantFC(n *ir.Node, m *qfc) error {
	in, err := s.get(m.xd.Results[0])
	if err != nil {
		return err
	}
	wb, ok := s.consts[m.w]
	if !ok {
		return fmt.Errorf("weight %s is not a constant", m.w)
	}
	wd := dimsOf(m.w, s.env)
	if m.perm == nil { // [in, out] → [out, in]
		wb = permuteBytes(wb, wd, []int{1, 0}, 1)
		wd = permDims(wd, []int{1, 0})
	}
	filter, err := s.constValueQ(m.w, wd, wb, qint8Of(m.wp))
	if err != nil {
		return err
	}
	bias := uint32(internal)
	if n.Op == opAddmm {
		b := n.Arg("self").Value
		fb, ok := s.consts[b]
		if !ok {
			return fmt.Errorf("bias %s is not a constant", b)
		}
		bs := float32(m.x.scale) * float32(m.wp.scale)
		data, err := quantizeBias(fb, bs)
		if err != nil {
			return fmt.Errorf("bias %s: %w", b, err)
		}
		if bias, err = s.constValueQ(b, dimsOf(b, s.env), data, &quant{dt: xnnfb.XNNDatatypexnn_datatype_qint32, scale: bs}); err != nil {
			return err
		}
	}
	yq := m.yq.Results[0]
	out, err := s.defineQ(yq, dimsOf(yq, s.env), internal, 0, 0, qint8Of(m.yp))
	if err != nil {
		return err
	}
	s.ids[yq] = out
	s.add(xnnfb.XNodeUnionXNNFullyConnected, &xnnfb.XNNFullyConnectedT{Input1Id: in, FilterId: filter, BiasId: bias, OutputId: out}, s.handle, nil)
	for _, d := range m.outDequant {
		o, err := s.output(d.Results[0])
		if err != nil {
			return err
		}
		s.add(xnnfb.XNodeUnionXNNConvert, &xnnfb.XNNNode1x1T{InputId: out, OutputId: o}, s.handle, nil)
	}
	return nil
}

// quantizeBias rounds fp32 little-endian values to int32 multiples of scale
// (half to even), saturating.
func quantizeBias(b []byte, scale float32) ([]byte, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of fp32 values", len(b))
	}
	out := make([]byte, len(b))
	for i := 0; i < len(b); i += 4 {
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
