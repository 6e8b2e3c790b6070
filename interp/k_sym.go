package interp

import (
	"fmt"
	"github.com/fxport/fxport/ir"
	"math"
)

// Python-level scalar arithmetic (operator.*, torch.sym_*, math.*,
// builtins.round, executorch_prim.*), size queries and runtime assertions.

func init() {
	binop := func(f func(a, b Value) (Value, error)) kernel {
		return func(c *call) ([]Value, error) {
			a, err := c.pos(0)
			if err != nil {
				return nil, err
			}
			b, err := c.pos(1)
			if err != nil {
				return nil, err
			}
			v, err := f(a, b)
			if err != nil {
				return nil, err
			}
			return one(v), nil
		}
	}
	unop := func(f func(a Value) (Value, error)) kernel {
		return func(c *call) ([]Value, error) {
			a, err := c.pos(0)
			if err != nil {
				return nil, err
			}
			v, err := f(a)
			if err != nil {
				return nil, err
			}
			return one(v), nil
		}
	}
	register(binop(pyAdd), ir.OpOperatorAdd, ir.OpExecutorchPrimAddScalar)
	register(binop(pyArith("-", func(a, b int64) (int64, error) { return a - b, nil }, func(a, b float64) float64 { return a - b })), ir.OpOperatorSub, ir.OpExecutorchPrimSubScalar)
	register(binop(pyArith("*", func(a, b int64) (int64, error) { return a * b, nil }, func(a, b float64) float64 { return a * b })), ir.OpOperatorMul, ir.OpExecutorchPrimMulScalar)
	register(binop(pyArith("//", floorDivI, pyFloorDivF)), ir.OpOperatorFloordiv, ir.OpExecutorchPrimFloordivScalar)
	register(binop(pyArith("%", remainderI, remainderF)), ir.OpOperatorMod, ir.OpExecutorchPrimModScalar, ir.OpExecutorchPrimModInt)
	register(binop(pyPow), ir.OpOperatorPow)
	register(binop(pyTrueDiv), ir.OpOperatorTruediv, ir.OpExecutorchPrimTruedivScalar)
	register(unop(pyNeg), ir.OpOperatorNeg, ir.OpExecutorchPrimNegScalar)
	register(binop(pyCompare(func(c int) bool { return c == 0 })), ir.OpOperatorEq, ir.OpExecutorchPrimEqScalar)
	register(binop(pyCompare(func(c int) bool { return c != 0 })), ir.OpOperatorNe)
	register(binop(pyCompare(func(c int) bool { return c < 0 })), ir.OpOperatorLt, ir.OpExecutorchPrimLtScalar)
	register(binop(pyCompare(func(c int) bool { return c <= 0 })), ir.OpOperatorLe, ir.OpExecutorchPrimLeScalar)
	register(binop(pyCompare(func(c int) bool { return c > 0 })), ir.OpOperatorGt, ir.OpExecutorchPrimGtScalar)
	register(binop(pyCompare(func(c int) bool { return c >= 0 })), ir.OpOperatorGe, ir.OpExecutorchPrimGeScalar)
	register(binop(pyLogic(true)), ir.OpOperatorAnd_)
	register(binop(pyLogic(false)), ir.OpOperatorOr_)
	register(unop(func(a Value) (Value, error) { b, err := toBool(a); return !b, err }), ir.OpOperatorNot_, ir.OpTorchSymNot)
	register(binop(pyGetitem), ir.OpOperatorGetitem)
	register(binop(pyMinMax(true)), ir.OpTorchSymMax, ir.OpExecutorchPrimSymMaxScalar)
	register(binop(pyMinMax(false)), ir.OpTorchSymMin, ir.OpExecutorchPrimSymMinScalar)
	register(unop(func(a Value) (Value, error) { return toFloat(a) }), ir.OpTorchSymFloat, ir.OpExecutorchPrimSymFloatScalar)
	register(unop(pyToInt(math.Trunc)), ir.OpTorchSymInt, ir.OpMathTrunc, ir.OpExecutorchPrimTruncScalar)
	register(unop(pyToInt(math.Ceil)), ir.OpMathCeil, ir.OpExecutorchPrimCeilScalar)
	register(unop(pyToInt(math.Floor)), ir.OpMathFloor)
	register(unop(pyToInt(math.RoundToEven)), ir.OpExecutorchPrimRoundScalar)
	register(unop(func(a Value) (Value, error) { f, err := toFloat(a); return math.Sqrt(f), err }), ir.OpTorchSymSqrt, ir.OpMathSqrt)
	register(kSymIte, ir.OpTorchSymIte)
	register(kSymSum, ir.OpTorchSymSum)
	register(kRound, ir.OpBuiltinsRound)
	register(kSymSizeInt, ir.OpAtenSymSizeInt)
	register(kSymSizes, ir.OpAtenSymSize)
	register(kSymNumel, ir.OpAtenSymNumel)
	register(kSymStride, ir.OpAtenSymStrideInt)
	register(kSymStorageOffset, ir.OpAtenSymStorageOffset)
	register(kAssertAsync, ir.OpAten_AssertAsync, ir.OpAten_AssertAsyncMsg)
	register(kAssertScalar, ir.OpAten_AssertScalar)
	register(kAssertMetadata, ir.OpAten_AssertTensorMetadata)
	register(kConstrainRange, ir.OpAtenSymConstrainRange, ir.OpAtenSymConstrainRangeForSize)
}

