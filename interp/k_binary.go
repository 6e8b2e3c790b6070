package interp

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"github.com/fxport/fxport/ir"
)

// Binary elementwise arithmetic with torch's broadcasting and type promotion.

var errZeroDiv = &DomainError{Err: errors.New("ZeroDivisionError: integer division by zero")}

// arith describes one binary op per compute domain.
type arith struct {
	f func(x, y float64) float64
	i func(x, y int64) (int64, error)
	c func(x, y complex128) complex128
	// b computes on bools (0/1); nil runs i and converts the result to bool,
	// or rejects bools when boolErr is set.
	b       func(x, y int64) (int64, error)
	boolErr string
	// float makes integer and bool results the default float dtype (true division).
	float bool
}

// apply runs the op on two operands with type promotion.
func (s arith) apply(a, b operand) (*Tensor, error) {
	dt, err := resultType(a, b)
	if err != nil {
		return nil, err
	}
	if s.float {
		dt = toFloatDType(dt)
	}
	return s.applyAs(a.t, b.t, dt)
}

func (s arith) applyAs(a, b *Tensor, dt ir.DType) (*Tensor, error) {
	switch domainOf(dt) {
	case domFloat:
		if s.f == nil {
			return nil, fmt.Errorf("not supported for %s", dt)
		}
		return binaryF(a, b, dt, s.f)
	case domComplex:
		if s.c == nil {
			return nil, fmt.Errorf("not supported for %s", dt)
		}
		return binaryC(a, b, dt, s.c)
	case domInt:
		if dt == ir.Bool {
			if s.boolErr != "" {
				return nil, errors.New(s.boolErr)
			}
			if s.b != nil {
				return binaryI(a, b, ir.Bool, s.b)
			}
		}
		if s.i == nil {
			return nil, fmt.Errorf("not supported for %s", dt)
		}
		return binaryI(a, b, dt, s.i)
	}
	return nil, fmt.Errorf("dtype %s is not supported", dt)
}

// binaryKernel reads two operands by name and applies s.
func binaryKernel(s arith, lhs, rhs string) kernel {
	return func(c *call) ([]Value, error) {
		a, err := c.operand(lhs)
		if err != nil {
			return nil, err
		}
		b, err := c.operand(rhs)
		if err != nil {
			return nil, err
		}
		return one0(s.apply(a, b))
	}
}

func floorDivI(x, y int64) (int64, error) {
	if y == 0 {
		return 0, errZeroDiv
	}
	q := x / y
	if (x%y != 0) && ((x < 0) != (y < 0)) {
		q--
	}
	return q, nil
}

func truncDivI(x, y int64) (int64, error) {
	if y == 0 {
		return 0, errZeroDiv
	}
	return x / y, nil
}

func remainderI(x, y int64) (int64, error) {
	if y == 0 {
		return 0, errZeroDiv
	}
	r := x % y
	if r != 0 && (r < 0) != (y < 0) {
		r += y
	}
	return r, nil
}

func fmodI(x, y int64) (int64, error) {
	if y == 0 {
		return 0, errZeroDiv
	}
	return x % y, nil
}

// divFloorF is torch's div_floor_floating: floor division that agrees with
// Python's // for floats.
func divFloorF(a, b float64) float64 {
	if b == 0 {
		return a / b
	}
	mod := math.Mod(a, b)
	div := (a - mod) / b
	if mod != 0 && (b < 0) != (mod < 0) {
		div--
	}
	if div == 0 {
		return math.Copysign(0, a/b)
	}
	fd := math.Floor(div)
	if div-fd > 0.5 {
		fd++
	}
	return fd
}

func remainderF(a, b float64) float64 {
	mod := math.Mod(a, b)
	if mod != 0 && (b < 0) != (mod < 0) {
		mod += b
	}
	return mod
}

