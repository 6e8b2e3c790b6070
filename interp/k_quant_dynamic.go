package interp

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
)

// Kernels of torch.ao's dynamic and group-wise decomposed quantization ops
// (torch/ao/quantization/fx/_decomposed.py):
//
//   - choose_qparams.tensor: asymmetric per-tensor parameters from the
//     input's min/max widened to include 0, computed in float32: scale =
//     max((max⁺ − min⁻)/(quant_max − quant_min), eps), zero point =
//     clamp(quant_min − round(min⁻/scale)); results f64[1] and i64[1].
//   - quantize/dequantize_per_tensor.tensor: the .default ops with the
//     one-element scale and zero point tensors read as scalars.
//   - choose_qparams_per_token_asymmetric: the same per row of the last
//     dim (int8 range, eps = float32 epsilon, XNNPACK's nudged zero point).
//   - quantize_per_token / dequantize_per_token: per row, in float64 (the
//     scales are float64 tensors, so torch promotes).
//   - dequantize_per_channel_group: (q − zp)·scale with one scale per row
//     and group of group_size columns of a 2-d weight.
func init() {
	register(kChooseQparams, ir.OpQuantizedDecomposedChooseQparamsTensor)
	register(kQuantizePerTensorT, ir.OpQuantizedDecomposedQuantizePerTensorTensor)
	register(kDequantizePerTensorT, ir.OpQuantizedDecomposedDequantizePerTensorTensor)
	register(kChooseQparamsPerToken, ir.OpQuantizedDecomposedChooseQparamsPerTokenAsymmetric)
	register(kQuantizePerToken, ir.OpQuantizedDecomposedQuantizePerToken)
	register(kDequantizePerToken, ir.OpQuantizedDecomposedDequantizePerToken)
	register(kDequantizePerChannelGroup, ir.OpQuantizedDecomposedDequantizePerChannelGroup)
}

func toF32(x float64) float64 { return float64(float32(x)) }

// scalarOf reads a one-element tensor argument.
func scalarOf(c *call, name string) (float64, error) {
	t, err := c.tensor(name)
	if err != nil {
		return 0, err
	}
	if t.Numel() != 1 {
		return 0, fmt.Errorf("%s has %d elements, want 1", name, t.Numel())
	}
	return t.Float64s()[0], nil
}

// rangeArgs reads quant_min, quant_max and dtype.
func rangeArgs(c *call) (lo, hi float64, dt ir.DType, err error) {
	l, err := c.int("quant_min")
	if err != nil {
		return 0, 0, 0, err
	}
	h, err := c.int("quant_max")
	if err != nil {
		return 0, 0, 0, err
	}
	if l >= h {
		return 0, 0, 0, fmt.Errorf("quant_min %d must be below quant_max %d", l, h)
	}
	if dt, err = dtypeArg(c, "dtype"); err != nil {
		return 0, 0, 0, err
	}
	return float64(l), float64(h), dt, checkDType(dt)
}

// dtypeArg reads the dtype argument name.
func dtypeArg(c *call, name string) (ir.DType, error) {
	v, err := c.arg(name)
	if err != nil {
		return ir.Undefined, err
	}
	return toDType(v)
}

// dequantDType reads the optional out_dtype of a dequantize op (float32
// when it is absent).
func dequantDType(c *call) (ir.DType, error) {
	dt, ok, err := c.optDType("out_dtype")
	if err != nil || !ok {
		return ir.Float32, err
	}
	return dt, nil
}

func kChooseQparams(c *call) ([]Value, error) {
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	lo, hi, _, err := rangeArgs(c)
	if err != nil {
		return nil, err
	}
	eps, err := c.float("eps")
	if err != nil {
		return nil, err
	}
	xs := x.Float64s()
	if len(xs) == 0 {
		return nil, fmt.Errorf("choose_qparams of an empty tensor")
	}
	mn, mx := 0.0, 0.0
	for _, v := range xs {
		if math.IsNaN(v) {
			return nil, fmt.Errorf("choose_qparams of a tensor holding NaN")
		}
		mn, mx = math.Min(mn, v), math.Max(mx, v)
	}
	scale := toF32(toF32(mx-mn) / (hi - lo))
	scale = math.Max(scale, toF32(eps))
	zp := lo - math.RoundToEven(toF32(mn/scale))
	zp = math.Max(lo, math.Min(hi, zp))
	return []Value{FromFloat64(ir.Float64, []int64{1}, []float64{scale}), FromFloat64(ir.Int64, []int64{1}, []float64{zp})}, nil
}

// perTensorArgs reads the input and the one-element scale and zero point
// tensors of a per-tensor .tensor kernel.
func perTensorArgs(c *call) (x *Tensor, s, zp float64, err error) {
	if x, err = c.tensor("input"); err != nil {
		return nil, 0, 0, err
	}
	if s, err = scalarOf(c, "scale"); err != nil {
		return nil, 0, 0, err
	}
	if zp, err = scalarOf(c, "zero_point"); err != nil {
		return nil, 0, 0, err
	}
	return x, s, zp, nil
}

// kQuantizePerTensorT / kDequantizePerTensorT: the per-tensor kernels with
// tensor parameters.
func kQuantizePerTensorT(c *call) ([]Value, error) {
	x, s, zp, err := perTensorArgs(c)
	if err != nil {
		return nil, err
	}
	lo, hi, dt, err := rangeArgs(c)
	if err != nil {
		return nil, err
	}
	return quantizeWith(x, &quantParams{scales: []float64{s}, zps: []float64{zp}, lo: lo, hi: hi, dt: dt}), nil
}

