package ir

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir/sym"
)

// Elementwise rules: unary, binary with broadcasting and type promotion,
// comparisons, where/clamp/masked_fill, and the generic in-place/out/no-result
// rules.

// inferSame: the result has the type of argument 0 (dtype-preserving unary
// ops, ops that write into a copy of self, composite normalizations).
func inferSame(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	return one(cloneTensor(t)), nil
}

// inferAbs: like same, but the absolute value of a complex tensor is real.
func inferAbs(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	r := cloneTensor(t)
	r.DType = t.DType.ToReal()
	return one(r), nil
}

// inferUnaryFloat: floating-valued elementwise functions (sin, exp, sqrt, …):
// integer and bool inputs give the default float dtype.
func inferUnaryFloat(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	r := cloneTensor(t)
	r.DType = toFloatIfIntegral(t.DType)
	return one(r), nil
}

// inferUnaryBool: predicates (isnan, isinf, logical_not): bool, same shape.
func inferUnaryBool(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	r := cloneTensor(t)
	r.DType = Bool
	return one(r), nil
}

// elementwise computes the broadcast shape and the promoted dtype of the
// given arguments (tensors and scalars), and the result's device and dim
// order (those of the first tensor operand of full rank).
func elementwise(c *InferCtx, args ...Arg) (*TensorType, error) {
	var shapes [][]sym.Expr
	var tensors []*TensorType
	for _, a := range args {
		if a.Kind == ArgValue {
			if t := a.Value.Tensor(); t != nil {
				shapes = append(shapes, t.Shape)
				tensors = append(tensors, t)
			}
		}
	}
	if len(tensors) == 0 {
		return nil, fmt.Errorf("no tensor operand")
	}
	shape, err := broadcastShapes(c, shapes...)
	if err != nil {
		return nil, err
	}
	dt, err := ResultType(args...)
	if err != nil {
		return nil, err
	}
	r := &TensorType{DType: dt, Shape: shape}
	// Dim>0 tensors decide the device (a CPU 0-dim tensor may join a CUDA op).
	for _, t := range tensors {
		if t.Device != "" && t.Rank() > 0 {
			r.Device = t.Device
			break
		}
	}
	if r.Device == "" {
		for _, t := range tensors {
			if t.Device != "" {
				r.Device = t.Device
				break
			}
		}
	}
	// The result keeps a non-contiguous layout only when every full-size
	// operand has that same layout; mixed layouts are decided by torch's
	// TensorIterator from the strides, which the IR does not model, so the
	// result is left contiguous (and the verifier accepts what was recorded).
	var order []int
	for _, t := range tensors {
		if t.Rank() != len(shape) {
			continue
		}
		full := true
		for i := range shape {
			if !t.Shape[i].Equal(shape[i]) {
				full = false
			}
		}
		if !full {
			continue
		}
		if t.IsContiguous() {
			order = nil
			break
		}
		if order == nil {
			order = t.DimOrder
		} else if !sameOrder(order, t.DimOrder) {
			order = nil
			break
		}
	}
	if order != nil {
		r.DimOrder = append([]int(nil), order...)
	}
	return r, nil
}

// inferBinary: broadcast and promote arguments 0 and 1 (either may be a scalar).
func inferBinary(c *InferCtx) ([]Type, error) {
	r, err := elementwise(c, argAt(c, 0), argAt(c, 1))
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(c.Op().Info().Base, "bitwise_") && (r.DType.IsFloat() || r.DType.IsComplex()) {
		return nil, fmt.Errorf("bitwise ops need integer or bool operands, got %s", r.DType)
	}
	return one(r), nil
}

// inferBinaryAlpha: binary with torch's checks on the alpha multiplier.
func inferBinaryAlpha(c *InferCtx) ([]Type, error) {
	r, err := elementwise(c, argAt(c, 0), argAt(c, 1))
	if err != nil {
		return nil, err
	}
	alpha := namedOrNone(c, "alpha")
	switch {
	case alpha.Kind == ArgFloat && isIntegral(r.DType):
		return nil, fmt.Errorf("for integral input tensors, alpha must not be a floating point number")
	case alpha.Kind == ArgValue && isIntegral(r.DType):
		if _, ok := alpha.Value.Type.(*SymFloatType); ok {
			return nil, fmt.Errorf("for integral input tensors, alpha must not be a floating point number")
		}
	case r.DType == Bool && alpha.Kind == ArgInt && alpha.Int != 1:
		return nil, fmt.Errorf("boolean alpha only supported for boolean results")
	}
	if base := c.Op().Info().Base; (base == "sub" || base == "rsub") && r.DType == Bool {
		return nil, fmt.Errorf("subtraction with two bool tensors is not supported; use logical_xor")
	}
	return one(r), nil
}

