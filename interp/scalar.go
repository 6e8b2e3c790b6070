package interp

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// scalar is a Python number argument (Scalar in ATen schemas).
type scalar struct {
	kind ir.DType // ir.Bool, ir.Int64, ir.Float64 or ir.Complex128
	i    int64
	f    float64
	c    complex128
}

func (s scalar) float() float64 {
	switch s.kind {
	case ir.Float64:
		return s.f
	case ir.Complex128:
		return real(s.c)
	}
	return float64(s.i)
}

func (s scalar) int() int64 {
	switch s.kind {
	case ir.Float64:
		return floatToInt(ir.Int64, s.f)
	case ir.Complex128:
		return floatToInt(ir.Int64, real(s.c))
	}
	return s.i
}

// tensor makes a 0-dim tensor of the scalar's own default dtype.
func (s scalar) tensor() *Tensor {
	switch s.kind {
	case ir.Float64:
		return Scalar0(ir.Float64, s.f)
	case ir.Complex128:
		return FromComplex128(ir.Complex128, nil, []complex128{s.c})
	case ir.Bool:
		return ScalarInt0(ir.Bool, s.i)
	}
	return ScalarInt0(ir.Int64, s.i)
}

// as makes a 0-dim tensor of dtype dt holding the scalar.
func (s scalar) as(dt ir.DType) *Tensor { return s.tensor().To(dt) }

func toScalar(v Value) (scalar, error) {
	switch x := v.(type) {
	case int64:
		return scalar{kind: ir.Int64, i: x}, nil
	case float64:
		return scalar{kind: ir.Float64, f: x}, nil
	case bool:
		if x {
			return scalar{kind: ir.Bool, i: 1}, nil
		}
		return scalar{kind: ir.Bool}, nil
	case complex128:
		return scalar{kind: ir.Complex128, c: x}, nil
	case *Tensor:
		if x.Numel() != 1 {
			break
		}
		switch domainOf(x.DType) {
		case domFloat:
			return scalar{kind: ir.Float64, f: x.itemFloat()}, nil
		case domComplex:
			return scalar{kind: ir.Complex128, c: x.st.c[x.Offset]}, nil
		}
		if x.DType == ir.Bool {
			return scalar{kind: ir.Bool, i: x.itemInt()}, nil
		}
		return scalar{kind: ir.Int64, i: x.itemInt()}, nil
	}
	return scalar{}, fmt.Errorf("expected a number, got %s", kindOf(v))
}

func (c *call) scalar(name string) (scalar, error) {
	v, err := c.arg(name)
	if err != nil {
		return scalar{}, err
	}
	s, err := toScalar(v)
	if err != nil {
		return scalar{}, fmt.Errorf("argument %q: %w", name, err)
	}
	return s, nil
}

func (c *call) optScalar(name string) (scalar, bool, error) {
	v, err := c.arg(name)
	if err != nil || v == nil {
		return scalar{}, false, err
	}
	s, err := toScalar(v)
	if err != nil {
		return scalar{}, false, fmt.Errorf("argument %q: %w", name, err)
	}
	return s, true, nil
}

// operand is a tensor or scalar argument with its type-promotion category.
type operand struct {
	t   *Tensor
	cat ir.Operand
}

// asOperand classifies a value for torch.result_type: a tensor with dims,
// a 0-dim tensor, or a Python number (wrapped as a 0-dim tensor).
func asOperand(v Value, name string) (operand, error) {
	if t, ok := v.(*Tensor); ok {
		return operand{t: t, cat: ir.Operand{DType: t.DType, ZeroDim: t.Rank() == 0}}, nil
	}
	s, err := toScalar(v)
	if err != nil {
		return operand{}, fmt.Errorf("argument %q: %w", name, err)
	}
	return operand{t: s.tensor(), cat: ir.Operand{DType: s.kind, Scalar: true}}, nil
}

func (c *call) operand(name string) (operand, error) {
	v, err := c.arg(name)
	if err != nil {
		return operand{}, err
	}
	return asOperand(v, name)
}

// resultType is torch.result_type over operands.
func resultType(ops ...operand) (ir.DType, error) {
	cats := make([]ir.Operand, len(ops))
	for i, o := range ops {
		cats[i] = o.cat
	}
	return ir.ResultTypeOf(cats...)
}
