package run

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// xquant is a value's static quantization: per tensor, or per channel along
// dim (scales has one entry per channel).
type xquant struct {
	scales    []float64
	zeroPoint int64
	dim       int
	group     int64 // > 0: group-wise along dim 1 (scales [dims[0], dims[1]/group]; xquant_dynamic.go)
	dynamic   int   // > 0: per-token dynamic over this many trailing dims (xquant_dynamic.go)
}

// checkScales reports whether the scales fit the dims they quantize: one
// per channel along dim, or, group-wise (blockwise 4-bit weights), one per
// channel and group of dim 1. Dynamic quantization carries none.
func (xq *xquant) checkScales(dims []uint32) error {
	if xq.dynamic > 0 || len(xq.scales) <= 1 {
		return nil
	}
	if xq.dim < 0 || xq.dim >= len(dims) {
		return fmt.Errorf("per-channel scales along dim %d of dims %v", xq.dim, dims)
	}
	want := int64(dims[xq.dim])
	if xq.group > 0 {
		if len(dims) < 2 || int64(dims[1])%xq.group != 0 {
			return fmt.Errorf("group size %d does not divide dim 1 of dims %v", xq.group, dims)
		}
		want *= int64(dims[1]) / xq.group
	}
	if int64(len(xq.scales)) != want {
		what := "per-channel"
		if xq.group > 0 {
			what = fmt.Sprintf("group-wise (group %d)", xq.group)
		}
		return fmt.Errorf("%d %s scales along dim %d of dims %v, want %d", len(xq.scales), what, xq.dim, dims, want)
	}
	return nil
}

// xrun is one execution of an XNNPACK graph: values by id_out, held in the
// float domain (quantized values are dequantized when they are defined and
// requantized when a node produces them, so every node computes in float).
type xrun struct {
	m      *Method
	g      *xnnfb.XNNGraphT
	consts []byte
	vals   map[uint32]*interp.Tensor
	decl   map[uint32]*xnnfb.XNNTensorValueT
	quant  map[uint32]*xquant
}

func xdtype(d xnnfb.XNNDatatype) (ir.DType, error) {
	switch d {
	case xnnfb.XNNDatatypexnn_datatype_fp32:
		return ir.Float32, nil
	case xnnfb.XNNDatatypexnn_datatype_fp16:
		return ir.Float16, nil
	case xnnfb.XNNDatatypexnn_datatype_bf16:
		return ir.BFloat16, nil
	case xnnfb.XNNDatatypexnn_datatype_qint8, xnnfb.XNNDatatypexnn_datatype_qcint8, xnnfb.XNNDatatypexnn_datatype_qdint8:
		return ir.Int8, nil
	case xnnfb.XNNDatatypexnn_datatype_quint8:
		return ir.Uint8, nil
	case xnnfb.XNNDatatypexnn_datatype_qint32, xnnfb.XNNDatatypexnn_datatype_qcint32, xnnfb.XNNDatatypexnn_datatype_int32:
		return ir.Int32, nil
	}
	return 0, fmt.Errorf("XNNPACK datatype %s is not supported", xnnfb.EnumNamesXNNDatatype[d])
}

