package interp

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
)

// Kernels of torch.ao's decomposed quantization ops (quantized_decomposed):
// quantize: clamp(round_half_even(x / scale) + zp, quant_min, quant_max) in
// the integer dtype; dequantize: (q − zp) · scale in out_dtype (float32).
func init() {
	register(kQuantizePerTensor, ir.OpQuantizedDecomposedQuantizePerTensor)
	register(kDequantizePerTensor, ir.OpQuantizedDecomposedDequantizePerTensor)
	register(kQuantizePerChannel, ir.OpQuantizedDecomposedQuantizePerChannel)
	register(kDequantizePerChannel, ir.OpQuantizedDecomposedDequantizePerChannel)
}

// quantParams holds one call's scale(s) and zero point(s); a per-channel
// call has one entry per index of axis.
type quantParams struct {
	scales, zps []float64
	axis        int
	lo, hi      float64
	dt          ir.DType
}

// at returns the scale and zero point of flat element i of shape.
func (q *quantParams) at(shape []int64, i int) (float64, float64) {
	if len(q.scales) == 1 {
		return q.scales[0], q.zps[0]
	}
	inner := int64(1)
	for _, d := range shape[q.axis+1:] {
		inner *= d
	}
	c := (int64(i) / inner) % shape[q.axis]
	return q.scales[c], q.zps[c]
}

func quantArgs(c *call, x *Tensor, perChannel bool) (*quantParams, error) {
	q := &quantParams{}
	if perChannel {
		s, err := c.tensor("scales")
		if err != nil {
			return nil, err
		}
		q.scales = s.Float64s()
		zt, err := c.optTensor("zero_points")
		if err != nil {
			return nil, err
		}
		if zt != nil {
			q.zps = zt.Float64s()
		} else {
			q.zps = make([]float64, len(q.scales))
		}
		ax, err := c.int("axis")
		if err != nil {
			return nil, err
		}
		if ax < 0 {
			ax += int64(x.Rank())
		}
		if ax < 0 || int(ax) >= x.Rank() {
			return nil, fmt.Errorf("axis %d out of range for rank %d", ax, x.Rank())
		}
		q.axis = int(ax)
		if int64(len(q.scales)) != x.Shape[ax] || len(q.zps) != len(q.scales) {
			return nil, fmt.Errorf("%d scales and %d zero points for %d channels", len(q.scales), len(q.zps), x.Shape[ax])
		}
	} else {
		s, err := c.float("scale")
		if err != nil {
			return nil, err
		}
		zp, err := c.int("zero_point")
		if err != nil {
			return nil, err
		}
		q.scales, q.zps = []float64{s}, []float64{float64(zp)}
	}
	lo, err := c.int("quant_min")
	if err != nil {
		return nil, err
	}
	hi, err := c.int("quant_max")
	if err != nil {
		return nil, err
	}
	q.lo, q.hi = float64(lo), float64(hi)
	if q.dt, err = dtypeArg(c, "dtype"); err != nil {
		return nil, err
	}
	return q, nil
}

func quantize(c *call, perChannel bool) ([]Value, error) {
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	q, err := quantArgs(c, x, perChannel)
	if err != nil {
		return nil, err
	}
	if err := checkDType(q.dt); err != nil {
		return nil, err
	}
	return quantizeWith(x, q), nil
}

// quantizeWith quantizes x with q (its dtype checked).
func quantizeWith(x *Tensor, q *quantParams) []Value {
	xs := x.Float64s()
	for i, v := range xs {
		s, zp := q.at(x.Shape, i)
		// torch multiplies by the float32 inverse scale.
		inv := float64(float32(1 / s))
		xs[i] = math.Max(q.lo, math.Min(q.hi, math.RoundToEven(float64(float32(v*inv)))+zp))
	}
	return one(FromFloat64(q.dt, x.Shape, xs))
}

func dequantize(c *call, perChannel bool) ([]Value, error) {
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	q, err := quantArgs(c, x, perChannel)
	if err != nil {
		return nil, err
	}
	return dequantizeWith(c, x, q)
}

// dequantizeWith dequantizes x with q into the call's out_dtype.
func dequantizeWith(c *call, x *Tensor, q *quantParams) ([]Value, error) {
	out, err := dequantDType(c)
	if err != nil {
		return nil, err
	}
	xs := x.Float64s()
	for i, v := range xs {
		s, zp := q.at(x.Shape, i)
		xs[i] = (v - zp) * float64(float32(s))
	}
	return one(FromFloat64(out, x.Shape, xs)), nil
}

func kQuantizePerTensor(c *call) ([]Value, error)    { return quantize(c, false) }
func kDequantizePerTensor(c *call) ([]Value, error)  { return dequantize(c, false) }
func kQuantizePerChannel(c *call) ([]Value, error)   { return quantize(c, true) }
func kDequantizePerChannel(c *call) ([]Value, error) { return dequantize(c, true) }
