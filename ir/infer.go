package ir

import (
	"fmt"

	"github.com/fxport/fxport/ir/sym"
)

// InferTypes computes n's result types with its op's rule. Ops without a
// rule fail loudly, naming the op.
func InferTypes(n *Node) ([]Type, error) {
	info := n.Op.Info()
	if info.Infer == nil {
		return nil, n.Errorf("no shape/dtype rule for %s yet", info.Name)
	}
	c := &InferCtx{Node: n}
	if n.Graph != nil && n.Graph.Program != nil {
		c.Env = n.Graph.Program.Env
	}
	types, err := info.Infer(c)
	if err != nil {
		var ne *NodeError
		if asNodeError(err, &ne) {
			return nil, err
		}
		return nil, n.Errorf("%s: %w", info.InferRule, err)
	}
	return types, nil
}

func asNodeError(err error, target **NodeError) bool {
	ne, ok := err.(*NodeError)
	if ok {
		*target = ne
	}
	return ok
}

// InferCtx is what a shape/dtype rule sees: the node, its bound arguments
// and the program's symbol environment. Accessors take schema argument
// names and return errors that say what was wrong.
type InferCtx struct {
	Node *Node
	Env  *sym.Env // may be nil
}

// Op is the node's op.
func (c *InferCtx) Op() Op { return c.Node.Op }

// Errorf builds an error; InferTypes adds the node.
func (c *InferCtx) Errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// Arg returns the named argument.
func (c *InferCtx) Arg(name string) (Arg, error) {
	i := c.Node.Op.ArgIndex(name)
	if i < 0 || i >= len(c.Node.Args) {
		return Arg{}, fmt.Errorf("no argument %q", name)
	}
	return c.Node.Args[i], nil
}

// Pos returns positional argument i (for VarArgs ops).
func (c *InferCtx) Pos(i int) (Arg, error) {
	if i >= len(c.Node.Args) {
		return Arg{}, fmt.Errorf("missing positional argument %d", i)
	}
	return c.Node.Args[i], nil
}

// NumArgs is the number of bound arguments.
func (c *InferCtx) NumArgs() int { return len(c.Node.Args) }

// Tensor returns the named tensor operand's type.
func (c *InferCtx) Tensor(name string) (*TensorType, error) {
	a, err := c.Arg(name)
	if err != nil {
		return nil, err
	}
	return ArgTensor(a, name)
}

// ArgTensor returns the tensor type of an operand arg. A Python number in a
// Tensor slot (torch's wrapped number, aten.mul.Tensor(%x, 0.5)) reads as a
// 0-d tensor of the default dtype of its kind; type promotion still treats
// it as a scalar (ResultType looks at the Arg).
func ArgTensor(a Arg, what string) (*TensorType, error) {
	switch a.Kind {
	case ArgInt:
		return &TensorType{DType: Int64, Shape: nil}, nil
	case ArgFloat:
		return &TensorType{DType: DefaultFloat, Shape: nil}, nil
	case ArgBool:
		return &TensorType{DType: Bool, Shape: nil}, nil
	}
	if a.Kind != ArgValue {
		return nil, fmt.Errorf("argument %q: expected a tensor, got %s %s", what, a.Kind, a)
	}
	t := a.Value.Tensor()
	if t == nil {
		return nil, fmt.Errorf("argument %q: %s has type %s, not a tensor", what, a.Value, a.Value.Type)
	}
	return t, nil
}

// OptTensor returns the named optional tensor operand, nil when None.
func (c *InferCtx) OptTensor(name string) (*TensorType, error) {
	a, err := c.Arg(name)
	if err != nil {
		return nil, err
	}
	if a.Kind == ArgNone {
		return nil, nil
	}
	return ArgTensor(a, name)
}

