package interp

import (
	"fmt"
	"math"
	"math/cmplx"

	"github.com/fxport/fxport/ir"
)

// Unary elementwise ops. Each has a float function and, where torch
// accepts integer inputs without converting them to float, an integer one.

type unarySpec struct {
	f func(float64) float64
	i func(int64) int64 // nil: integers convert to the default float dtype (or error when sameDType)
	c func(complex128) complex128
	// sameDType keeps the input dtype (integers need i, else error).
	sameDType bool
	// noBool rejects bool inputs (torch's neg on bool).
	noBool bool
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func softplus1(x float64) float64 { return math.Log1p(math.Exp(-math.Abs(x))) + math.Max(x, 0) }

func signF(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0 // zero, and NaN: torch computes (0 < x) - (x < 0)
}

func signI(x int64) int64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func nanMax0(x float64) float64 {
	if math.IsNaN(x) {
		return x
	}
	return math.Max(x, 0)
}

var unaryOps = map[ir.Op]unarySpec{
	ir.OpAtenAbs: {f: math.Abs, i: func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}, sameDType: true},
	ir.OpAtenNeg:         {f: func(x float64) float64 { return -x }, i: func(x int64) int64 { return -x }, c: func(x complex128) complex128 { return -x }, sameDType: true, noBool: true},
	ir.OpPrimsNeg:        {f: func(x float64) float64 { return -x }, i: func(x int64) int64 { return -x }, sameDType: true, noBool: true},
	ir.OpAtenRelu:        {f: nanMax0, i: func(x int64) int64 { return max(x, 0) }, sameDType: true, noBool: true},
	ir.OpAtenCeil:        {f: math.Ceil, i: func(x int64) int64 { return x }, sameDType: true},
	ir.OpAtenFloor:       {f: math.Floor, i: func(x int64) int64 { return x }, sameDType: true},
	ir.OpAtenRound:       {f: math.RoundToEven, i: func(x int64) int64 { return x }, sameDType: true},
	ir.OpAtenTrunc:       {f: math.Trunc, i: func(x int64) int64 { return x }, sameDType: true},
	ir.OpAtenSign:        {f: signF, i: signI, sameDType: true},
	ir.OpAtenSgn:         {f: signF, i: signI, sameDType: true, c: sgnC},
	ir.OpAtenFrac:        {f: func(x float64) float64 { return x - math.Trunc(x) }, sameDType: true},
	ir.OpAtenSquare:      {f: func(x float64) float64 { return x * x }, i: func(x int64) int64 { return x * x }, sameDType: true},
	ir.OpAtenRelu6:       {f: func(x float64) float64 { return hardtanh(x, 0, 6) }, i: func(x int64) int64 { return min(max(x, 0), 6) }, sameDType: true},
	ir.OpAtenHardswish:   {f: func(x float64) float64 { return x * math.Min(math.Max(x+3, 0), 6) / 6 }, sameDType: true},
	ir.OpAtenHardsigmoid: {f: func(x float64) float64 { return math.Min(math.Max(x+3, 0), 6) / 6 }, sameDType: true},
	ir.OpAtenMish:        {f: func(x float64) float64 { return x * math.Tanh(softplus1(x)) }, sameDType: true},
	ir.OpAtenAcos:        {f: math.Acos, c: cmplx.Acos},
	ir.OpAtenAcosh:       {f: math.Acosh, c: cmplx.Acosh},
	ir.OpAtenAsin:        {f: math.Asin, c: cmplx.Asin},
	ir.OpAtenAsinh:       {f: math.Asinh, c: cmplx.Asinh},
	ir.OpAtenAtan:        {f: math.Atan, c: cmplx.Atan},
	ir.OpAtenAtanh:       {f: math.Atanh, c: cmplx.Atanh},
	ir.OpAtenCos:         {f: math.Cos, c: cmplx.Cos},
	ir.OpAtenCosh:        {f: math.Cosh, c: cmplx.Cosh},
	ir.OpAtenSin:         {f: math.Sin, c: cmplx.Sin},
	ir.OpAtenSinh:        {f: math.Sinh, c: cmplx.Sinh},
	ir.OpAtenTan:         {f: math.Tan, c: cmplx.Tan},
	ir.OpAtenTanh:        {f: math.Tanh, c: cmplx.Tanh},
	ir.OpAtenErf:         {f: math.Erf},
	ir.OpAtenErfinv:      {f: math.Erfinv},
	ir.OpAtenExp:         {f: math.Exp, c: cmplx.Exp},
	ir.OpPrimsExp:        {f: math.Exp, c: cmplx.Exp},
	ir.OpAtenExp2:        {f: math.Exp2},
	ir.OpAtenExpm1:       {f: math.Expm1},
	ir.OpAtenLog:         {f: math.Log, c: cmplx.Log},
	ir.OpAtenLog10:       {f: math.Log10, c: cmplx.Log10},
	ir.OpAtenLog1p:       {f: math.Log1p},
	ir.OpAtenLog2:        {f: math.Log2},
	ir.OpAtenReciprocal:  {f: func(x float64) float64 { return 1 / x }, c: func(x complex128) complex128 { return 1 / x }},
	ir.OpAtenRsqrt:       {f: func(x float64) float64 { return 1 / math.Sqrt(x) }, c: func(x complex128) complex128 { return 1 / cmplx.Sqrt(x) }},
	ir.OpPrimsRsqrt:      {f: func(x float64) float64 { return 1 / math.Sqrt(x) }},
	ir.OpAtenSigmoid:     {f: sigmoid, c: func(x complex128) complex128 { return 1 / (1 + cmplx.Exp(-x)) }},
	ir.OpAtenSqrt:        {f: math.Sqrt, c: cmplx.Sqrt},
	ir.OpAtenSilu:        {f: func(x float64) float64 { return x * sigmoid(x) }},
}

