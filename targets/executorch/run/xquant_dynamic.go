package run

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// Dynamic (qdint8) and blockwise 4-bit (qbint4) XNNPACK values.
//
// A qdint8 value is written by XNNConvert from fp32: XNNPACK picks
// asymmetric int8 parameters per row of its batch dims (the leading dims,
// all but num_nonbatch_dims) from the row's min/max widened to include 0,
// with the zero point nudged to the side of the smaller rounding error
// (the same rule as torch's choose_qparams_per_token_asymmetric), and the
// value is held here as its dequantized grid.
//
// A qbint4 constant is [out, in] with two 4-bit values per byte along in
// (even index in the low nibble), stored as v+8; its scales are one per
// row and group of group_size input channels, which XNNPACK keeps as bf16.

// quantOfMore reads the dynamic and group-wise quantization parameters.
func quantOfMore(q *xnnfb.XNNQuantizedTensorValueT) (*xquant, error) {
	switch p := q.QuantParams.Value.(type) {
	case *xnnfb.PerTokenDynamicQuantT:
		if q.TensorValue == nil || q.TensorValue.Datatype != xnnfb.XNNDatatypexnn_datatype_qdint8 {
			return nil, fmt.Errorf("per-token dynamic quantization of a non-qdint8 value")
		}
		if p.NumNonbatchDims < 1 || q.TensorValue.ConstantBufferIdx != 0 {
			return nil, fmt.Errorf("per-token dynamic quantization needs num_nonbatch_dims ≥ 1 and no constant data")
		}
		return &xquant{dynamic: int(p.NumNonbatchDims)}, nil
	case *xnnfb.PerChannelGroupQuantT:
		t := q.TensorValue
		if t == nil || t.Datatype != xnnfb.XNNDatatypexnn_datatype_qbint4 || len(t.Dims) != 2 {
			return nil, fmt.Errorf("group-wise quantization is supported for 2-d qbint4 values only")
		}
		if p.ScaleBufferIdx != 0 || p.ChannelDim != 0 || p.GroupSize <= 0 || int64(t.Dims[1])%int64(p.GroupSize) != 0 {
			return nil, fmt.Errorf("group-wise quantization: channel_dim %d, group_size %d over %d input channels (scales in a buffer: %v) is not supported",
				p.ChannelDim, p.GroupSize, t.Dims[1], p.ScaleBufferIdx != 0)
		}
		want := int64(t.Dims[0]) * int64(t.Dims[1]) / int64(p.GroupSize)
		if int64(len(p.Scale)) != want {
			return nil, fmt.Errorf("group-wise quantization: %d scales for %d groups", len(p.Scale), want)
		}
		s := make([]float64, len(p.Scale))
		for i, x := range p.Scale {
			s[i] = bf16Round(x)
		}
		return &xquant{scales: s, group: int64(p.GroupSize)}, nil
	}
	return nil, fmt.Errorf("quantization %s is not supported", xnnfb.EnumNamesXNNQuantParams[q.QuantParams.Type])
}

// bf16Round rounds an fp32 value to bfloat16 (nearest, ties to even).
func bf16Round(x float32) float64 {
	b := math.Float32bits(x)
	b += 0x7fff + (b>>16)&1
	return float64(math.Float32frombits(b &^ 0xffff))
}

// unpackQB4 reads a packed qbint4 constant as int8 values in [-8, 7].
func unpackQB4(t *xnnfb.XNNTensorValueT, data []byte) (*interp.Tensor, error) {
	if len(t.Dims) != 2 || t.Dims[1]%2 != 0 {
		return nil, fmt.Errorf("qbint4 constant %v: want an [out, in] matrix with even in", t.Dims)
	}
	n := int(t.Dims[0]) * int(t.Dims[1])
	if len(data) < n/2 {
		return nil, fmt.Errorf("qbint4 constant %v needs %d bytes, has %d", t.Dims, n/2, len(data))
	}
	vals := make([]int64, n)
	for i := 0; i < n; i += 2 {
		b := data[i/2]
		vals[i], vals[i+1] = int64(b&15)-8, int64(b>>4)-8
	}
	return interp.FromInt64(ir.Int8, []int64{int64(t.Dims[0]), int64(t.Dims[1])}, vals), nil
}

// dequantGroup maps unpacked qbint4 values to float32: v·scale[row, col/group].
func dequantGroup(t *interp.Tensor, q *xquant) *interp.Tensor {
	xs := t.Float64s()
	for i, v := range xs {
		xs[i] = v * q.scales[int64(i)/q.group]
	}
	return interp.FromFloat64(ir.Float32, t.Shape, xs)
}

// quantizeDynamic rounds t through per-row asymmetric int8 parameters over
// its last nonbatch dims (in float32 arithmetic, as XNNPACK).
func quantizeDynamic(t *interp.Tensor, nonbatch int) *interp.Tensor {
	row := int64(1)
	for i := max(0, t.Rank()-nonbatch); i < t.Rank(); i++ {
		row *= t.Shape[i]
	}
	xs := t.Float64s()
	if row == 0 {
		return t
	}
	f := func(x float64) float64 { return float64(float32(x)) }
	const qmin, qmax = -128.0, 127.0
	eps := float64(math.Nextafter32(1, 2) - 1)
	for r := int64(0); r*row < int64(len(xs)); r++ {
		seg := xs[r*row : (r+1)*row]
		mn, mx := 0.0, 0.0
		for _, v := range seg {
			mn, mx = math.Min(mn, v), math.Max(mx, v)
		}
		s := math.Max(f(f(mx-mn)/(qmax-qmin)), eps)
		dmin, dmax := f(mn/s), f(mx/s)
		zp := f(qmax - dmax)
		if f(qmin+dmin)+f(qmax+dmax) > 0 {
			zp = f(qmin - dmin)
		}
		zp = math.RoundToEven(math.Max(qmin, math.Min(qmax, zp)))
		for i, v := range seg {
			q := math.Max(qmin, math.Min(qmax, math.RoundToEven(v/s)+zp))
			seg[i] = (q - zp) * s
		}
	}
	return interp.FromFloat64(ir.Float32, t.Shape, xs)
}
