package ir

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir/sym"
)

// Factory rules (full, zeros, arange, rand, …) and FFT rules.

// factoryTensor builds a factory result: the dtype argument or def, the
// device argument, the memory_format/dim_order layout.
func factoryTensor(c *InferCtx, shape []sym.Expr, def DType, like *TensorType) (*TensorType, error) {
	for i, d := range shape {
		if err := checkNonNegative(c, d, fmt.Sprintf("size[%d]", i)); err != nil {
			return nil, err
		}
	}
	r := &TensorType{DType: def, Shape: shape}
	if like != nil {
		r.Device = like.Device
	}
	if dt, ok, err := dtypeArg(c, "dtype"); err != nil {
		return nil, err
	} else if ok {
		r.DType = dt
	}
	if dev, ok, err := deviceArg(c, "device"); err != nil {
		return nil, err
	} else if ok {
		r.Device = dev
	}
	var keep []int
	if like != nil && like.Rank() == len(shape) {
		keep = like.DimOrder
	}
	r.DimOrder = keep
	if err := applyLayoutArgs(c, r, keep); err != nil {
		return nil, err
	}
	return r, nil
}

// inferFactory: zeros/ones/empty/rand/randn/empty_strided/_empty_dim_order/
// prims.empty_strided: argument 0 is the size; the dtype defaults to float32.
func inferFactory(c *InferCtx) ([]Type, error) {
	size, err := symListOf(argAt(c, 0), "size")
	if err != nil {
		return nil, err
	}
	r, err := factoryTensor(c, size, DefaultFloat, nil)
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

// scalarDType is the dtype torch.full infers from a fill value: bool, int64
// or the default float.
func scalarDType(a Arg) (DType, error) {
	d, err := ResultType(a)
	if err != nil {
		return Undefined, err
	}
	return d, nil
}

// inferFull: full(size, fill_value): the dtype defaults to the fill value's kind.
func inferFull(c *InferCtx) ([]Type, error) {
	size, err := symListOf(argAt(c, 0), "size")
	if err != nil {
		return nil, err
	}
	def, err := scalarDType(argAt(c, 1))
	if err != nil {
		return nil, fmt.Errorf("fill_value: %w", err)
	}
	r, err := factoryTensor(c, size, def, nil)
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

// inferFactoryLike: zeros_like/ones_like/empty_like/full_like/rand_like/
// randn_like: self's shape, dtype, device and (preserved) layout unless overridden.
func inferFactoryLike(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	r, err := factoryTensor(c, append([]sym.Expr(nil), t.Shape...), t.DType, t)
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

// inferNewFactory: new_zeros/new_ones/new_empty/new_full(self, size, …):
// self's dtype and device unless overridden.
func inferNewFactory(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	size, err := c.SymInts("size")
	if err != nil {
		return nil, err
	}
	r, err := factoryTensor(c, size, t.DType, &TensorType{Device: t.Device})
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

// inferScalarTensor: scalar_tensor(s): a 0-dim tensor of the default float
// dtype unless dtype is given.
func inferScalarTensor(c *InferCtx) ([]Type, error) {
	r, err := factoryTensor(c, []sym.Expr{}, DefaultFloat, nil)
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

// numberArg is an arange/linspace bound: an int expression or a float.
type numberArg struct {
	isFloat bool
	f       float64
	e       sym.Expr // valid for ints
	sym     bool     // a symbolic float
}

func readNumber(a Arg, what string) (numberArg, error) {
	switch a.Kind {
	case ArgFloat:
		return numberArg{isFloat: true, f: a.Float}, nil
	case ArgBool, ArgInt:
		return numberArg{e: sym.Const(a.Int), f: float64(a.Int)}, nil
	case ArgValue:
		switch t := a.Value.Type.(type) {
		case *SymFloatType:
			return numberArg{isFloat: true, sym: true}, nil
		case *ScalarType:
			if t.Kind == FloatKind {
				return numberArg{isFloat: true, sym: true}, nil
			}
		}
		e, err := SymIntOf(a)
		if err != nil {
			return numberArg{}, fmt.Errorf("%s: %w", what, err)
		}
		v, _ := e.Const()
		return numberArg{e: e, f: float64(v)}, nil
	}
	return numberArg{}, fmt.Errorf("%s: expected a number, got %s %s", what, a.Kind, a)
}

// inferArange: arange(end) / (start, end) / (start, end, step): length
// ceil((end - start) / step), symbolic for integer bounds; int64 unless a
// bound is a float (then the default float) or dtype is given.
func inferArange(c *InferCtx) ([]Type, error) {
	start := numberArg{e: sym.Const(0)}
	step := numberArg{e: sym.Const(1), f: 1}
	var err error
	if hasArg(c, "start") {
		if start, err = readNumber(namedOrNone(c, "start"), "start"); err != nil {
			return nil, err
		}
	}
	end, err := readNumber(namedOrNone(c, "end"), "end")
	if err != nil {
		return nil, err
	}
	if hasArg(c, "step") {
		if step, err = readNumber(namedOrNone(c, "step"), "step"); err != nil {
			return nil, err
		}
	}
	anyFloat := start.isFloat || end.isFloat || step.isFloat
	var n sym.Expr
	if anyFloat {
		static := func(n numberArg) bool {
			if n.isFloat {
				return !n.sym
			}
			return n.e.IsConst()
		}
		if !static(start) || !static(end) || !static(step) {
			return nil, fmt.Errorf("arange with float bounds needs static bounds")
		}
		if step.f == 0 {
			return nil, fmt.Errorf("step must be nonzero")
		}
		l := math.Ceil((end.f - start.f) / step.f)
		if l < 0 {
			l = 0
		}
		n = sym.Const(int64(l))
	} else {
		sv, ok := step.e.Const()
		if !ok {
			return nil, fmt.Errorf("arange needs a static step, got %s", step.e)
		}
		if sv == 0 {
			return nil, fmt.Errorf("step must be nonzero")
		}
		diff := sym.Sub(end.e, start.e)
		if sv < 0 {
			diff, sv = sym.Neg(diff), -sv
		}
		if sv == 1 {
			n = diff
		} else {
			n = sym.CeilDiv(diff, sym.Const(sv))
		}
		if v, ok := n.Const(); ok && v < 0 {
			n = sym.Const(0)
		}
	}
	def := Int64
	if anyFloat {
		def = DefaultFloat
	}
	r, err := factoryTensor(c, []sym.Expr{n}, def, nil)
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

// inferLinspace: [steps] of the default float dtype unless dtype is given.
func inferLinspace(c *InferCtx) ([]Type, error) {
	steps, err := c.SymInt("steps")
	if err != nil {
		return nil, err
	}
	r, err := factoryTensor(c, []sym.Expr{steps}, DefaultFloat, nil)
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

// inferEye: eye(n) → [n, n].
func inferEye(c *InferCtx) ([]Type, error) {
	n, err := c.SymInt("n")
	if err != nil {
		return nil, err
	}
	r, err := factoryTensor(c, []sym.Expr{n, n}, DefaultFloat, nil)
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

// inferRandperm: randperm(n) → [n], int64 by default.
func inferRandperm(c *InferCtx) ([]Type, error) {
	n, err := c.SymInt("n")
	if err != nil {
		return nil, err
	}
	r, err := factoryTensor(c, []sym.Expr{n}, Int64, nil)
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

// inferRandint: randint(high, size)/randint.low(low, high, size): int64 by default.
func inferRandint(c *InferCtx) ([]Type, error) {
	size, err := c.SymInts("size")
	if err != nil {
		return nil, err
	}
	r, err := factoryTensor(c, size, Int64, nil)
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

// inferIota: prims.iota(length, start, step, dtype, device) → [length].
func inferIota(c *InferCtx) ([]Type, error) {
	n, err := c.SymInt("length")
	if err != nil {
		return nil, err
	}
	r, err := factoryTensor(c, []sym.Expr{n}, Int64, nil)
	if err != nil {
		return nil, err
	}
	return one(r), nil
}

// fftDims reads the dim list of the _fft_* ops, normalized.
func fftDims(c *InferCtx, t *TensorType) ([]int, error) {
	dims, err := c.Ints("dim")
	if err != nil {
		return nil, err
	}
	out := make([]int, len(dims))
	for i, d := range dims {
		if out[i], err = normDim(d, t.Rank()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// inferFftC2c: complex to complex: same shape and dtype.
func inferFftC2c(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	if !t.DType.IsComplex() {
		return nil, fmt.Errorf("_fft_c2c expects a complex input, got %s", t.DType)
	}
	if _, err := fftDims(c, t); err != nil {
		return nil, err
	}
	return one(cloneTensor(t)), nil
}

// inferFftR2c: real to complex; with onesided the last transformed dim
// becomes n/2 + 1.
func inferFftR2c(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	if !t.DType.IsFloat() {
		return nil, fmt.Errorf("_fft_r2c expects a floating input, got %s", t.DType)
	}
	dims, err := fftDims(c, t)
	if err != nil {
		return nil, err
	}
	one_, err := c.Bool("onesided")
	if err != nil {
		return nil, err
	}
	shape := append([]sym.Expr(nil), t.Shape...)
	if one_ && len(dims) > 0 {
		last := dims[len(dims)-1]
		shape[last] = sym.Add(sym.FloorDiv(shape[last], sym.Const(2)), sym.Const(1))
	}
	return one(withShapeDType(t, shape, t.DType.ToComplex())), nil
}

// inferFftC2r: complex to real; the last transformed dim becomes last_dim_size.
func inferFftC2r(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	if !t.DType.IsComplex() {
		return nil, fmt.Errorf("_fft_c2r expects a complex input, got %s", t.DType)
	}
	dims, err := fftDims(c, t)
	if err != nil {
		return nil, err
	}
	n, err := c.SymInt("last_dim_size")
	if err != nil {
		return nil, err
	}
	shape := append([]sym.Expr(nil), t.Shape...)
	if len(dims) > 0 {
		shape[dims[len(dims)-1]] = n
	}
	return one(withShapeDType(t, shape, t.DType.ToReal())), nil
}

// inferFftIrfft: fft_irfft(self, n, dim): real output of length n
// (default 2*(m-1)).
func inferFftIrfft(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	d, err := checkedDim(c, "dim", t)
	if err != nil {
		return nil, err
	}
	if t.Rank() == 0 {
		return nil, fmt.Errorf("fft_irfft expects at least a 1-D input")
	}
	n, ok, err := c.OptSymInt("n")
	if err != nil {
		return nil, err
	}
	if !ok {
		n = sym.Mul(sym.Const(2), sym.Sub(t.Shape[d], sym.Const(1)))
	}
	shape := append([]sym.Expr(nil), t.Shape...)
	shape[d] = n
	dt := t.DType.ToReal()
	if isIntegral(dt) {
		dt = DefaultFloat
	}
	return one(withShapeDType(t, shape, dt)), nil
}

// inferFftRfft: fft_rfft(self, n, dim): complex output of length n/2 + 1.
func inferFftRfft(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	if t.DType.IsComplex() {
		return nil, fmt.Errorf("fft_rfft expects a real input, got %s", t.DType)
	}
	if t.Rank() == 0 {
		return nil, fmt.Errorf("fft_rfft expects at least a 1-D input")
	}
	d, err := checkedDim(c, "dim", t)
	if err != nil {
		return nil, err
	}
	n, ok, err := c.OptSymInt("n")
	if err != nil {
		return nil, err
	}
	if !ok {
		n = t.Shape[d]
	}
	shape := append([]sym.Expr(nil), t.Shape...)
	shape[d] = sym.Add(sym.FloorDiv(n, sym.Const(2)), sym.Const(1))
	return one(withShapeDType(t, shape, toFloatIfIntegral(t.DType).ToComplex())), nil
}