func sgnC(x complex128) complex128 {
	a := cmplx.Abs(x)
	if a == 0 {
		return 0
	}
	return x / complex(a, 0)
}

func hardtanh(x, lo, hi float64) float64 {
	if math.IsNaN(x) {
		return x
	}
	return math.Min(math.Max(x, lo), hi)
}

func init() {
	for name, spec := range unaryOps {
		register(unaryKernel(spec), name)
	}
	register(kIsinf, ir.OpAtenIsinf)
	register(kIsnan, ir.OpAtenIsnan)
	register(kIsfinite, ir.OpAtenIsfinite)
	register(kLogicalNot, ir.OpAtenLogicalNot)
	register(kBitwiseNot, ir.OpAtenBitwiseNot)
	register(kElu, ir.OpAtenElu)
	register(kGelu, ir.OpAtenGelu)
	register(kHardtanh, ir.OpAtenHardtanh)
	register(kLeakyRelu, ir.OpAtenLeakyRelu)
	register(kSoftplus, ir.OpAtenSoftplus)
	register(kLogit, ir.OpAtenLogit)
	register(kRoundDecimals, ir.OpAtenRoundDecimals)
	register(kZero, ir.OpAtenZero)
	register(kFillScalar, ir.OpAtenFillScalar)
	register(kFillTensor, ir.OpAtenFillTensor)
	register(kIdentityCopy, ir.OpAtenClone, ir.OpPrimsClone, ir.OpAtenLiftFreshCopy, ir.OpAtenAliasCopy, ir.OpDimOrderOps_CloneDimOrder)
	register(kContiguous, ir.OpAtenContiguous)
}

func unaryKernel(spec unarySpec) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor(c.argName0())
		if err != nil {
			return nil, err
		}
		return one0(unaryApply(x, spec))
	}
}

// argName0 is the name of the op's first schema argument.
func (c *call) argName0() string {
	args := c.schema.Info().Schema.Args
	if len(args) == 0 {
		return ""
	}
	return args[0].Name
}

func one0(t *Tensor, err error) ([]Value, error) {
	if err != nil {
		return nil, err
	}
	return one(t), nil
}

func unaryApply(x *Tensor, spec unarySpec) (*Tensor, error) {
	switch d := domainOf(x.DType); {
	case d == domComplex:
		if spec.c == nil {
			return nil, fmt.Errorf("not supported for complex tensors")
		}
		return unaryC(x, x.DType, spec.c), nil
	case d == domFloat:
		return unaryF(x, x.DType, spec.f), nil
	case spec.noBool && x.DType == ir.Bool:
		return nil, fmt.Errorf("not supported for bool tensors")
	case spec.sameDType && spec.i != nil:
		return unaryI(x, x.DType, spec.i), nil
	case spec.sameDType:
		return nil, fmt.Errorf("not supported for %s tensors", x.DType)
	}
	return unaryF(x, ir.DefaultFloat, spec.f), nil
}

func kIsinf(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	return one(predicate(x, func(v float64) bool { return math.IsInf(v, 0) }, func(int64) bool { return false })), nil
}

func kIsnan(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	return one(predicate(x, math.IsNaN, func(int64) bool { return false })), nil
}

func kIsfinite(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	return one(predicate(x, func(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }, func(int64) bool { return true })), nil
}

func kLogicalNot(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	return one(predicate(x, func(v float64) bool { return v == 0 }, func(v int64) bool { return v == 0 })), nil
}

func kBitwiseNot(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	switch {
	case x.DType == ir.Bool:
		return one(unaryI(x, ir.Bool, func(v int64) int64 { return 1 - v })), nil
	case isIntDT(x.DType):
		return one(unaryI(x, x.DType, func(v int64) int64 { return ^v })), nil
	}
	return nil, fmt.Errorf("bitwise_not is not supported for %s tensors", x.DType)
}

// floatParams reads float-valued Scalar arguments.
func (c *call) floats(names ...string) ([]float64, error) {
	out := make([]float64, len(names))
	for i, n := range names {
		s, err := c.scalar(n)
		if err != nil {
			return nil, err
		}
		out[i] = s.float()
	}
	return out, nil
}

