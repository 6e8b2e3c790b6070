package onnx

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// argReader reads a node's arguments by schema name, recording the first
// error (a wrong name, a missing operand) instead of panicking.
type argReader struct {
	b   *Builder
	n   *ir.Node
	err error
}

func reader(b *Builder, n *ir.Node) *argReader { return &argReader{b: b, n: n} }

func (r *argReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

// Arg returns the named argument (None when the schema lacks it).
func (r *argReader) Arg(name string) ir.Arg {
	i := r.n.Op.ArgIndex(name)
	if i < 0 || i >= len(r.n.Args) {
		r.fail("%s has no argument %q", r.n.Op, name)
		return ir.NoneArg()
	}
	return r.n.Args[i]
}

// Has reports whether the schema has the argument and it is not None.
func (r *argReader) Has(name string) bool {
	i := r.n.Op.ArgIndex(name)
	return i >= 0 && i < len(r.n.Args) && !r.n.Args[i].IsNone()
}

// T returns the ONNX name of a tensor operand.
func (r *argReader) T(name string) string {
	a := r.Arg(name)
	if a.Kind != ir.ArgValue {
		r.fail("argument %q: expected a tensor, got %s", name, a)
		return ""
	}
	s, err := r.b.Value(a.Value)
	if err != nil {
		r.fail("argument %q: %v", name, err)
	}
	return s
}

// DT returns the dtype of a tensor operand (or of a scalar literal).
func (r *argReader) DT(name string) ir.DType {
	return argDType(r.Arg(name))
}

func argDType(a ir.Arg) ir.DType {
	if a.Kind == ir.ArgValue {
		switch t := a.Value.Type.(type) {
		case *ir.TensorType:
			return t.DType
		case *ir.SymIntType:
			return ir.Int64
		case *ir.SymBoolType:
			return ir.Bool
		case *ir.SymFloatType:
			return ir.Float64
		}
	}
	switch a.Kind {
	case ir.ArgInt:
		return ir.Int64
	case ir.ArgFloat:
		return ir.Float64
	case ir.ArgBool:
		return ir.Bool
	}
	return ir.Undefined
}

// In returns operand name converted to dtype dt: tensors are cast, scalars
// materialized as 0-d constants of dt (the dtype the op binds).
func (r *argReader) In(name string, dt ir.DType) string {
	return r.inArg(r.Arg(name), name, dt)
}

func (r *argReader) inArg(a ir.Arg, name string, dt ir.DType) string {
	switch a.Kind {
	case ir.ArgValue:
		s, err := r.b.Value(a.Value)
		if err != nil {
			r.fail("argument %q: %v", name, err)
			return ""
		}
		out, err := r.b.CastTo(s, argDType(a), dt)
		if err != nil {
			r.fail("argument %q: %v", name, err)
		}
		return out
	case ir.ArgInt, ir.ArgBool:
		s, err := r.b.Scalar(dt, float64(a.Int))
		if err != nil {
			r.fail("argument %q: %v", name, err)
		}
		return s
	case ir.ArgFloat:
		s, err := r.b.Scalar(dt, a.Float)
		if err != nil {
			r.fail("argument %q: %v", name, err)
		}
		return s
	}
	r.fail("argument %q: expected a tensor or a number, got %s", name, a)
	return ""
}

// Int returns a static int argument.
func (r *argReader) Int(name string) int64 {
	a := r.Arg(name)
	switch a.Kind {
	case ir.ArgInt, ir.ArgBool:
		return a.Int
	case ir.ArgValue:
		if e, err := ir.SymIntOf(a); err == nil {
			if c, ok := e.Const(); ok {
				return c
			}
		}
	}
	r.fail("argument %q: expected a static int, got %s", name, a)
	return 0
}

// IntOr returns a static int argument, or def when None.
func (r *argReader) IntOr(name string, def int64) int64 {
	if !r.Has(name) {
		return def
	}
	return r.Int(name)
}

// Float returns a number argument.
func (r *argReader) Float(name string) float64 {
	a := r.Arg(name)
	switch a.Kind {
	case ir.ArgFloat:
		return a.Float
	case ir.ArgInt, ir.ArgBool:
		return float64(a.Int)
	}
	r.fail("argument %q: expected a number, got %s", name, a)
	return math.NaN()
}

// Bool returns a bool argument.
func (r *argReader) Bool(name string) bool {
	a := r.Arg(name)
	if a.Kind != ir.ArgBool && a.Kind != ir.ArgInt {
		r.fail("argument %q: expected a bool, got %s", name, a)
	}
	return a.Int != 0
}

// Ints returns a static int list argument.
func (r *argReader) Ints(name string) []int64 {
	a := r.Arg(name)
	v, ok := constInts(a)
	if !ok {
		r.fail("argument %q: expected a static int list, got %s", name, a)
	}
	return v
}

// IntList lowers an int/SymInt list to a 1-D INT64 tensor.
func (r *argReader) IntList(name string) string {
	s, err := r.b.IntList(r.Arg(name))
	if err != nil {
		r.fail("argument %q: %v", name, err)
	}
	return s
}

// Str returns a string argument.
func (r *argReader) Str(name string) string {
	a := r.Arg(name)
	if a.Kind != ir.ArgString {
		r.fail("argument %q: expected a string, got %s", name, a)
	}
	return a.Str
}

// out is result i's tensor type.
func (r *argReader) out(i int) *ir.TensorType {
	if i >= len(r.n.Results) {
		r.fail("no result %d", i)
		return &ir.TensorType{}
	}
	t := r.n.Results[i].Tensor()
	if t == nil {
		r.fail("result %%%s is not a tensor", r.n.Results[i].Name)
		return &ir.TensorType{}
	}
	return t
}

// rank of a tensor operand.
func (r *argReader) Rank(name string) int {
	a := r.Arg(name)
	if a.Kind == ir.ArgValue {
		if t := a.Value.Tensor(); t != nil {
			return t.Rank()
		}
		return 0
	}
	r.fail("argument %q: expected a tensor", name)
	return 0
}

// Shape of a tensor operand.
func (r *argReader) Shape(name string) []sym.Expr {
	a := r.Arg(name)
	if a.Kind == ir.ArgValue {
		if t := a.Value.Tensor(); t != nil {
			return t.Shape
		}
	}
	r.fail("argument %q: expected a tensor", name)
	return nil
}

func normDim(d int64, rank int) int64 {
	if d < 0 {
		d += int64(rank)
	}
	return d
}
