package interp

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
)

// Comparisons, where, clamp and masked_fill.

func init() {
	cmp := func(ff func(x, y float64) bool, fi func(x, y int64) bool) kernel {
		return func(c *call) ([]Value, error) {
			a, err := c.operand("self")
			if err != nil {
				return nil, err
			}
			b, err := c.operand("other")
			if err != nil {
				return nil, err
			}
			dt, err := resultType(a, b)
			if err != nil {
				return nil, err
			}
			return one0(compareOp(a.t, b.t, dt, ff, fi))
		}
	}
	register(cmp(func(x, y float64) bool { return x == y }, func(x, y int64) bool { return x == y }), ir.OpAtenEqTensor, ir.OpAtenEqScalar)
	register(cmp(func(x, y float64) bool { return x != y }, func(x, y int64) bool { return x != y }), ir.OpAtenNeTensor, ir.OpAtenNeScalar)
	register(cmp(func(x, y float64) bool { return x < y }, func(x, y int64) bool { return x < y }), ir.OpAtenLtTensor, ir.OpAtenLtScalar)
	register(cmp(func(x, y float64) bool { return x <= y }, func(x, y int64) bool { return x <= y }), ir.OpAtenLeTensor, ir.OpAtenLeScalar)
	register(cmp(func(x, y float64) bool { return x > y }, func(x, y int64) bool { return x > y }), ir.OpAtenGtTensor, ir.OpAtenGtScalar)
	register(cmp(func(x, y float64) bool { return x >= y }, func(x, y int64) bool { return x >= y }), ir.OpAtenGeTensor, ir.OpAtenGeScalar)

	register(kWhere("condition", "self", "other"), ir.OpAtenWhereSelf, ir.OpAtenWhereScalarOther, ir.OpAtenWhereScalarSelf, ir.OpAtenWhereScalar)
	register(kWhere("pred", "a", "b"), ir.OpPrimsWhere)
	register(kClamp, ir.OpAtenClamp, ir.OpAtenClampTensor, ir.OpAtenClampMin, ir.OpAtenClampMax)
	register(kMaskedFill, ir.OpAtenMaskedFillScalar, ir.OpAtenMaskedFillTensor)
}

func kWhere(cn, an, bn string) kernel {
	return func(c *call) ([]Value, error) {
		cond, err := c.tensor(cn)
		if err != nil {
			return nil, err
		}
		if cond.DType != ir.Bool && cond.DType != ir.Uint8 {
			return nil, fmt.Errorf("where expected condition to be a boolean tensor, but got a tensor with dtype %s", cond.DType)
		}
		a, err := c.operand(an)
		if err != nil {
			return nil, err
		}
		b, err := c.operand(bn)
		if err != nil {
			return nil, err
		}
		dt, err := resultType(a, b)
		if err != nil {
			return nil, err
		}
		return one0(selectWhere(cond, a.t, b.t, dt))
	}
}

// clampF is torch's clamp: NaN in x or a bound gives NaN; min is applied
// first, so min > max yields max.
func clampF(x, lo, hi float64) float64 {
	if math.IsNaN(x) || math.IsNaN(lo) || math.IsNaN(hi) {
		return math.NaN()
	}
	return math.Min(math.Max(x, lo), hi)
}

func kClamp(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	var lo, hi *operand
	for _, name := range []string{"min", "max"} {
		if !c.has(name) {
			continue
		}
		v, err := c.arg(name)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		o, err := asOperand(v, name)
		if err != nil {
			return nil, err
		}
		if name == "min" {
			lo = &o
		} else {
			hi = &o
		}
	}
	if lo == nil && hi == nil {
		return nil, fmt.Errorf("at least one of 'min' or 'max' must not be None")
	}
	ops := []operand{{t: x, cat: ir.Operand{DType: x.DType, ZeroDim: x.Rank() == 0}}}
	if lo != nil {
		ops = append(ops, *lo)
	}
	if hi != nil {
		ops = append(ops, *hi)
	}
	dt, err := resultType(ops...)
	if err != nil {
		return nil, err
	}
	switch domainOf(dt) {
	case domFloat:
		l, h := Scalar0(dt, math.Inf(-1)), Scalar0(dt, math.Inf(1))
		if lo != nil {
			l = lo.t
		}
		if hi != nil {
			h = hi.t
		}
		return one0(ternaryF(x, l, h, dt, clampF))
	case domInt:
		if dt == ir.Bool {
			return nil, fmt.Errorf("clamp is not supported for bool tensors")
		}
		l, h := ScalarInt0(ir.Int64, math.MinInt64), ScalarInt0(ir.Int64, math.MaxInt64)
		if lo != nil {
			l = lo.t.To(dt)
		}
		if hi != nil {
			h = hi.t.To(dt)
		}
		r, err := ternaryI(x, l.To(ir.Int64), h.To(ir.Int64), ir.Int64, func(v, a, b int64) int64 { return min(max(v, a), b) })
		if err != nil {
			return nil, err
		}
		return one(r.To(dt)), nil
	}
	return nil, fmt.Errorf("clamp is not supported for %s", dt)
}

func kMaskedFill(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	mask, err := c.tensor("mask")
	if err != nil {
		return nil, err
	}
	if mask.DType != ir.Bool && mask.DType != ir.Uint8 {
		return nil, fmt.Errorf("masked_fill only supports boolean masks, but got mask with dtype %s", mask.DType)
	}
	v, err := c.arg("value")
	if err != nil {
		return nil, err
	}
	var val *Tensor
	if t, ok := v.(*Tensor); ok {
		if t.Rank() != 0 {
			return nil, fmt.Errorf("masked_fill only supports a 0-dimensional value tensor, but got tensor with %d dimension(s)", t.Rank())
		}
		val = t
	} else {
		s, err := toScalar(v)
		if err != nil {
			return nil, fmt.Errorf("argument \"value\": %w", err)
		}
		val = s.tensor()
	}
	shape, err := broadcastShapes(x.Shape, mask.Shape)
	if err != nil {
		return nil, err
	}
	if !sameShape(shape, x.Shape) {
		return nil, fmt.Errorf("mask of shape %v does not broadcast to the input's shape %v", mask.Shape, x.Shape)
	}
	out, err := selectWhere(mask, val.To(x.DType), x, x.DType)
	if err != nil {
		return nil, err
	}
	return one(out), nil
}