func floatUnary(c *call, f func(float64) float64) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	if !isFloatDT(x.DType) {
		return nil, fmt.Errorf("not supported for %s tensors", x.DType)
	}
	return one(unaryF(x, x.DType, f)), nil
}

func kElu(c *call) ([]Value, error) {
	p, err := c.floats("alpha", "scale", "input_scale")
	if err != nil {
		return nil, err
	}
	alpha, scale, inScale := p[0], p[1], p[2]
	return floatUnary(c, func(x float64) float64 {
		if x > 0 {
			return scale * x
		}
		if math.IsNaN(x) {
			return x
		}
		return scale * alpha * math.Expm1(x*inScale)
	})
}

func kGelu(c *call) ([]Value, error) {
	approx, err := c.str("approximate")
	if err != nil {
		return nil, err
	}
	switch approx {
	case "none":
		return floatUnary(c, func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) })
	case "tanh":
		k := math.Sqrt(2 / math.Pi)
		return floatUnary(c, func(x float64) float64 { return 0.5 * x * (1 + math.Tanh(k*(x+0.044715*x*x*x))) })
	}
	return nil, fmt.Errorf("approximate must be 'none' or 'tanh', got %q", approx)
}

func kHardtanh(c *call) ([]Value, error) {
	p, err := c.floats("min_val", "max_val")
	if err != nil {
		return nil, err
	}
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	if isIntDT(x.DType) {
		lo, hi := int64(p[0]), int64(p[1])
		return one(unaryI(x, x.DType, func(v int64) int64 { return min(max(v, lo), hi) })), nil
	}
	return floatUnary(c, func(x float64) float64 { return hardtanh(x, p[0], p[1]) })
}

func kLeakyRelu(c *call) ([]Value, error) {
	p, err := c.floats("negative_slope")
	if err != nil {
		return nil, err
	}
	return floatUnary(c, func(x float64) float64 {
		if x > 0 {
			return x
		}
		return x * p[0]
	})
}

func kSoftplus(c *call) ([]Value, error) {
	p, err := c.floats("beta", "threshold")
	if err != nil {
		return nil, err
	}
	beta, th := p[0], p[1]
	return floatUnary(c, func(x float64) float64 {
		if x*beta > th {
			return x
		}
		return math.Log1p(math.Exp(x*beta)) / beta
	})
}

func kLogit(c *call) ([]Value, error) {
	eps, hasEps, err := c.optFloat("eps")
	if err != nil {
		return nil, err
	}
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	dt := toFloatDType(x.DType)
	return one(unaryF(x, dt, func(v float64) float64 {
		if hasEps {
			v = math.Min(math.Max(v, eps), 1-eps)
		}
		return math.Log(v / (1 - v))
	})), nil
}

func kRoundDecimals(c *call) ([]Value, error) {
	d, err := c.int("decimals")
	if err != nil {
		return nil, err
	}
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	if !isFloatDT(x.DType) {
		return one(x.Clone()), nil
	}
	// torch: round(x * 10^d) / 10^d (with a negative d: x / 10^-d, then *).
	if d >= 0 {
		s := math.Pow(10, float64(d))
		return one(unaryF(x, x.DType, func(v float64) float64 { return math.RoundToEven(v*s) / s })), nil
	}
	s := math.Pow(10, float64(-d))
	return one(unaryF(x, x.DType, func(v float64) float64 { return math.RoundToEven(v/s) * s })), nil
}

func kZero(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	return one(NewTensor(x.DType, x.Shape...)), nil
}

func kFillScalar(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	s, err := c.scalar("value")
	if err != nil {
		return nil, err
	}
	return one0(fillLike(x.Shape, x.DType, s.tensor()))
}

func kFillTensor(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	v, err := c.tensor("value")
	if err != nil {
		return nil, err
	}
	if v.Rank() != 0 {
		return nil, fmt.Errorf("fill only supports a 0-dimension value tensor, got %d dims", v.Rank())
	}
	return one0(fillLike(x.Shape, x.DType, v))
}

// fillLike returns a tensor of the given shape and dtype filled with the
// single value of v.
func fillLike(shape []int64, dt ir.DType, v *Tensor) (*Tensor, error) {
	if err := checkDType(dt); err != nil {
		return nil, err
	}
	src := v.To(dt)
	out := NewTensor(dt, shape...)
	b, err := expandTo(src, shape)
	if err != nil {
		return nil, err
	}
	copyInto(out, b)
	return out, nil
}

// kIdentityCopy returns a copy of its input (clone, contiguous, lift_fresh_copy).
func kIdentityCopy(c *call) ([]Value, error) {
	x, err := c.tensor(c.argName0())
	if err != nil {
		return nil, err
	}
	return one(x.Clone()), nil
}

// kContiguous returns its input when it is contiguous (an alias, as torch
// does), otherwise a contiguous copy.
func kContiguous(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	if x.IsContiguous() {
		return one(x.Alias()), nil
	}
	return one(x.Clone()), nil
}
