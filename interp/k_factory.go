package interp

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
)

// Factories and random ops. empty* tensors are zero-filled so that runs are
// deterministic. Random ops draw from the run's seeded generator.

func init() {
	register(kArange, ir.OpAtenArange, ir.OpAtenArangeStart, ir.OpAtenArangeStartStep)
	register(kFull("size", "fill_value"), ir.OpAtenFull)
	register(kFull("shape", "fill_value"), ir.OpPrimsFull)
	register(kConstFill("size", 0), ir.OpAtenZeros, ir.OpAtenEmptyMemoryFormat, ir.OpAtenEmptyStrided, ir.OpAtenEmptyPermuted, ir.OpDimOrderOps_EmptyDimOrder)
	register(kConstFill("shape", 0), ir.OpPrimsEmptyStrided)
	register(kConstFill("size", 1), ir.OpAtenOnes)
	register(kLike(0, false), ir.OpAtenZerosLike, ir.OpAtenEmptyLike)
	register(kLike(1, false), ir.OpAtenOnesLike)
	register(kLike(0, true), ir.OpAtenFullLike)
	register(kNew("size", 0, false), ir.OpAtenNewZeros, ir.OpAtenNewEmpty)
	register(kNew("size", 1, false), ir.OpAtenNewOnes)
	register(kNew("size", 0, true), ir.OpAtenNewFull)
	register(kScalarTensor, ir.OpAtenScalarTensor)
	register(kEye, ir.OpAtenEye)
	register(kLinspace, ir.OpAtenLinspace)
	register(kIota, ir.OpPrimsIota)
	register(kRand(false), ir.OpAtenRand)
	register(kRand(true), ir.OpAtenRandn)
	register(kRandLike(false), ir.OpAtenRandLike)
	register(kRandLike(true), ir.OpAtenRandnLike)
	register(kRandint, ir.OpAtenRandint, ir.OpAtenRandintLow)
	register(kRandperm, ir.OpAtenRandperm)
	register(kBernoulli, ir.OpAtenBernoulli, ir.OpAtenBernoulliP)
	register(kUniform, ir.OpAtenUniform)
	register(kDropout, ir.OpAtenDropout)
	register(kNativeDropout, ir.OpAtenNativeDropout)
}

// factoryDType reads the dtype argument or returns def.
func factoryDType(c *call, def ir.DType) (ir.DType, error) {
	dt := def
	if c.has("dtype") {
		if d, ok, err := c.optDType("dtype"); err != nil {
			return 0, err
		} else if ok {
			dt = d
		}
	}
	return dt, checkDType(dt)
}

func checkSize(size []int64) error {
	for _, d := range size {
		if d < 0 {
			return fmt.Errorf("trying to create tensor with negative dimension %d: %v", d, size)
		}
	}
	return nil
}

func kArange(c *call) ([]Value, error) {
	start, end, step := scalar{kind: ir.Int64}, scalar{}, scalar{kind: ir.Int64, i: 1}
	var err error
	if c.has("start") {
		if start, err = c.scalar("start"); err != nil {
			return nil, err
		}
	}
	if end, err = c.scalar("end"); err != nil {
		return nil, err
	}
	if c.has("step") {
		if step, err = c.scalar("step"); err != nil {
			return nil, err
		}
	}
	def := ir.Int64
	for _, s := range []scalar{start, end, step} {
		if s.kind == ir.Float64 {
			def = ir.DefaultFloat
		}
	}
	dt, err := factoryDType(c, def)
	if err != nil {
		return nil, err
	}
	if step.float() == 0 {
		return nil, fmt.Errorf("step must be nonzero")
	}
	if (step.float() > 0 && end.float() < start.float()) || (step.float() < 0 && end.float() > start.float()) {
		return nil, fmt.Errorf("upper bound and larger bound inconsistent with step sign")
	}
	var n int64
	if def == ir.Int64 && isIntDT(dt) {
		d := end.int() - start.int()
		s := step.int()
		n = (d + s - sign64(s)) / s
	} else {
		n = int64(math.Ceil((end.float() - start.float()) / step.float()))
	}
	if n < 0 {
		return nil, fmt.Errorf("upper bound and larger bound inconsistent with step sign")
	}
	if isIntDT(dt) && def == ir.Int64 {
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = start.int() + int64(i)*step.int()
		}
		return one(FromInt64(dt, []int64{n}, vals)), nil
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = start.float() + float64(i)*step.float()
	}
	return one(FromFloat64(dt, []int64{n}, vals)), nil
}

func sign64(x int64) int64 {
	if x < 0 {
		return -1
	}
	return 1
}

// fillDType is the dtype torch.full infers from its fill value.
func fillDType(s scalar) ir.DType {
	switch s.kind {
	case ir.Bool:
		return ir.Bool
	case ir.Int64:
		return ir.Int64
	case ir.Complex128:
		return ir.DefaultComplex
	}
	return ir.DefaultFloat
}