// inferBinaryFloat: true division and friends: promote, then integers become
// the default float.
func inferBinaryFloat(c *InferCtx) ([]Type, error) {
	r, err := elementwise(c, argAt(c, 0), argAt(c, 1))
	if err != nil {
		return nil, err
	}
	r.DType = toFloatIfIntegral(r.DType)
	return one(r), nil
}

// inferDivMode: div with rounding_mode: None is true division (float), "trunc"
// and "floor" keep the promoted dtype.
func inferDivMode(c *InferCtx) ([]Type, error) {
	r, err := elementwise(c, argAt(c, 0), argAt(c, 1))
	if err != nil {
		return nil, err
	}
	mode := namedOrNone(c, "rounding_mode")
	switch {
	case mode.Kind == ArgNone:
		r.DType = toFloatIfIntegral(r.DType)
	case mode.Kind == ArgString && (mode.Str == "trunc" || mode.Str == "floor"):
		if r.DType == Bool {
			return nil, fmt.Errorf("div with rounding mode %q is not supported for bool", mode.Str)
		}
	default:
		return nil, fmt.Errorf("rounding_mode must be None, 'trunc' or 'floor', got %s", mode)
	}
	return one(r), nil
}

// inferCompare: comparisons and logical ops: broadcast, bool result.
func inferCompare(c *InferCtx) ([]Type, error) {
	r, err := elementwise(c, argAt(c, 0), argAt(c, 1))
	if err != nil {
		return nil, err
	}
	r.DType = Bool
	return one(r), nil
}

// inferWhere: where(condition, self, other): broadcast all three; the dtype
// promotes self and other.
func inferWhere(c *InferCtx) ([]Type, error) {
	cond, self, other := argAt(c, 0), argAt(c, 1), argAt(c, 2)
	if ct, err := ArgTensor(cond, "condition"); err != nil {
		return nil, err
	} else if ct.DType != Bool && ct.DType != Uint8 {
		return nil, fmt.Errorf("where expects a bool condition, got %s", ct.DType)
	}
	r, err := elementwise(c, cond, self, other)
	if err != nil {
		return nil, err
	}
	dt, err := ResultType(self, other)
	if err != nil {
		return nil, err
	}
	r.DType = dt
	return one(r), nil
}

// inferClamp: clamp/clamp_min/clamp_max: self broadcast with tensor bounds;
// the dtype promotes self with the bounds.
func inferClamp(c *InferCtx) ([]Type, error) {
	args := []Arg{argAt(c, 0)}
	bounds := 0
	for i := 1; i < len(c.Node.Args); i++ {
		if a := c.Node.Args[i]; a.Kind != ArgNone {
			args = append(args, a)
			bounds++
		}
	}
	if bounds == 0 {
		return nil, fmt.Errorf("at least one of 'min' or 'max' must not be None")
	}
	r, err := elementwise(c, args...)
	if err != nil {
		return nil, err
	}
	if r.DType == Bool {
		return nil, fmt.Errorf("clamp is not supported for bool tensors")
	}
	return one(r), nil
}

// inferMaskedFill: self's type; the mask must be bool and broadcast to self.
func inferMaskedFill(c *InferCtx) ([]Type, error) {
	self, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	mask, err := c.Tensor("mask")
	if err != nil {
		return nil, err
	}
	if mask.DType != Bool {
		return nil, fmt.Errorf("masked_fill expects a bool mask, got %s", mask.DType)
	}
	shape, err := broadcastShapes(c, self.Shape, mask.Shape)
	if err != nil {
		return nil, err
	}
	if len(shape) != self.Rank() {
		return nil, fmt.Errorf("mask of shape %s does not broadcast to self %s", mask, self)
	}
	if v := namedOrNone(c, "value"); v.Kind == ArgValue {
		if vt := v.Value.Tensor(); vt != nil && vt.Rank() != 0 {
			return nil, fmt.Errorf("masked_fill only supports a 0-dim value tensor, got rank %d", vt.Rank())
		}
	}
	return one(cloneTensor(self)), nil
}

// inferComplex: complex(real, imag) and polar(abs, angle): broadcast; the
// float operands give the matching complex dtype.
func inferComplex(c *InferCtx) ([]Type, error) {
	a, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	b, err := tensorAt(c, 1)
	if err != nil {
		return nil, err
	}
	if a.DType != b.DType || !a.DType.IsFloat() {
		return nil, fmt.Errorf("expects two floating tensors of the same dtype, got %s and %s", a.DType, b.DType)
	}
	shape, err := broadcastShapes(c, a.Shape, b.Shape)
	if err != nil {
		return nil, err
	}
	return one(withShapeDType(a, shape, a.DType.ToComplex())), nil
}