func kDequantizePerTensorT(c *call) ([]Value, error) {
	x, s, zp, err := perTensorArgs(c)
	if err != nil {
		return nil, err
	}
	return dequantizeWith(c, x, &quantParams{scales: []float64{s}, zps: []float64{zp}})
}

// tokens splits a rank ≥ 1 shape into rows of its last dim.
func tokens(x *Tensor) (rows, n int64, err error) {
	if x.Rank() == 0 {
		return 0, 0, fmt.Errorf("per-token quantization needs a tensor of rank ≥ 1")
	}
	n = x.Shape[x.Rank()-1]
	if n == 0 {
		return 0, 0, nil
	}
	return x.Numel() / n, n, nil
}

func kChooseQparamsPerToken(c *call) ([]Value, error) {
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	rows, n, err := tokens(x)
	if err != nil {
		return nil, err
	}
	const qmin, qmax = -128.0, 127.0
	eps := float64(math.Nextafter32(1, 2) - 1)
	xs := x.Float64s()
	scales, zps := make([]float64, rows), make([]float64, rows)
	for r := int64(0); r < rows; r++ {
		mn, mx := 0.0, 0.0
		for _, v := range xs[r*n : (r+1)*n] {
			mn, mx = math.Min(mn, v), math.Max(mx, v)
		}
		s := math.Max(toF32(toF32(mx-mn)/(qmax-qmin)), eps)
		dmin, dmax := toF32(mn/s), toF32(mx/s)
		var zp float64
		if toF32(qmin+dmin)+toF32(qmax+dmax) > 0 {
			zp = toF32(qmin - dmin)
		} else {
			zp = toF32(qmax - dmax)
		}
		scales[r], zps[r] = s, math.RoundToEven(math.Max(qmin, math.Min(qmax, zp)))
	}
	shape := append(append([]int64{}, x.Shape[:x.Rank()-1]...), 1)
	return []Value{FromFloat64(ir.Float64, shape, scales), FromFloat64(ir.Int64, shape, zps)}, nil
}

// tokenArgs reads the input of a per-token kernel, its row length n (the
// last dim) and the per-token scales and zero points (one per row).
func tokenArgs(c *call) (x *Tensor, n int64, scales, zps []float64, err error) {
	if x, err = c.tensor("input"); err != nil {
		return nil, 0, nil, nil, err
	}
	rows, n, err := tokens(x)
	if err != nil {
		return nil, 0, nil, nil, err
	}
	s, err := c.tensor("scales")
	if err != nil {
		return nil, 0, nil, nil, err
	}
	z, err := c.tensor("zero_points")
	if err != nil {
		return nil, 0, nil, nil, err
	}
	if s.Numel() != rows || z.Numel() != rows {
		return nil, 0, nil, nil, fmt.Errorf("%d scales and %d zero points for %d tokens", s.Numel(), z.Numel(), rows)
	}
	return x, n, s.Float64s(), z.Float64s(), nil
}

func kQuantizePerToken(c *call) ([]Value, error) {
	x, n, scales, zps, err := tokenArgs(c)
	if err != nil {
		return nil, err
	}
	lo, hi, dt, err := rangeArgs(c)
	if err != nil {
		return nil, err
	}
	xs := x.Float64s()
	for i, v := range xs {
		r := int64(i) / n
		xs[i] = math.Max(lo, math.Min(hi, math.RoundToEven(v*(1/scales[r])+zps[r])))
	}
	return one(FromFloat64(dt, x.Shape, xs)), nil
}

func kDequantizePerToken(c *call) ([]Value, error) {
	x, n, scales, zps, err := tokenArgs(c)
	if err != nil {
		return nil, err
	}
	out, err := dtypeArg(c, "output_dtype")
	if err != nil {
		return nil, err
	}
	xs := x.Float64s()
	for i, q := range xs {
		r := int64(i) / n
		xs[i] = (q - zps[r]) * scales[r]
	}
	return one(FromFloat64(out, x.Shape, xs)), nil
}

func kDequantizePerChannelGroup(c *call) ([]Value, error) {
	w, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	if w.Rank() != 2 {
		return nil, fmt.Errorf("dequantize_per_channel_group needs a 2-d input, got rank %d", w.Rank())
	}
	s, err := c.tensor("scales")
	if err != nil {
		return nil, err
	}
	z, err := c.optTensor("zero_points")
	if err != nil {
		return nil, err
	}
	g, err := c.int("group_size")
	if err != nil {
		return nil, err
	}
	out, err := dtypeArg(c, "output_dtype")
	if err != nil {
		return nil, err
	}
	ic := w.Shape[1]
	if g <= 1 {
		return nil, fmt.Errorf("group_size %d must be > 1", g)
	}
	if g > ic && s.Rank() > 0 && s.Shape[s.Rank()-1] == 1 {
		g = ic
	}
	if ic%g != 0 {
		return nil, fmt.Errorf("%d input channels are not a multiple of group_size %d", ic, g)
	}
	groups := w.Numel() / g
	if s.Numel() != groups || z != nil && z.Numel() != groups {
		return nil, fmt.Errorf("%d groups of %d, with %d scales", groups, g, s.Numel())
	}
	scales := s.Float64s()
	var zps []float64
	if z != nil {
		zps = z.Float64s()
	}
	xs := w.Float64s()
	for i, q := range xs {
		k := int64(i) / g
		if zps != nil {
			q -= zps[k]
		}
		y := q * scales[k]
		if s.DType == ir.Float32 {
			y = toF32(y)
		}
		xs[i] = y
	}
	return one(FromFloat64(out, w.Shape, xs)), nil
}