func kFull(sizeArg, fillArg string) kernel {
	return func(c *call) ([]Value, error) {
		size, err := c.ints(sizeArg)
		if err != nil {
			return nil, err
		}
		if err := checkSize(size); err != nil {
			return nil, err
		}
		s, err := c.scalar(fillArg)
		if err != nil {
			return nil, err
		}
		dt, err := factoryDType(c, fillDType(s))
		if err != nil {
			return nil, err
		}
		return one0(fillLike(size, dt, s.tensor()))
	}
}

func kConstFill(sizeArg string, v int64) kernel {
	return func(c *call) ([]Value, error) {
		size, err := c.ints(sizeArg)
		if err != nil {
			return nil, err
		}
		if err := checkSize(size); err != nil {
			return nil, err
		}
		dt, err := factoryDType(c, ir.DefaultFloat)
		if err != nil {
			return nil, err
		}
		return one0(fillLike(size, dt, ScalarInt0(ir.Int64, v)))
	}
}

func kLike(v int64, withFill bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		dt, err := factoryDType(c, x.DType)
		if err != nil {
			return nil, err
		}
		fill := ScalarInt0(ir.Int64, v)
		if withFill {
			s, err := c.scalar("fill_value")
			if err != nil {
				return nil, err
			}
			fill = s.tensor()
		}
		return one0(fillLike(x.Shape, dt, fill))
	}
}

func kNew(sizeArg string, v int64, withFill bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		size, err := c.ints(sizeArg)
		if err != nil {
			return nil, err
		}
		if err := checkSize(size); err != nil {
			return nil, err
		}
		dt, err := factoryDType(c, x.DType)
		if err != nil {
			return nil, err
		}
		fill := ScalarInt0(ir.Int64, v)
		if withFill {
			s, err := c.scalar("fill_value")
			if err != nil {
				return nil, err
			}
			fill = s.tensor()
		}
		return one0(fillLike(size, dt, fill))
	}
}

func kScalarTensor(c *call) ([]Value, error) {
	s, err := c.scalar("s")
	if err != nil {
		return nil, err
	}
	dt, err := factoryDType(c, ir.DefaultFloat)
	if err != nil {
		return nil, err
	}
	return one0(fillLike(nil, dt, s.tensor()))
}

func kEye(c *call) ([]Value, error) {
	n, err := c.int("n")
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("n must be greater or equal to 0, got %d", n)
	}
	dt, err := factoryDType(c, ir.DefaultFloat)
	if err != nil {
		return nil, err
	}
	vals := make([]int64, n*n)
	for i := int64(0); i < n; i++ {
		vals[i*n+i] = 1
	}
	return one(FromInt64(dt, []int64{n, n}, vals)), nil
}

func kLinspace(c *call) ([]Value, error) {
	start, err := c.scalar("start")
	if err != nil {
		return nil, err
	}
	end, err := c.scalar("end")
	if err != nil {
		return nil, err
	}
	steps, err := c.int("steps")
	if err != nil {
		return nil, err
	}
	if steps < 0 {
		return nil, fmt.Errorf("number of steps must be non-negative")
	}
	dt, err := factoryDType(c, ir.DefaultFloat)
	if err != nil {
		return nil, err
	}
	vals := make([]float64, steps)
	a, b := start.float(), end.float()
	if steps == 1 {
		vals[0] = a
	} else if steps > 1 {
		step := (b - a) / float64(steps-1)
		half := steps / 2
		for i := int64(0); i < steps; i++ {
			if i < half {
				vals[i] = a + step*float64(i)
			} else {
				vals[i] = b - step*float64(steps-i-1)
			}
		}
	}
	return one(FromFloat64(dt, []int64{steps}, vals)), nil
}

func kIota(c *call) ([]Value, error) {
	n, err := c.int("length")
	if err != nil {
		return nil, err
	}
	start, err := c.int("start")
	if err != nil {
		return nil, err
	}
	step, err := c.int("step")
	if err != nil {
		return nil, err
	}
	v, err := c.arg("dtype")
	if err != nil {
		return nil, err
	}
	dt, err := toDType(v)
	if err != nil {
		return nil, err
	}
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = start + int64(i)*step
	}
	return one(FromInt64(dt, []int64{n}, vals)), nil
}

// randomFill fills a new tensor with draws from gen.
func randomFill(dt ir.DType, shape []int64, gen func() float64) (*Tensor, error) {
	if err := checkDType(dt); err != nil {
		return nil, err
	}
	vals := make([]float64, numel(shape))
	for i := range vals {
		vals[i] = gen()
	}
	return FromFloat64(dt, shape, vals), nil
}

