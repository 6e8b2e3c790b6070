package ir

import (
	"fmt"

	"github.com/fxport/fxport/ir/sym"
)

// Symbolic-value rules: sym_size/sym_stride/sym_numel, item(), and the
// Python-level arithmetic on SymInt/SymFloat/SymBool values (operator.*,
// torch.sym_*, math.*, executorch_prim.*). Results on symbolic operands are
// Sym types carrying the expression when it is expressible; results on plain
// Python values are the plain scalar types.

// inferSymSize: sym_size.int(self, dim) → SymInt equal to the dim.
func inferSymSize(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	if t.Rank() == 0 {
		return nil, fmt.Errorf("sym_size of a 0-dim tensor")
	}
	d, err := checkedDim(c, "dim", t)
	if err != nil {
		return nil, err
	}
	return one(&SymIntType{Expr: t.Shape[d]}), nil
}

// inferSymSizes: sym_size.default(self) → one SymInt per dim.
func inferSymSizes(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	out := make([]Type, t.Rank())
	for i, d := range t.Shape {
		out[i] = &SymIntType{Expr: d}
	}
	return out, nil
}

// contiguousStrides computes element strides of a dense tensor with t's dim order.
func contiguousStrides(t *TensorType) []sym.Expr {
	n := t.Rank()
	order := t.DimOrder
	if order == nil {
		order = make([]int, n)
		for i := range order {
			order[i] = i
		}
	}
	strides := make([]sym.Expr, n)
	acc := sym.Const(1)
	for i := n - 1; i >= 0; i-- {
		d := order[i]
		strides[d] = acc
		acc = sym.Mul(acc, sym.Max(t.Shape[d], sym.Const(1)))
	}
	return strides
}

// inferSymStride: sym_stride.int(self, dim) → the stride of a dense tensor
// laid out in self's dim order.
func inferSymStride(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	if t.Rank() == 0 {
		return nil, fmt.Errorf("sym_stride of a 0-dim tensor")
	}
	d, err := checkedDim(c, "dim", t)
	if err != nil {
		return nil, err
	}
	return one(&SymIntType{Expr: contiguousStrides(t)[d]}), nil
}

// inferSymNumel: sym_numel(self) → the product of the dims.
func inferSymNumel(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	return one(&SymIntType{Expr: t.Numel()}), nil
}

// inferSymStorageOffset: an unknown SymInt (views may start anywhere).
func inferSymStorageOffset(c *InferCtx) ([]Type, error) {
	if _, err := c.Tensor("self"); err != nil {
		return nil, err
	}
	return one(&SymIntType{}), nil
}

// inferLocalScalarDense: _local_scalar_dense/item: the element of a
// one-element tensor as a data-dependent (unbacked) SymInt, a SymFloat or a SymBool.
func inferLocalScalarDense(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	if v, ok := t.Numel().Const(); ok && v != 1 {
		return nil, fmt.Errorf("a tensor with %d elements cannot be converted to a Scalar", v)
	}
	switch {
	case t.DType == Bool:
		return one(&SymBoolType{}), nil
	case t.DType.IsInteger():
		return one(&SymIntType{Expr: unbackedSym(c, 0)}), nil
	case t.DType.IsFloat():
		return one(SymFloat), nil
	}
	return nil, fmt.Errorf("item() of a %s tensor is not supported", t.DType)
}

// symVal is a Python-level operand of a symbolic op.
type symVal struct {
	kind     ScalarKind // IntKind, FloatKind or BoolKind
	symbolic bool       // a Sym* value rather than a plain Python value
	e        sym.Expr   // the int value or bool condition; invalid when unknown
}