// runXNN executes the delegate graph; args are the DelegateCall's value
// indices, indexed by external id (inputs first, then outputs).
func (m *Method) runXNN(p *pte.XNNPayload, args []int32) error {
	r := &xrun{m: m, g: p.Graph, consts: p.ConstantData, vals: map[uint32]*interp.Tensor{},
		decl: map[uint32]*xnnfb.XNNTensorValueT{}, quant: map[uint32]*xquant{}}
	if int(r.g.NumExterns) > len(args) {
		return fmt.Errorf("%d external values, %d arguments", r.g.NumExterns, len(args))
	}
	for i, xv := range r.g.Xvalues {
		t := pte.XNNTensor(xv)
		if t == nil {
			return fmt.Errorf("xvalues[%d]: not a tensor value", i)
		}
		r.decl[t.IdOut] = t
		if q, ok := xv.XvalueUnion.Value.(*xnnfb.XNNQuantizedTensorValueT); ok {
			xq, err := quantOf(q)
			if err != nil {
				return fmt.Errorf("xvalues[%d]: %w", i, err)
			}
			if err := xq.checkScales(t.Dims); err != nil {
				return fmt.Errorf("xvalues[%d]: %w", i, err)
			}
			r.quant[t.IdOut] = xq
		}
		switch {
		case t.ConstantBufferIdx != 0:
			v, err := r.constant(t)
			if err != nil {
				return fmt.Errorf("xvalues[%d] (id %d): %w", i, t.IdOut, err)
			}
			r.vals[t.IdOut] = r.dequant(t.IdOut, v)
		case t.Flags&1 != 0 && t.ExternalId != math.MaxUint32:
			v, err := m.value(int(args[t.ExternalId]))
			if err != nil {
				return fmt.Errorf("external input %d: %w", t.ExternalId, err)
			}
			x, ok := v.(*interp.Tensor)
			if !ok {
				return fmt.Errorf("external input %d: %s is not a tensor", t.ExternalId, interp.Describe(v))
			}
			if x, err = m.physicalIn(int(args[t.ExternalId]), x); err != nil { // xnn_physical.go
				return fmt.Errorf("external input %d: %w", t.ExternalId, err)
			}
			// A 0-d program tensor is seen with dims [1]; static dims
			// reshape, dynamic ones keep the bound tensor's shape.
			dims := make([]int64, len(t.Dims))
			for k, d := range t.Dims {
				dims[k] = int64(d)
			}
			if numel(dims) == x.Numel() && len(dims) != x.Rank() {
				if x, err = aten(ir.OpAtenReshape, x, toValues(dims)); err != nil {
					return err
				}
			}
			r.vals[t.IdOut] = r.dequant(t.IdOut, x)
		}
	}
	for i, n := range r.g.Xnodes {
		if n == nil || n.XnodeUnion == nil {
			return fmt.Errorf("xnodes[%d]: unknown node kind", i)
		}
		if err := r.node(n); err != nil {
			return fmt.Errorf("xnodes[%d] (%s): %w", i, n.XnodeUnion.Type, err)
		}
	}
	for _, xv := range r.g.Xvalues {
		t := pte.XNNTensor(xv)
		if t.Flags&2 == 0 || t.ExternalId == math.MaxUint32 {
			continue
		}
		v, ok := r.vals[t.IdOut]
		if !ok {
			return fmt.Errorf("external output %d (id %d) was not computed", t.ExternalId, t.IdOut)
		}
		// A 0-d program tensor is produced with dims [1].
		if s, ok := m.vals[args[t.ExternalId]].(*slot); ok && len(s.sizes) != v.Rank() && numel(s.sizes) == v.Numel() {
			var err error
			if v, err = aten(ir.OpAtenReshape, v, toValues(s.sizes)); err != nil {
				return err
			}
		}
		v, err := m.logicalOut(int(args[t.ExternalId]), v) // xnn_physical.go
		if err != nil {
			return fmt.Errorf("external output %d: %w", t.ExternalId, err)
		}
		if err := m.store(int(args[t.ExternalId]), v); err != nil {
			return fmt.Errorf("external output %d: %w", t.ExternalId, err)
		}
	}
	return nil
}

func quantOf(q *xnnfb.XNNQuantizedTensorValueT) (*xquant, error) {
	if q.QuantParams == nil {
		return nil, fmt.Errorf("quantized value without parameters")
	}
	switch p := q.QuantParams.Value.(type) {
	case *xnnfb.PerTensorQuantT:
		return &xquant{scales: []float64{float64(p.Scale)}, zeroPoint: int64(p.ZeroPoint)}, nil
	case *xnnfb.PerChannelQuantT:
		if p.ScaleBufferIdx != 0 || len(p.Scale) == 0 {
			return nil, fmt.Errorf("per-channel scales in a constant buffer are not supported")
		}
		s := make([]float64, len(p.Scale))
		for i, x := range p.Scale {
			s[i] = float64(x)
		}
		return &xquant{scales: s, dim: int(p.ChannelDim)}, nil
	}
	return quantOfMore(q)
}