// pyNum classifies a Python number: ints (and bools) as int64, else float64.
func pyNum(v Value) (int64, float64, bool, error) {
	switch x := v.(type) {
	case int64:
		return x, 0, true, nil
	case bool:
		return b2i(x), 0, true, nil
	case float64:
		return 0, x, false, nil
	case *Tensor:
		if x.Numel() == 1 {
			if domainOf(x.DType) == domInt {
				return x.itemInt(), 0, true, nil
			}
			return 0, x.itemFloat(), false, nil
		}
	}
	return 0, 0, false, fmt.Errorf("expected a number, got %s", kindOf(v))
}

func pyFloorDivF(a, b float64) float64 { return math.Floor(a / b) }

func pyArith(op string, fi func(a, b int64) (int64, error), ff func(a, b float64) float64) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		ai, af, aInt, err := pyNum(a)
		if err != nil {
			return nil, err
		}
		bi, bf, bInt, err := pyNum(b)
		if err != nil {
			return nil, err
		}
		if aInt && bInt {
			return fi(ai, bi)
		}
		if aInt {
			af = float64(ai)
		}
		if bInt {
			bf = float64(bi)
		}
		if (op == "//" || op == "%") && bf == 0 {
			return nil, domainErrorf("ZeroDivisionError: float %s by zero", op)
		}
		return ff(af, bf), nil
	}
}

func pyAdd(a, b Value) (Value, error) {
	if la, ok := a.([]Value); ok {
		if lb, ok := b.([]Value); ok {
			return append(append([]Value{}, la...), lb...), nil
		}
	}
	return pyArith("+", func(x, y int64) (int64, error) { return x + y, nil }, func(x, y float64) float64 { return x + y })(a, b)
}

func pyTrueDiv(a, b Value) (Value, error) {
	x, err := toFloat(a)
	if err != nil {
		return nil, err
	}
	y, err := toFloat(b)
	if err != nil {
		return nil, err
	}
	if y == 0 {
		return nil, domainErrorf("ZeroDivisionError: division by zero")
	}
	return x / y, nil
}

func pyPow(a, b Value) (Value, error) {
	ai, af, aInt, err := pyNum(a)
	if err != nil {
		return nil, err
	}
	bi, bf, bInt, err := pyNum(b)
	if err != nil {
		return nil, err
	}
	if aInt && bInt && bi >= 0 {
		return powI(ai, bi)
	}
	if aInt {
		af = float64(ai)
	}
	if bInt {
		bf = float64(bi)
	}
	return math.Pow(af, bf), nil
}

func pyNeg(a Value) (Value, error) {
	ai, af, aInt, err := pyNum(a)
	if err != nil {
		return nil, err
	}
	if aInt {
		return -ai, nil
	}
	return -af, nil
}