func symValOf(a Arg) (symVal, error) {
	switch a.Kind {
	case ArgInt:
		return symVal{kind: IntKind, e: sym.Const(a.Int)}, nil
	case ArgBool:
		if a.Int != 0 {
			return symVal{kind: BoolKind, e: sym.True()}, nil
		}
		return symVal{kind: BoolKind, e: sym.False()}, nil
	case ArgFloat:
		return symVal{kind: FloatKind}, nil
	case ArgValue:
		switch t := a.Value.Type.(type) {
		case *SymIntType:
			e, _ := SymIntOf(a)
			return symVal{kind: IntKind, symbolic: true, e: e}, nil
		case *SymFloatType:
			return symVal{kind: FloatKind, symbolic: true}, nil
		case *SymBoolType:
			return symVal{kind: BoolKind, symbolic: true, e: t.Expr}, nil
		case *ScalarType:
			switch t.Kind {
			case IntKind:
				e, _ := SymIntOf(a)
				return symVal{kind: IntKind, e: e}, nil
			case FloatKind:
				return symVal{kind: FloatKind}, nil
			case BoolKind:
				return symVal{kind: BoolKind}, nil
			}
		}
		return symVal{}, fmt.Errorf("%s of type %s is not a Python number", a.Value, a.Value.Type)
	}
	return symVal{}, fmt.Errorf("expected a number, got %s %s", a.Kind, a)
}

// asInt views a bool operand as an int (Python's True + 1 == 2).
func (v symVal) asInt() symVal {
	if v.kind != BoolKind {
		return v
	}
	out := symVal{kind: IntKind, symbolic: v.symbolic}
	if v.e.IsValid() {
		if v.e.Equal(sym.True()) {
			out.e = sym.Const(1)
		} else if v.e.Equal(sym.False()) {
			out.e = sym.Const(0)
		}
	}
	return out
}

func symOperands(c *InferCtx, n int) ([]symVal, error) {
	if c.NumArgs() < n {
		return nil, fmt.Errorf("expected %d operands, got %d", n, c.NumArgs())
	}
	out := make([]symVal, n)
	for i := range out {
		a, _ := c.Pos(i)
		v, err := symValOf(a)
		if err != nil {
			return nil, fmt.Errorf("operand %d: %w", i, err)
		}
		out[i] = v
	}
	return out, nil
}

func anySymbolic(vs ...symVal) bool {
	for _, v := range vs {
		if v.symbolic {
			return true
		}
	}
	return false
}

func intResult(symbolic bool, e sym.Expr) Type {
	if symbolic {
		return &SymIntType{Expr: e}
	}
	return IntType
}

func floatResult(symbolic bool) Type {
	if symbolic {
		return SymFloat
	}
	return FloatType
}

func boolResult(symbolic bool, e sym.Expr) Type {
	if symbolic {
		return &SymBoolType{Expr: e}
	}
	return BoolType
}

// inferSymArith: + - * // % ** max min on Python numbers.
func inferSymArith(c *InferCtx) ([]Type, error) {
	vs, err := symOperands(c, 2)
	if err != nil {
		return nil, err
	}
	a, b := vs[0].asInt(), vs[1].asInt()
	symb := anySymbolic(a, b)
	base := c.Op().Info().Base
	if a.kind == FloatKind || b.kind == FloatKind {
		return one(floatResult(symb)), nil
	}
	if !a.e.IsValid() || !b.e.IsValid() {
		if base == "pow" {
			return one(floatResult(symb)), nil
		}
		return one(intResult(symb, sym.Expr{})), nil
	}
	if bv, ok := b.e.Const(); ok && bv == 0 && (base == "floordiv" || base == "mod") {
		return nil, fmt.Errorf("integer division or modulo by zero")
	}
	var e sym.Expr
	switch base {
	case "add":
		e = sym.Add(a.e, b.e)
	case "sub":
		e = sym.Sub(a.e, b.e)
	case "mul":
		e = sym.Mul(a.e, b.e)
	case "floordiv":
		e = sym.FloorDiv(a.e, b.e)
	case "mod":
		e = sym.Mod(a.e, b.e)
	case "pow":
		k, ok := b.e.Const()
		if !ok || k < 0 {
			// int ** negative int is a float in Python; unknown exponents may be.
			if ok {
				return one(floatResult(symb)), nil
			}
			return one(intResult(symb, sym.Expr{})), nil
		}
		e = sym.Pow(a.e, k)
	case "sym_max":
		e = sym.Max(a.e, b.e)
	case "sym_min":
		e = sym.Min(a.e, b.e)
	default:
		return nil, fmt.Errorf("sym_arith does not know %s", base)
	}
	return one(intResult(symb, e)), nil
}