// powI is integer power; negative exponents give what torch's tensor kernel
// gives (1 for base 1, ±1 for base -1, 0 otherwise).
func powI(b, e int64) (int64, error) {
	if e < 0 {
		switch b {
		case 1:
			return 1, nil
		case -1:
			if e%2 != 0 {
				return -1, nil
			}
			return 1, nil
		}
		return 0, nil
	}
	r := int64(1)
	for e > 0 {
		if e&1 == 1 {
			r *= b
		}
		b *= b
		e >>= 1
	}
	return r, nil
}

func nanMax(x, y float64) float64 {
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.NaN()
	}
	return math.Max(x, y)
}

func nanMin(x, y float64) float64 {
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.NaN()
	}
	return math.Min(x, y)
}

func fmaxF(x, y float64) float64 {
	switch {
	case math.IsNaN(x):
		return y
	case math.IsNaN(y):
		return x
	}
	return math.Max(x, y)
}

func fminF(x, y float64) float64 {
	switch {
	case math.IsNaN(x):
		return y
	case math.IsNaN(y):
		return x
	}
	return math.Min(x, y)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

var (
	arMul = arith{
		f: func(x, y float64) float64 { return x * y },
		i: func(x, y int64) (int64, error) { return x * y, nil },
		c: func(x, y complex128) complex128 { return x * y },
		b: func(x, y int64) (int64, error) { return x & y, nil },
	}
	arTrueDiv = arith{
		f:     func(x, y float64) float64 { return x / y },
		c:     func(x, y complex128) complex128 { return x / y },
		float: true,
	}
	arTruncDiv = arith{
		f: func(x, y float64) float64 { return math.Trunc(x / y) },
		i: truncDivI,
	}
	arFloorDiv  = arith{f: divFloorF, i: floorDivI}
	arRemainder = arith{f: remainderF, i: remainderI}
	arFmod      = arith{f: math.Mod, i: fmodI}
	arMaximum   = arith{f: nanMax, i: func(x, y int64) (int64, error) { return max(x, y), nil }}
	arMinimum   = arith{f: nanMin, i: func(x, y int64) (int64, error) { return min(x, y), nil }}
	arFmax      = arith{f: fmaxF, i: func(x, y int64) (int64, error) { return max(x, y), nil }}
	arFmin      = arith{f: fminF, i: func(x, y int64) (int64, error) { return min(x, y), nil }}
	arAtan2     = arith{f: math.Atan2, float: true}
	arHypot     = arith{f: math.Hypot, float: true}
	arCopysign  = arith{f: math.Copysign, float: true}
	arPow       = arith{f: math.Pow, i: powI, c: cmplx.Pow,
		b: func(x, y int64) (int64, error) { return b2i(x != 0 || y == 0), nil }}
	arAnd = arith{i: func(x, y int64) (int64, error) { return x & y, nil }}
	arOr  = arith{i: func(x, y int64) (int64, error) { return x | y, nil }}
	arXor = arith{i: func(x, y int64) (int64, error) { return x ^ y, nil }}
)

func init() {
	register(kAdd, ir.OpAtenAddTensor, ir.OpAtenAddScalar, ir.OpPrimsAdd)
	register(kSub, ir.OpAtenSubTensor, ir.OpAtenSubScalar, ir.OpPrimsSub)
	register(kRsub, ir.OpAtenRsubTensor, ir.OpAtenRsubScalar)
	register(binaryKernel(arMul, "self", "other"), ir.OpAtenMulTensor, ir.OpAtenMulScalar, ir.OpPrimsMul)
	register(binaryKernel(arTrueDiv, "self", "other"), ir.OpAtenDivTensor, ir.OpAtenDivScalar, ir.OpAtenTrueDivideTensor)
	register(binaryKernel(arith{f: arTrueDiv.f, i: truncDivI, c: arTrueDiv.c}, "self", "other"), ir.OpPrimsDiv)
	register(kDivMode, ir.OpAtenDivTensorMode, ir.OpAtenDivScalarMode)
	register(binaryKernel(arFloorDiv, "self", "other"), ir.OpAtenFloorDivide, ir.OpAtenFloorDivideScalar)
	register(binaryKernel(arRemainder, "self", "other"), ir.OpAtenRemainderTensor, ir.OpAtenRemainderScalar, ir.OpAtenRemainderScalarTensor)
	register(binaryKernel(arFmod, "self", "other"), ir.OpAtenFmodTensor, ir.OpAtenFmodScalar)
	register(binaryKernel(arMaximum, "self", "other"), ir.OpAtenMaximum, ir.OpAtenMaxOther)
	register(binaryKernel(arMinimum, "self", "other"), ir.OpAtenMinimum, ir.OpAtenMinOther)
	register(binaryKernel(arFmax, "self", "other"), ir.OpAtenFmax)
	register(binaryKernel(arFmin, "self", "other"), ir.OpAtenFmin)
	register(binaryKernel(arAtan2, "self", "other"), ir.OpAtenAtan2)
	register(binaryKernel(arHypot, "self", "other"), ir.OpAtenHypot)
	register(binaryKernel(arCopysign, "self", "other"), ir.OpAtenCopysignTensor)
	register(binaryKernel(arAnd, "self", "other"), ir.OpAtenBitwiseAndTensor, ir.OpAtenBitwiseAndScalar)
	register(binaryKernel(arOr, "self", "other"), ir.OpAtenBitwiseOrTensor, ir.OpAtenBitwiseOrScalar)
	register(binaryKernel(arXor, "self", "other"), ir.OpAtenBitwiseXorTensor, ir.OpAtenBitwiseXorScalar)
	register(kShift(true), ir.OpAtenBitwiseLeftShiftTensor)
	register(kShift(false), ir.OpAtenBitwiseRightShiftTensor)
	register(kPow, ir.OpAtenPowTensorTensor, ir.OpAtenPowTensorScalar, ir.OpAtenPowScalar)
	register(kLogical(func(x, y bool) bool { return x && y }), ir.OpAtenLogicalAnd)
	register(kLogical(func(x, y bool) bool { return x || y }), ir.OpAtenLogicalOr)
	register(kLogical(func(x, y bool) bool { return x != y }), ir.OpAtenLogicalXor)
	register(kLerp, ir.OpAtenLerpScalar)
}

// alphaFor reads alpha and checks it against the result dtype as torch does.
func alphaFor(c *call, dt ir.DType) (scalar, error) {
	if !c.has("alpha") {
		return scalar{kind: ir.Int64, i: 1}, nil
	}
	al, err := c.scalar("alpha")
	if err != nil {
		return scalar{}, err
	}
	switch {
	case isIntDT(dt) && al.kind == ir.Float64:
		return scalar{}, fmt.Errorf("for integral input tensors, argument alpha must not be a floating point number")
	case dt == ir.Bool && al.kind != ir.Bool && !(al.kind == ir.Int64 && (al.i == 0 || al.i == 1)):
		return scalar{}, fmt.Errorf("boolean alpha only supported for boolean results")
	}
	return al, nil
}

func addLike(c *call, lhs, rhs string, neg bool) ([]Value, error) {
	a, err := c.operand(lhs)
	if err != nil {
		return nil, err
	}
	b, err := c.operand(rhs)
	if err != nil {
		return nil, err
	}
	dt, err := resultType(a, b)
	if err != nil {
		return nil, err
	}
	al, err := alphaFor(c, dt)
	if err != nil {
		return nil, err
	}
	if neg {
		if dt == ir.Bool {
			return nil, fmt.Errorf("subtraction, the `-` operator, with two bool tensors is not supported")
		}
		al = scalar{kind: al.kind, i: -al.i, f: -al.f, c: -al.c}
	}
	af, ai, ac := al.float(), al.int(), al.c
	if al.kind != ir.Complex128 {
		ac = complex(af, 0)
	}
	if isFloatDT(dt) {
		af = roundFloat(dt, af)
	}
	s := arith{
		f: func(x, y float64) float64 { return x + af*y },
		i: func(x, y int64) (int64, error) { return x + ai*y, nil },
		c: func(x, y complex128) complex128 { return x + ac*y },
		b: func(x, y int64) (int64, error) { return b2i(x != 0 || (ai != 0 && y != 0)), nil },
	}
	if af == 1 && !neg {
		s.f = func(x, y float64) float64 { return x + y }
	}
	return one0(s.applyAs(a.t, b.t, dt))
}

func kAdd(c *call) ([]Value, error) { return addLike(c, "self", "other", false) }
func kSub(c *call) ([]Value, error) { return addLike(c, "self", "other", true) }

// kRsub is other - alpha * self.
func kRsub(c *call) ([]Value, error) { return addLike(c, "other", "self", true) }

func kDivMode(c *call) ([]Value, error) {
	mode, has, err := c.optStr("rounding_mode")
	if err != nil {
		return nil, err
	}
	a, err := c.operand("self")
	if err != nil {
		return nil, err
	}
	b, err := c.operand("other")
	if err != nil {
		return nil, err
	}
	switch {
	case !has:
		return one0(arTrueDiv.apply(a, b))
	case mode == "trunc":
		return one0(arTruncDiv.apply(a, b))
	case mode == "floor":
		return one0(arFloorDiv.apply(a, b))
	}
	return nil, fmt.Errorf("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found %q", mode)
}

func kShift(left bool) kernel {
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
		if !isIntDT(dt) {
			return nil, fmt.Errorf("shifts are not supported for %s", dt)
		}
		bits := uint64(dt.Bits())
		unsigned := !dt.IsSigned()
		s := arith{i: func(x, y int64) (int64, error) {
			if left {
				if uint64(y) >= bits {
					return 0, nil
				}
				return x << uint64(y), nil
			}
			if uint64(y) >= bits {
				if unsigned || x >= 0 {
					return 0, nil
				}
				return -1, nil
			}
			if unsigned {
				return int64(uint64(x) >> uint64(y)), nil
			}
			return x >> uint64(y), nil
		}}
		return one0(s.applyAs(a.t, b.t, dt))
	}
}