// pyCmp compares two Python numbers: -1, 0 or 1 (NaN compares unequal to all).
func pyCmp(a, b Value) (int, bool, error) {
	ai, af, aInt, err := pyNum(a)
	if err != nil {
		return 0, false, err
	}
	bi, bf, bInt, err := pyNum(b)
	if err != nil {
		return 0, false, err
	}
	if aInt && bInt {
		switch {
		case ai < bi:
			return -1, true, nil
		case ai > bi:
			return 1, true, nil
		}
		return 0, true, nil
	}
	if aInt {
		af = float64(ai)
	}
	if bInt {
		bf = float64(bi)
	}
	switch {
	case math.IsNaN(af) || math.IsNaN(bf):
		return 0, false, nil
	case af < bf:
		return -1, true, nil
	case af > bf:
		return 1, true, nil
	}
	return 0, true, nil
}

func pyCompare(test func(int) bool) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		c, ordered, err := pyCmp(a, b)
		if err != nil {
			return nil, err
		}
		if !ordered {
			// Only != holds for NaN.
			return test(1) && test(-1), nil
		}
		return test(c), nil
	}
}

func pyLogic(and bool) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		ab, aIsBool := a.(bool)
		bb, bIsBool := b.(bool)
		if aIsBool && bIsBool {
			if and {
				return ab && bb, nil
			}
			return ab || bb, nil
		}
		x, err := toInt(a)
		if err != nil {
			return nil, err
		}
		y, err := toInt(b)
		if err != nil {
			return nil, err
		}
		if and {
			return x & y, nil
		}
		return x | y, nil
	}
}

func pyGetitem(a, b Value) (Value, error) {
	i, err := toInt(b)
	if err != nil {
		return nil, fmt.Errorf("getitem index: %w", err)
	}
	switch x := a.(type) {
	case []Value:
		n := int64(len(x))
		if i < -n || i >= n {
			return nil, fmt.Errorf("getitem index %d out of range for %d elements", i, n)
		}
		if i < 0 {
			i += n
		}
		return x[i], nil
	case *Tensor:
		return selectView(x, 0, i)
	}
	return nil, fmt.Errorf("getitem on a %s", kindOf(a))
}

func pyMinMax(isMax bool) func(a, b Value) (Value, error) {
	return func(a, b Value) (Value, error) {
		c, ordered, err := pyCmp(a, b)
		if err != nil {
			return nil, err
		}
		if !ordered {
			return math.NaN(), nil
		}
		if (isMax && c >= 0) || (!isMax && c <= 0) {
			return normNum(a), nil
		}
		return normNum(b), nil
	}
}

// normNum turns bools into ints, as Python arithmetic does.
func normNum(v Value) Value {
	if b, ok := v.(bool); ok {
		return b2i(b)
	}
	return v
}

func pyToInt(round func(float64) float64) func(a Value) (Value, error) {
	return func(a Value) (Value, error) {
		ai, af, aInt, err := pyNum(a)
		if err != nil {
			return nil, err
		}
		if aInt {
			return ai, nil
		}
		if math.IsNaN(af) || math.IsInf(af, 0) {
			return nil, fmt.Errorf("cannot convert float %g to integer", af)
		}
		return int64(round(af)), nil
	}
}

func kSymIte(c *call) ([]Value, error) {
	b, err := c.pos(0)
	if err != nil {
		return nil, err
	}
	cond, err := toBool(b)
	if err != nil {
		return nil, err
	}
	if cond {
		v, err := c.pos(1)
		return []Value{v}, err
	}
	v, err := c.pos(2)
	return []Value{v}, err
}

func kSymSum(c *call) ([]Value, error) {
	a, err := c.pos(0)
	if err != nil {
		return nil, err
	}
	l, ok := a.([]Value)
	if !ok {
		return nil, fmt.Errorf("sym_sum expects a list, got %s", kindOf(a))
	}
	var acc Value = int64(0)
	for _, v := range l {
		if acc, err = pyAdd(acc, v); err != nil {
			return nil, err
		}
	}
	return one(acc), nil
}

