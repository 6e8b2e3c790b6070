package xnnpack

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// planDynFC records the dynamically quantized fully-connected pattern
// around fc: choose_qparams, the weight dequantize and its permute are
// folded into the nodes the quantize and the fully-connected op write.
func (s *ser) planDynFC(fc *ir.Node, isConst func(*ir.Value) bool) error {
	m, why := matchDynFC(fc, isConst)
	if why != "" {
		return fc.Errorf("xnnpack: dynamically quantized fully-connected: %s", why)
	}
	if s.dfcs == nil {
		s.dfcs = map[*ir.Node]*dfc{}
	}
	s.dfcs[fc] = m
	s.skip[m.in.choose], s.skip[m.wdq] = true, true
	if m.perm != nil {
		s.skip[m.perm] = true
	}
	return nil
}

// dynNode writes a dynamic quantize as XNNConvert fp32 → qdint8 (per-token
// dynamic parameters over the last dim) and makes its dequantize an alias
// of the qdint8 value, which only fully-connected ops read.
func (s *ser) dynNode(n *ir.Node) error {
	if s.dynConvPart(n) { // quant_dynamic_conv.go
		if n.Op == opQuantT {
			return s.dynConvQuantize(n)
		}
		return s.dynConvDequantize(n)
	}
	switch n.Op {
	case opQuantT, opQuantTok:
		in, err := s.get(n.Args[0].Value)
		if err != nil {
			return err
		}
		r := n.Results[0]
		tv := &xnnfb.XNNTensorValueT{Datatype: xnnfb.XNNDatatypexnn_datatype_qdint8, ExternalId: internal}
		tv.Dims = dimsOf(r, s.env)
		tv.NumDims = uint32(len(tv.Dims))
		qid := s.defineRawQ(tv, &xnnfb.XNNQuantParamsT{Type: xnnfb.XNNQuantParamsPerTokenDynamicQuant,
			Value: &xnnfb.PerTokenDynamicQuantT{NumNonbatchDims: 1}})
		s.ids[r] = qid
		s.add(xnnfb.XNodeUnionXNNConvert, &xnnfb.XNNNode1x1T{InputId: in, OutputId: qid}, s.handle, nil)
		return nil
	case opDequantT, opDequantTok:
		q := n.Args[0].Value
		qid, ok := s.ids[q]
		if !ok {
			return fmt.Errorf("dynamic dequantize of %s, which has no qdint8 value", q)
		}
		r := n.Results[0]
		if _, isOut := s.outExt[r]; isOut {
			return fmt.Errorf("a dynamically dequantized value cannot be a delegate output")
		}
		for _, u := range r.Uses() {
			if !u.IsReturn() && u.Op == opView && s.skip[u] && u.Results[0].NumUses() == 1 {
				u = u.Results[0].Uses()[0] // linear's folded flattening view
			}
			if u.IsReturn() || s.dfcs[u] == nil || s.dfcs[u].in.dq != n {
				return fmt.Errorf("dynamically dequantized %s is read by a node other than a matched fully-connected op", r)
			}
		}
		s.ids[r] = qid
		s.tick = true
		return nil
	}
	return fmt.Errorf("%s outside a dynamically quantized fully-connected pattern", n.Op.Info().Name)
}

// dynFC writes the XNNFullyConnected of a matched pattern: qdint8 input,
// qcint8 (per output channel) or qbint4 (group-wise) [out, in] filter,
// fp32 bias, fp32 output (with a fused clamp when there is one).
func (s *ser) dynFC(n *ir.Node, m *dfc) error {
	in, ok := s.ids[m.in.dq.Results[0]]
	if !ok {
		return fmt.Errorf("input %s has no qdint8 value", m.in.dq.Results[0])
	}
	if m.view != nil && s.fcIn[n] == nil {
		return fmt.Errorf("the views around a flattened dynamically quantized linear could not be folded")
	}
	src, err := s.source(m.w)
	if err != nil {
		return fmt.Errorf("weight %s: %w", m.w, err)
	}
	wd := dimsOf(m.w, s.env)
	var filter uint32
	if m.wq != nil {
		if filter, _, err = s.fcFilter(m.wq, m.perm == nil); err != nil { // quant_qc4w.go
			return err
		}
	} else if filter, err = s.qb4Filter(m, wd, src.Size); err != nil {
		return err
	}
	bias := uint32(internal)
	if n.Op == opAddmm {
		var err error
		if bias, err = s.get(n.Arg("self").Value); err != nil {
			return err
		}
	}
	r, mm := s.result(n)
	out, err := s.output(r)
	if err != nil {
		return err
	}
	s.add(xnnfb.XNodeUnionXNNFullyConnected, &xnnfb.XNNFullyConnectedT{Input1Id: in, FilterId: filter, BiasId: bias, OutputId: out}, s.handle, mm)
	return nil
}