// inferInplace: in-place ops return their (mutated) first argument. When the
// op has a functional twin with a rule, that rule is run on the same
// arguments to check torch's constraints: the result must be castable to
// self's dtype and must not broadcast self to a bigger shape.
func inferInplace(c *InferCtx) ([]Type, error) {
	self, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	if fn := c.Op().FunctionalTwin(); fn.Valid() {
		if fn.Info().Infer != nil {
			twin := &Node{ID: c.Node.ID, Op: fn, Args: c.Node.Args, Graph: c.Node.Graph}
			types, err := fn.Info().Infer(&InferCtx{Node: twin, Env: c.Env})
			if err != nil {
				return nil, err
			}
			if len(types) == 1 {
				if rt := AsTensor(types[0]); rt != nil {
					if !CanCast(rt.DType, self.DType) {
						return nil, fmt.Errorf("result type %s can't be cast to the desired output type %s", rt.DType, self.DType)
					}
					if rt.Rank() != self.Rank() {
						return nil, fmt.Errorf("output with shape %s doesn't match the broadcast shape %s", self, rt)
					}
					for i := range rt.Shape {
						if err := checkSameDim(c, rt.Shape[i], self.Shape[i], "in-place result shape"); err != nil {
							return nil, err
						}
					}
				}
			}
		}
	}
	return one(cloneTensor(self)), nil
}

// inferOut: out= variants return their out arguments. Each declared result is
// matched to the mutated argument with the same alias set (the k-th mutated
// argument for unannotated results).
func inferOut(c *InferCtx) ([]Type, error) {
	s := &c.Op().Info().Schema
	var outs []int
	for i, a := range s.Args {
		if a.Mutates() {
			outs = append(outs, i)
		}
	}
	types := make([]Type, 0, len(s.Returns))
	for k, r := range s.Returns {
		idx := -1
		if set := strings.TrimSuffix(r.Alias, "!"); set != "" {
			for _, i := range outs {
				if strings.TrimSuffix(s.Args[i].Alias, "!") == set {
					idx = i
				}
			}
		} else if k < len(outs) {
			idx = outs[k]
		}
		if idx < 0 {
			return nil, fmt.Errorf("result %d has no matching out argument", k)
		}
		t, err := ArgTensor(argAt(c, idx), s.Args[idx].Name)
		if err != nil {
			return nil, err
		}
		types = append(types, cloneTensor(t))
	}
	return types, nil
}

// inferNoResults: assertions, constraints and other ops returning None.
func inferNoResults(c *InferCtx) ([]Type, error) { return []Type{}, nil }

// inferScalarBool: a 0-dim bool tensor (_is_all_true).
func inferScalarBool(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	return one(withShapeDType(t, nil, Bool)), nil
}

// inferClone: clone/contiguous/prims.clone/_clone_dim_order: self's type with
// the dim order the memory_format (or dim_order) asks for.
func inferClone(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	r := cloneTensor(t)
	if err := applyLayoutArgs(c, r, t.DimOrder); err != nil {
		return nil, err
	}
	return one(r), nil
}

// applyLayoutArgs sets r.DimOrder from a memory_format or dim_order argument
// when the op has one; keep is the order "preserve" keeps.
func applyLayoutArgs(c *InferCtx, r *TensorType, keep []int) error {
	if mf, ok, err := memoryFormatArg(c, "memory_format"); err != nil {
		return err
	} else if ok {
		order, err := dimOrderFor(mf, r.Rank(), keep)
		if err != nil {
			return err
		}
		r.DimOrder = order
	}
	if a := namedOrNone(c, "dim_order"); a.Kind != ArgNone {
		order, err := intListOf(a, "dim_order")
		if err != nil {
			return err
		}
		do, err := checkDimOrder(order, r.Rank())
		if err != nil {
			return err
		}
		r.DimOrder = do
	}
	return nil
}

// inferToCopy: _to_copy, to.*, _to_dim_order_copy: self's shape with the
// requested dtype, device and layout (memory_format or dim_order).
func inferToCopy(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	r := cloneTensor(t)
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
	if err := applyLayoutArgs(c, r, t.DimOrder); err != nil {
		return nil, err
	}
	return one(r), nil
}

// inferConvertElementType: prims.convert_element_type(a, dtype).
func inferConvertElementType(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	dt, ok, err := c.OptDType("dtype")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("dtype is required")
	}
	r := cloneTensor(t)
	r.DType = dt
	return one(r), nil
}

// inferDevicePut: prims.device_put(a, device).
func inferDevicePut(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	r := cloneTensor(t)
	if dev, ok, err := deviceArg(c, "device"); err != nil {
		return nil, err
	} else if ok {
		r.Device = dev
	}
	return one(r), nil
}

// inferResize: resize_(self, size): self's dtype with the new shape.
func inferResize(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	size, err := c.SymInts("size")
	if err != nil {
		return nil, err
	}
	for i, d := range size {
		if err := checkNonNegative(c, d, fmt.Sprintf("size[%d]", i)); err != nil {
			return nil, err
		}
	}
	r := withShapeDType(t, size, t.DType)
	if err := applyLayoutArgs(c, r, nil); err != nil {
		return nil, err
	}
	return one(r), nil
}

func sameOrder(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