func kPow(c *call) ([]Value, error) {
	base, err := c.operand("self")
	if err != nil {
		return nil, err
	}
	exp, err := c.operand("exponent")
	if err != nil {
		return nil, err
	}
	dt, err := resultType(base, exp)
	if err != nil {
		return nil, err
	}
	if isIntDT(dt) && exp.cat.Scalar {
		if e := exp.t.itemInt(); e < 0 {
			return nil, fmt.Errorf("integers to negative integer powers are not allowed")
		}
	}
	return one0(arPow.applyAs(base.t, exp.t, dt))
}

func kLogical(f func(x, y bool) bool) kernel {
	return func(c *call) ([]Value, error) {
		a, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		b, err := c.tensor("other")
		if err != nil {
			return nil, err
		}
		return one0(binaryI(a.To(ir.Bool), b.To(ir.Bool), ir.Bool, func(x, y int64) (int64, error) {
			return b2i(f(x != 0, y != 0)), nil
		}))
	}
}

func kLerp(c *call) ([]Value, error) {
	a, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	b, err := c.tensor("end")
	if err != nil {
		return nil, err
	}
	w, err := c.scalar("weight")
	if err != nil {
		return nil, err
	}
	if a.DType != b.DType || !isFloatDT(a.DType) {
		return nil, fmt.Errorf("lerp expects float tensors of one dtype, got %s and %s", a.DType, b.DType)
	}
	wt := roundFloat(a.DType, w.float())
	return one0(binaryF(a, b, a.DType, func(x, y float64) float64 {
		if math.Abs(wt) < 0.5 {
			return x + wt*(y-x)
		}
		return y - (y-x)*(1-wt)
	}))
}