// qb4Filter defines the qbint4 filter of a group-quantized [out, in]
// weight: values in [-8, 7] stored as v+8, two per byte along the input
// channels (even index in the low nibble, as exir's convert_to_qc4w), dims
// [out, in], PerChannelGroupQuant with the fp32 scales [out, in/group]
// (XNNPACK rounds them to bf16), channel_dim 0 and the group size. Every
// zero point must be 0.
func (s *ser) qb4Filter(m *dfc, wd []uint32, size uint64) (uint32, error) {
	if len(wd) != 2 || wd[1]%2 != 0 || uint64(wd[0])*uint64(wd[1]) != size {
		return 0, fmt.Errorf("weight %s: %v with %d bytes is not an even-width int8 matrix", m.w, wd, size)
	}
	packed, err := s.derived(m.w, "packed to 4 bits", func(wb []byte) ([]byte, error) {
		return packQB4(wb)
	})
	if err != nil {
		return 0, fmt.Errorf("weight %s: %w", m.w, err)
	}
	sv := m.wdq.Arg("scales").Value
	sb, ok, err := s.constBytes(sv)
	if err != nil {
		return 0, fmt.Errorf("scales %s: %w", sv, err)
	}
	if !ok {
		return 0, fmt.Errorf("scales %s are not a constant", sv)
	}
	want := int(wd[0]) * int(wd[1]) / int(m.group)
	if len(sb) != 4*want {
		return 0, fmt.Errorf("scales %s: %d bytes for %d fp32 scales", sv, len(sb), want)
	}
	scales := make([]float32, want)
	for i := range scales {
		x := math.Float32frombits(binary.LittleEndian.Uint32(sb[4*i:]))
		if !(x > 0) || math.IsInf(float64(x), 0) {
			return 0, fmt.Errorf("scales %s: scale %d is %g (must be positive and finite)", sv, i, x)
		}
		scales[i] = x
	}
	if z := m.wdq.Arg("zero_points"); z.Kind == ir.ArgValue {
		zb, ok, err := s.constBytes(z.Value)
		if err != nil {
			return 0, fmt.Errorf("zero points %s: %w", z.Value, err)
		}
		if !ok {
			return 0, fmt.Errorf("zero points %s are not a constant", z.Value)
		}
		for i, c := range zb {
			if c != 0 {
				return 0, fmt.Errorf("zero points %s: value %d is not 0 (XNNPACK needs symmetric 4-bit weights)", z.Value, i/z.Value.Tensor().DType.Size())
			}
		}
	}
	idx := s.constRaw(packed)
	tv := &xnnfb.XNNTensorValueT{Datatype: xnnfb.XNNDatatypexnn_datatype_qbint4, NumDims: 2, Dims: wd, ConstantBufferIdx: idx, ExternalId: internal}
	return s.defineRawQ(tv, &xnnfb.XNNQuantParamsT{Type: xnnfb.XNNQuantParamsPerChannelGroupQuant,
		Value: &xnnfb.PerChannelGroupQuantT{Scale: scales, ChannelDim: 0, GroupSize: int32(m.group)}}), nil
}

// packQB4 packs int8 values in [-8, 7] as v+8, two per byte (the even
// index in the low nibble).
func packQB4(wb []byte) ([]byte, error) {
	if len(wb)%2 != 0 {
		return nil, fmt.Errorf("%d values is not an even count", len(wb))
	}
	packed := make([]byte, len(wb)/2)
	for i := 0; i < len(wb); i += 2 {
		lo, hi := int8(wb[i]), int8(wb[i+1])
		if lo < -8 || lo > 7 || hi < -8 || hi > 7 {
			return nil, fmt.Errorf("value at %d is outside the 4-bit range [-8, 7]", i)
		}
		packed[i/2] = byte(lo+8) | byte(hi+8)<<4
	}
	return packed, nil
}

// defineRawQ appends a quantized tensor value with the given parameters
// and returns its id.
func (s *ser) defineRawQ(tv *xnnfb.XNNTensorValueT, qp *xnnfb.XNNQuantParamsT) uint32 {
	id := uint32(len(s.g.Xvalues))
	tv.IdOut = id
	s.g.Xvalues = append(s.g.Xvalues, &xnnfb.XValueT{XvalueUnion: &xnnfb.XValueUnionT{Type: xnnfb.XValueUnionXNNQuantizedTensorValue,
		Value: &xnnfb.XNNQuantizedTensorValueT{TensorValue: tv, QuantParams: qp}}})
	return id
}