// inferSymTruediv: a / b is always a float.
func inferSymTruediv(c *InferCtx) ([]Type, error) {
	vs, err := symOperands(c, 2)
	if err != nil {
		return nil, err
	}
	if bv, ok := vs[1].e.Const(); ok && bv == 0 && vs[1].kind == IntKind {
		return nil, fmt.Errorf("division by zero")
	}
	return one(floatResult(anySymbolic(vs...))), nil
}

// inferSymCompare: == != < <= > >= → SymBool (with its condition on ints) or bool.
func inferSymCompare(c *InferCtx) ([]Type, error) {
	vs, err := symOperands(c, 2)
	if err != nil {
		return nil, err
	}
	a, b := vs[0], vs[1]
	symb := anySymbolic(a, b)
	if a.kind == BoolKind && b.kind == BoolKind {
		return one(boolResult(symb, sym.Expr{})), nil
	}
	a, b = a.asInt(), b.asInt()
	if a.kind != IntKind || b.kind != IntKind || !a.e.IsValid() || !b.e.IsValid() {
		return one(boolResult(symb, sym.Expr{})), nil
	}
	var e sym.Expr
	switch c.Op().Info().Base {
	case "eq":
		e = sym.Eq(a.e, b.e)
	case "ne":
		e = sym.Ne(a.e, b.e)
	case "lt":
		e = sym.Lt(a.e, b.e)
	case "le":
		e = sym.Le(a.e, b.e)
	case "gt":
		e = sym.Gt(a.e, b.e)
	case "ge":
		e = sym.Ge(a.e, b.e)
	default:
		return nil, fmt.Errorf("sym_compare does not know %s", c.Op().Info().Base)
	}
	return one(boolResult(symb, e)), nil
}

// inferSymLogic: and_/or_: logical on bools, bitwise on ints.
func inferSymLogic(c *InferCtx) ([]Type, error) {
	vs, err := symOperands(c, 2)
	if err != nil {
		return nil, err
	}
	a, b := vs[0], vs[1]
	symb := anySymbolic(a, b)
	if a.kind == BoolKind && b.kind == BoolKind {
		var e sym.Expr
		if a.e.IsValid() && b.e.IsValid() {
			if c.Op().Info().Base == "and_" {
				e = sym.And(a.e, b.e)
			} else {
				e = sym.Or(a.e, b.e)
			}
		}
		return one(boolResult(symb, e)), nil
	}
	if a.kind == FloatKind || b.kind == FloatKind {
		return nil, fmt.Errorf("unsupported operand types for %s: float", c.Op().Info().Base)
	}
	return one(intResult(symb, sym.Expr{})), nil
}

// inferSymNot: not_/sym_not: logical negation.
func inferSymNot(c *InferCtx) ([]Type, error) {
	vs, err := symOperands(c, 1)
	if err != nil {
		return nil, err
	}
	v := vs[0]
	var e sym.Expr
	switch {
	case v.kind == BoolKind && v.e.IsValid():
		e = sym.Not(v.e)
	case v.kind == IntKind && v.e.IsValid():
		e = sym.Eq(v.e, sym.Const(0))
	}
	return one(boolResult(v.symbolic, e)), nil
}

// inferSymNeg: -x.
func inferSymNeg(c *InferCtx) ([]Type, error) {
	vs, err := symOperands(c, 1)
	if err != nil {
		return nil, err
	}
	v := vs[0].asInt()
	if v.kind == FloatKind {
		return one(floatResult(v.symbolic)), nil
	}
	var e sym.Expr
	if v.e.IsValid() {
		e = sym.Neg(v.e)
	}
	return one(intResult(v.symbolic, e)), nil
}