// constant reads a constant value's bytes: named data (by key) or the
// payload's inline constant region.
func (r *xrun) constant(t *xnnfb.XNNTensorValueT) (*interp.Tensor, error) {
	if int(t.ConstantBufferIdx) >= len(r.g.ConstantData) || r.g.ConstantData[t.ConstantBufferIdx] == nil {
		return nil, fmt.Errorf("constant_buffer_idx %d out of range", t.ConstantBufferIdx)
	}
	c := r.g.ConstantData[t.ConstantBufferIdx]
	var data []byte
	if c.NamedKey != "" {
		f := r.m.file
		for _, nd := range f.Program.NamedData {
			if nd.Key == c.NamedKey && int(nd.SegmentIndex) < len(f.Segments) {
				data = f.Segments[nd.SegmentIndex].Data
			}
		}
		if data == nil {
			// The runtime merges the program's named data with the
			// external data map (a delegate's weights moved to the .ptd).
			d, err := externalData(c.NamedKey, r.m.data)
			if err != nil {
				return nil, fmt.Errorf("named data %q: not in the program's named data; %w", c.NamedKey, err)
			}
			data = d
		}
	} else {
		if c.Offset > uint64(len(r.consts)) {
			return nil, fmt.Errorf("inline constant at %d past the %d-byte region", c.Offset, len(r.consts))
		}
		data = r.consts[c.Offset:]
	}
	if t.Datatype == xnnfb.XNNDatatypexnn_datatype_qbint4 {
		return unpackQB4(t, data)
	}
	if t.Datatype == xnnfb.XNNDatatypexnn_datatype_qcint4 {
		return unpackQC4(t, data) // xquant_qc4w.go
	}
	dt, err := xdtype(t.Datatype)
	if err != nil {
		return nil, err
	}
	dims := make([]int64, len(t.Dims))
	for i, d := range t.Dims {
		dims[i] = int64(d)
	}
	n, err := tensorBytes(dims, dt, r.m.maxTensor)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) < n {
		return nil, fmt.Errorf("constant %v %s needs %d bytes, has %d", dims, dt, n, len(data))
	}
	return interp.FromBytes(dt, dims, data[:n])
}

// dequant maps a quantized value of id to float32: (q − zp)·scale.
func (r *xrun) dequant(id uint32, t *interp.Tensor) *interp.Tensor {
	q := r.quant[id]
	if q == nil {
		return t
	}
	if q.group > 0 {
		return dequantGroup(t, q)
	}
	xs := t.Float64s()
	out := make([]float64, len(xs))
	inner, ch := channelStride(t.Shape, q)
	for i, x := range xs {
		s := q.scales[0]
		if len(q.scales) > 1 {
			s = q.scales[(int64(i)/inner)%ch]
		}
		out[i] = (x - float64(q.zeroPoint)) * s
	}
	return interp.FromFloat64(ir.Float32, t.Shape, out)
}

func channelStride(shape []int64, q *xquant) (inner, ch int64) {
	inner, ch = 1, 1
	if len(q.scales) > 1 && q.dim < len(shape) {
		// runXNN checked the declared channel count; a value of another
		// shape never indexes past the scales.
		ch = min(shape[q.dim], int64(len(q.scales)))
		for _, d := range shape[q.dim+1:] {
			inner *= d
		}
	}
	return inner, ch
}

// define stores a node's float result for id, applying the node's fused
// clamp and, for a quantized value, rounding through its quantized grid.
func (r *xrun) define(n *xnnfb.XNodeT, id uint32, t *interp.Tensor) error {
	var err error
	if mm := n.OutputMinMax; mm != nil {
		lo, hi := float64(mm.OutputMin), float64(mm.OutputMax)
		if t, err = aten(ir.OpAtenClamp, t, lo, hi); err != nil {
			return err
		}
	}
	if q := r.quant[id]; q != nil && q.dynamic > 0 {
		t = quantizeDynamic(t, q.dynamic)
	} else if q != nil {
		d := r.decl[id]
		dt, err := xdtype(d.Datatype)
		if err != nil {
			return err
		}
		lo, hi := -128.0, 127.0
		switch dt {
		case ir.Uint8:
			lo, hi = 0, 255
		case ir.Int32:
			lo, hi = math.MinInt32, math.MaxInt32
		}
		xs := t.Float64s()
		inner, ch := channelStride(t.Shape, q)
		for i, x := range xs {
			s := q.scales[0]
			if len(q.scales) > 1 {
				s = q.scales[(int64(i)/inner)%ch]
			}
			v := math.RoundToEven(x/s) + float64(q.zeroPoint)
			v = math.Max(lo, math.Min(hi, v))
			xs[i] = (v - float64(q.zeroPoint)) * s
		}
		t = interp.FromFloat64(ir.Float32, t.Shape, xs)
	}
	r.vals[id] = t
	return nil
}

func (r *xrun) get(id uint32) (*interp.Tensor, error) {
	t, ok := r.vals[id]
	if !ok {
		return nil, fmt.Errorf("value id %d is read before it is defined", id)
	}
	return t, nil
}

// aten runs one ATen op with a single tensor result.
func aten(op ir.Op, args ...interp.Value) (*interp.Tensor, error) {
	outs, err := interp.RunOp(op, args)
	if err != nil {
		return nil, err
	}
	t, ok := outs[0].(*interp.Tensor)
	if !ok {
		return nil, fmt.Errorf("%s returned %s", op, interp.Describe(outs[0]))
	}
	return t, nil
}