func kRound(c *call) ([]Value, error) {
	a, err := c.pos(0)
	if err != nil {
		return nil, err
	}
	var nd Value
	if len(c.args) > 1 {
		nd = c.args[1]
	}
	if nd == nil {
		v, err := pyToInt(math.RoundToEven)(a)
		return []Value{v}, err
	}
	d, err := toInt(nd)
	if err != nil {
		return nil, err
	}
	ai, af, aInt, err := pyNum(a)
	if err != nil {
		return nil, err
	}
	if aInt {
		if d >= 0 {
			return one(ai), nil
		}
		p, _ := powI(10, -d)
		return one(int64(math.RoundToEven(float64(ai)/float64(p))) * p), nil
	}
	s := math.Pow(10, float64(d))
	return one(math.RoundToEven(af*s) / s), nil
}

func kSymSizeInt(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	d, err := c.dim("dim", x.Rank())
	if err != nil {
		return nil, err
	}
	if x.Rank() == 0 {
		return nil, fmt.Errorf("sym_size of a 0-dim tensor")
	}
	return one(x.Shape[d]), nil
}

func kSymSizes(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	l := make([]Value, x.Rank())
	for i, d := range x.Shape {
		l[i] = d
	}
	return one(l), nil
}

func kSymNumel(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	return one(x.Numel()), nil
}

// kSymStride reports the stride torch would give a contiguous tensor of the
// shape: the interpreter's own strides are an implementation detail.
func kSymStride(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	d, err := c.dim("dim", x.Rank())
	if err != nil {
		return nil, err
	}
	if x.Rank() == 0 {
		return nil, fmt.Errorf("sym_stride of a 0-dim tensor")
	}
	return one(contiguousStrides(x.Shape)[d]), nil
}

func kSymStorageOffset(c *call) ([]Value, error) {
	if _, err := c.tensor("self"); err != nil {
		return nil, err
	}
	return one(int64(0)), nil
}

func kAssertAsync(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	if x.Numel() != 1 {
		return nil, fmt.Errorf("expected a tensor with a single value, got %d elements", x.Numel())
	}
	if ok, _ := toBool(x); !ok {
		msg := "Expected Tensor with single nonzero value, but got zero"
		if c.has("assert_msg") {
			if m, err := c.str("assert_msg"); err == nil {
				msg = m
			}
		}
		return nil, domainErrorf("assertion failed: %s", msg)
	}
	return nil, nil
}

func kAssertScalar(c *call) ([]Value, error) {
	v, err := c.arg("self")
	if err != nil {
		return nil, err
	}
	ok, err := toBool(v)
	if err != nil {
		return nil, err
	}
	if !ok {
		msg, _ := c.str("assert_msg")
		return nil, domainErrorf("assertion failed: %s", msg)
	}
	return nil, nil
}

func kAssertMetadata(c *call) ([]Value, error) {
	x, err := c.tensor("a")
	if err != nil {
		return nil, err
	}
	if size, ok, err := c.optInts("size"); err != nil {
		return nil, err
	} else if ok && !sameShape(size, x.Shape) {
		return nil, domainErrorf("tensor metadata assertion failed: expected size %v, got %v", size, x.Shape)
	}
	if dt, ok, err := c.optDType("dtype"); err != nil {
		return nil, err
	} else if ok && dt != x.DType {
		return nil, domainErrorf("tensor metadata assertion failed: expected dtype %s, got %s", dt, x.DType)
	}
	return nil, nil
}

func kConstrainRange(c *call) ([]Value, error) {
	v, err := c.arg("size")
	if err != nil {
		return nil, err
	}
	x, err := toInt(v)
	if err != nil {
		return nil, err
	}
	lo, hasLo, err := c.optInt("min")
	if err != nil {
		return nil, err
	}
	hi, hasHi, err := c.optInt("max")
	if err != nil {
		return nil, err
	}
	if c.op == ir.OpAtenSymConstrainRangeForSize && x < 0 {
		return nil, domainErrorf("constraint violated: %d is not a valid size", x)
	}
	if (hasLo && x < lo) || (hasHi && x > hi) {
		return nil, domainErrorf("constraint violated: %d is not in [%v, %v]", x, optStr(lo, hasLo), optStr(hi, hasHi))
	}
	return nil, nil
}

func optStr(v int64, ok bool) string {
	if !ok {
		return "None"
	}
	return fmt.Sprint(v)
}