// inferSymToInt: math.ceil/floor/trunc, torch.sym_int, round (one argument):
// an int; ints pass through unchanged. round(x, ndigits) keeps x's kind.
func inferSymToInt(c *InferCtx) ([]Type, error) {
	vs, err := symOperands(c, 1)
	if err != nil {
		return nil, err
	}
	v := vs[0].asInt()
	if c.NumArgs() > 1 {
		if nd, _ := c.Pos(1); nd.Kind != ArgNone && v.kind == FloatKind {
			return one(floatResult(v.symbolic)), nil
		}
	}
	if v.kind == IntKind {
		return one(intResult(v.symbolic, v.e)), nil
	}
	return one(intResult(v.symbolic, sym.Expr{})), nil
}

// inferSymToFloat: torch.sym_float, math.sqrt, torch.sym_sqrt: a float.
func inferSymToFloat(c *InferCtx) ([]Type, error) {
	vs, err := symOperands(c, 1)
	if err != nil {
		return nil, err
	}
	return one(floatResult(vs[0].symbolic)), nil
}

// inferSymIte: sym_ite(b, t, f): the branches' common type.
func inferSymIte(c *InferCtx) ([]Type, error) {
	vs, err := symOperands(c, 3)
	if err != nil {
		return nil, err
	}
	t, f := vs[1].asInt(), vs[2].asInt()
	symb := anySymbolic(vs...)
	switch {
	case t.kind == FloatKind || f.kind == FloatKind:
		return one(floatResult(symb)), nil
	case t.kind == BoolKind && f.kind == BoolKind:
		return one(boolResult(symb, sym.Expr{})), nil
	}
	var e sym.Expr
	if t.e.IsValid() && t.e.Equal(f.e) {
		e = t.e
	}
	return one(intResult(symb, e)), nil
}

// inferSymSum: sym_sum(args): the sum of a list of ints.
func inferSymSum(c *InferCtx) ([]Type, error) {
	a, err := c.Pos(0)
	if err != nil {
		return nil, err
	}
	if a.Kind != ArgList {
		return nil, fmt.Errorf("sym_sum expects a list, got %s", a.Kind)
	}
	symb := false
	terms := []sym.Expr{sym.Const(0)}
	known := true
	isFloat := false
	for i, el := range a.List {
		v, err := symValOf(el)
		if err != nil {
			return nil, fmt.Errorf("sym_sum element %d: %w", i, err)
		}
		v = v.asInt()
		symb = symb || v.symbolic
		if v.kind == FloatKind {
			isFloat = true
		}
		if !v.e.IsValid() {
			known = false
		} else {
			terms = append(terms, v.e)
		}
	}
	if isFloat {
		return one(floatResult(symb)), nil
	}
	var e sym.Expr
	if known {
		e = sym.Add(terms...)
	}
	return one(intResult(symb, e)), nil
}

// inferGetitem: operator.getitem(x, i) on a list or tuple value.
func inferGetitem(c *InferCtx) ([]Type, error) {
	a, err := c.Pos(0)
	if err != nil {
		return nil, err
	}
	i, err := c.Pos(1)
	if err != nil {
		return nil, err
	}
	if i.Kind != ArgInt {
		return nil, fmt.Errorf("getitem needs a constant index, got %s", i)
	}
	var elems []Type
	var listElem Type
	switch t := typeOfArg(a).(type) {
	case *TupleType:
		elems = t.Elems
	case *ListType:
		listElem = t.Elem
	default:
		return nil, fmt.Errorf("getitem on a value of type %s", t)
	}
	if listElem != nil {
		return one(listElem), nil
	}
	k := i.Int
	if k < 0 {
		k += int64(len(elems))
	}
	if k < 0 || k >= int64(len(elems)) {
		return nil, fmt.Errorf("getitem index %d out of range for %d elements", i.Int, len(elems))
	}
	return one(elems[k]), nil
}