func kRand(normal bool) kernel {
	return func(c *call) ([]Value, error) {
		size, err := c.ints("size")
		if err != nil {
			return nil, err
		}
		if err := checkSize(size); err != nil {
			return nil, err
		}
		dt, err := factoryDType(c, ir.DefaultFloat)
		if err != nil {
			return nil, err
		}
		gen := c.m.drawFloat
		if normal {
			gen = c.m.drawNormal
		}
		return one0(randomFill(dt, size, gen))
	}
}

func kRandLike(normal bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		dt, err := factoryDType(c, x.DType)
		if err != nil {
			return nil, err
		}
		gen := c.m.drawFloat
		if normal {
			gen = c.m.drawNormal
		}
		return one0(randomFill(dt, x.Shape, gen))
	}
}

func kRandint(c *call) ([]Value, error) {
	low := int64(0)
	var err error
	if c.has("low") {
		if low, err = c.int("low"); err != nil {
			return nil, err
		}
	}
	high, err := c.int("high")
	if err != nil {
		return nil, err
	}
	if high <= low {
		return nil, fmt.Errorf("random_ expects 'from' to be less than 'to', but got from=%d >= to=%d", low, high)
	}
	size, err := c.ints("size")
	if err != nil {
		return nil, err
	}
	if err := checkSize(size); err != nil {
		return nil, err
	}
	dt, err := factoryDType(c, ir.Int64)
	if err != nil {
		return nil, err
	}
	vals := make([]int64, numel(size))
	for i := range vals {
		vals[i] = low + c.m.drawInt(high-low)
	}
	return one(FromInt64(dt, size, vals)), nil
}

func kRandperm(c *call) ([]Value, error) {
	n, err := c.int("n")
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("n must be non-negative, got %d", n)
	}
	dt, err := factoryDType(c, ir.Int64)
	if err != nil {
		return nil, err
	}
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = int64(i)
	}
	for i := n - 1; i > 0; i-- {
		j := c.m.drawInt(i + 1)
		vals[i], vals[j] = vals[j], vals[i]
	}
	return one(FromInt64(dt, []int64{n}, vals)), nil
}

func kBernoulli(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	var probs []float64
	if c.has("p") {
		p, err := c.float("p")
		if err != nil {
			return nil, err
		}
		probs = repeatF(p, x.Numel())
	} else {
		probs = x.Float64s()
	}
	vals := make([]float64, len(probs))
	for i, p := range probs {
		if p < 0 || p > 1 || math.IsNaN(p) {
			return nil, domainErrorf("bernoulli expects 0 <= p <= 1, got %g", p)
		}
		if c.m.drawFloat() < p {
			vals[i] = 1
		}
	}
	return one(FromFloat64(x.DType, x.Shape, vals)), nil
}

func repeatF(v float64, n int64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func kUniform(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	lo, err := c.float("from")
	if err != nil {
		return nil, err
	}
	hi, err := c.float("to")
	if err != nil {
		return nil, err
	}
	return one0(randomFill(x.DType, x.Shape, func() float64 { return lo + (hi-lo)*c.m.drawFloat() }))
}

// dropoutMask draws a keep-mask with probability 1-p and scales kept values.
func dropout(m *machine, x *Tensor, p float64) (*Tensor, *Tensor, error) {
	if p < 0 || p > 1 {
		return nil, nil, fmt.Errorf("dropout probability has to be between 0 and 1, but got %g", p)
	}
	if !isFloatDT(x.DType) {
		return nil, nil, fmt.Errorf("dropout is not supported for %s", x.DType)
	}
	vals := x.Float64s()
	keep := make([]int64, len(vals))
	for i := range vals {
		if p < 1 && m.drawFloat() >= p {
			keep[i] = 1
			vals[i] /= 1 - p
		} else {
			vals[i] = 0
		}
	}
	return FromFloat64(x.DType, x.Shape, vals), FromInt64(ir.Bool, x.Shape, keep), nil
}

func kDropout(c *call) ([]Value, error) {
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	p, err := c.float("p")
	if err != nil {
		return nil, err
	}
	train, err := c.bool("train")
	if err != nil {
		return nil, err
	}
	if !train || p == 0 {
		return one(x.Clone()), nil
	}
	out, _, err := dropout(c.m, x, p)
	return one0(out, err)
}

func kNativeDropout(c *call) ([]Value, error) {
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	p, err := c.float("p")
	if err != nil {
		return nil, err
	}
	train, err := c.optBool("train", true)
	if err != nil {
		return nil, err
	}
	if !train || p == 0 {
		ones := make([]int64, x.Numel())
		for i := range ones {
			ones[i] = 1
		}
		return []Value{x.Clone(), FromInt64(ir.Bool, x.Shape, ones)}, nil
	}
	out, mask, err := dropout(c.m, x, p)
	if err != nil {
		return nil, err
	}
	return []Value{out, mask}, nil
}