// Tensors returns the types of a Tensor[] argument (None elements of Tensor?[] as nil).
func (c *InferCtx) Tensors(name string) ([]*TensorType, error) {
	a, err := c.Arg(name)
	if err != nil {
		return nil, err
	}
	if a.Kind != ArgList {
		return nil, fmt.Errorf("argument %q: expected a list of tensors, got %s", name, a.Kind)
	}
	out := make([]*TensorType, len(a.List))
	for i, e := range a.List {
		if e.Kind == ArgNone {
			continue
		}
		t, err := ArgTensor(e, fmt.Sprintf("%s[%d]", name, i))
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// SymIntOf reads an int literal or a SymInt/int-typed value as an expression.
func SymIntOf(a Arg) (sym.Expr, error) {
	switch a.Kind {
	case ArgInt:
		return sym.Const(a.Int), nil
	case ArgBool:
		return sym.Const(a.Int), nil
	case ArgValue:
		switch t := a.Value.Type.(type) {
		case *SymIntType:
			if t.Expr.IsValid() {
				return t.Expr, nil
			}
			return sym.Sym(a.Value.Name), nil
		case *ScalarType:
			if t.Kind == IntKind {
				return sym.Sym(a.Value.Name), nil
			}
		case *TensorType:
			if t.Rank() == 0 && (t.DType.IsInteger()) {
				// A 0-d integer tensor used where an int is expected (item-like); unknown value.
				return sym.Expr{}, fmt.Errorf("%s is a tensor, not a SymInt", a.Value)
			}
		}
		return sym.Expr{}, fmt.Errorf("%s has type %s, not an int", a.Value, a.Value.Type)
	}
	return sym.Expr{}, fmt.Errorf("expected an int, got %s %s", a.Kind, a)
}

// SymInt returns the named int/SymInt argument as an expression.
func (c *InferCtx) SymInt(name string) (sym.Expr, error) {
	a, err := c.Arg(name)
	if err != nil {
		return sym.Expr{}, err
	}
	e, err := SymIntOf(a)
	if err != nil {
		return sym.Expr{}, fmt.Errorf("argument %q: %w", name, err)
	}
	return e, nil
}

// OptSymInt returns the named optional int; ok is false when None.
func (c *InferCtx) OptSymInt(name string) (e sym.Expr, ok bool, err error) {
	a, err := c.Arg(name)
	if err != nil || a.Kind == ArgNone {
		return sym.Expr{}, false, err
	}
	e, err = SymIntOf(a)
	if err != nil {
		return sym.Expr{}, false, fmt.Errorf("argument %q: %w", name, err)
	}
	return e, true, nil
}

// Int returns the named argument as a static int (a SymInt value whose expression is constant is accepted).
func (c *InferCtx) Int(name string) (int64, error) {
	e, err := c.SymInt(name)
	if err != nil {
		return 0, err
	}
	v, ok := e.Const()
	if !ok {
		return 0, fmt.Errorf("argument %q: expected a static int, got %s", name, e)
	}
	return v, nil
}

// OptInt returns the named optional static int; ok is false when None.
func (c *InferCtx) OptInt(name string) (v int64, ok bool, err error) {
	e, ok, err := c.OptSymInt(name)
	if err != nil || !ok {
		return 0, ok, err
	}
	v, isConst := e.Const()
	if !isConst {
		return 0, false, fmt.Errorf("argument %q: expected a static int, got %s", name, e)
	}
	return v, true, nil
}

// SymInts returns the named int[]/SymInt[] argument as expressions. A bare
// int where a list is expected is returned as a one-element list.
func (c *InferCtx) SymInts(name string) ([]sym.Expr, error) {
	a, err := c.Arg(name)
	if err != nil {
		return nil, err
	}
	if a.Kind != ArgList {
		e, err := SymIntOf(a)
		if err != nil {
			return nil, fmt.Errorf("argument %q: expected a list of ints: %w", name, err)
		}
		return []sym.Expr{e}, nil
	}
	out := make([]sym.Expr, len(a.List))
	for i, el := range a.List {
		e, err := SymIntOf(el)
		if err != nil {
			return nil, fmt.Errorf("argument %q[%d]: %w", name, i, err)
		}
		out[i] = e
	}
	return out, nil
}

// OptSymInts is SymInts for an optional list; nil, false when None.
func (c *InferCtx) OptSymInts(name string) ([]sym.Expr, bool, error) {
	a, err := c.Arg(name)
	if err != nil || a.Kind == ArgNone {
		return nil, false, err
	}
	l, err := c.SymInts(name)
	return l, err == nil, err
}

// Ints returns the named list of static ints.
func (c *InferCtx) Ints(name string) ([]int64, error) {
	es, err := c.SymInts(name)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(es))
	for i, e := range es {
		v, ok := e.Const()
		if !ok {
			return nil, fmt.Errorf("argument %q[%d]: expected a static int, got %s", name, i, e)
		}
		out[i] = v
	}
	return out, nil
}

// Float returns the named float literal (ints are accepted).
func (c *InferCtx) Float(name string) (float64, error) {
	a, err := c.Arg(name)
	if err != nil {
		return 0, err
	}
	switch a.Kind {
	case ArgFloat:
		return a.Float, nil
	case ArgInt, ArgBool:
		return float64(a.Int), nil
	}
	return 0, fmt.Errorf("argument %q: expected a float, got %s %s", name, a.Kind, a)
}

// Bool returns the named bool literal.
func (c *InferCtx) Bool(name string) (bool, error) {
	a, err := c.Arg(name)
	if err != nil {
		return false, err
	}
	switch a.Kind {
	case ArgBool, ArgInt:
		return a.Int != 0, nil
	case ArgNone:
		return false, nil
	}
	return false, fmt.Errorf("argument %q: expected a bool, got %s %s", name, a.Kind, a)
}

// Str returns the named string literal.
func (c *InferCtx) Str(name string) (string, error) {
	a, err := c.Arg(name)
	if err != nil {
		return "", err
	}
	if a.Kind != ArgString {
		return "", fmt.Errorf("argument %q: expected a string, got %s %s", name, a.Kind, a)
	}
	return a.Str, nil
}

// OptDType returns the named optional dtype; ok is false when None.
func (c *InferCtx) OptDType(name string) (DType, bool, error) {
	a, err := c.Arg(name)
	if err != nil {
		return 0, false, err
	}
	switch a.Kind {
	case ArgNone:
		return 0, false, nil
	case ArgDType:
		return DType(a.Int), true, nil
	case ArgInt: // some serializers write dtypes as ints (torch.export codes)
		if d, ok := DTypeFromPT2(int(a.Int)); ok {
			return d, true, nil
		}
	}
	return 0, false, fmt.Errorf("argument %q: expected a dtype, got %s %s", name, a.Kind, a)
}

// ScalarArgKind classifies a Scalar argument for type promotion: a bool,
// int or float literal, or a symbolic value.
func ScalarArgKind(a Arg) (DType, error) {
	switch a.Kind {
	case ArgBool:
		return Bool, nil
	case ArgInt:
		return Int64, nil
	case ArgFloat:
		return Float64, nil
	case ArgValue:
		switch t := a.Value.Type.(type) {
		case *SymIntType:
			return Int64, nil
		case *SymFloatType:
			return Float64, nil
		case *SymBoolType:
			return Bool, nil
		case *ScalarType:
			switch t.Kind {
			case IntKind:
				return Int64, nil
			case FloatKind:
				return Float64, nil
			case BoolKind:
				return Bool, nil
			}
		case *TensorType:
			return t.DType, nil
		}
	}
	return Undefined, fmt.Errorf("expected a scalar, got %s %s", a.Kind, a)
}
