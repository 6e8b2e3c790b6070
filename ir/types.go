package ir

import (
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir/sym"
)

// Type is the type of an IR value. Types are immutable once built; compare
// them with TypeEqual, print them with String (the IR text spelling), parse
// them with ParseType.
type Type interface {
	String() string
	isType()
}

// TensorType is a dense tensor: element type, shape (each dim an int or a
// symbolic expression), an optional dim order for non-contiguous layouts and
// an optional device.
type TensorType struct {
	DType DType
	Shape []sym.Expr
	// DimOrder lists dims from outermost to innermost in memory; nil means
	// contiguous (0, 1, …, rank-1). channels_last for rank 4 is [0, 2, 3, 1].
	DimOrder []int
	// Device is "" for the default (CPU) device, otherwise torch's spelling
	// such as "cuda:0" or "meta".
	Device string
}

// SymIntType is a symbolic integer value (torch.SymInt). Expr, when valid, is
// what the value equals in terms of the program's symbols (e.g. the result of
// sym_size on dim 0 of an f32[s0, 4] tensor is SymInt s0).
type SymIntType struct{ Expr sym.Expr }

// SymFloatType is a symbolic float value (torch.SymFloat).
type SymFloatType struct{}

// SymBoolType is a symbolic boolean (torch.SymBool); Expr is its condition when known.
type SymBoolType struct{ Expr sym.Expr }

// ScalarKind names the plain Python scalar types a value can have.
type ScalarKind uint8

// Plain scalar kinds.
const (
	IntKind ScalarKind = iota
	FloatKind
	BoolKind
	StringKind
	DeviceKind
	DTypeKind
	LayoutKind
	MemoryFormatKind
)

var scalarKindNames = [...]string{"int", "float", "bool", "str", "device", "dtype", "layout", "memory_format"}

// ScalarType is a plain (non-symbolic) Python value: int, float, bool, str, or one of torch's
// enum-like values.
type ScalarType struct{ Kind ScalarKind }

// ListType is a list of values of one type.
type ListType struct{ Elem Type }

// OptionalType is a value that may be None.
type OptionalType struct{ Elem Type }

// TupleType is a fixed-length heterogeneous tuple.
type TupleType struct{ Elems []Type }

// NoneType is the type of None.
type NoneType struct{}

// TokenType is an effect token threaded through side-effecting ops (with_effects).
type TokenType struct{}

// OpaqueType is a custom object (torch.ScriptObject) known only by its class.
type OpaqueType struct{ Class string }

// UnknownType is the type of a value whose type the source did not say and
// inference could not tell yet (an FX text dump without annotations whose
// inputs are not typed). It is printed and parsed as "unknown"; lowering
// refuses programs that still hold one (CheckKnownTypes).
type UnknownType struct{}

func (*TensorType) isType()   {}
func (*SymIntType) isType()   {}
func (*SymFloatType) isType() {}
func (*SymBoolType) isType()  {}
func (*ScalarType) isType()   {}
func (*ListType) isType()     {}
func (*OptionalType) isType() {}
func (*TupleType) isType()    {}
func (*NoneType) isType()     {}
func (*TokenType) isType()    {}
func (*OpaqueType) isType()   {}
func (*UnknownType) isType()  {}

// Shared instances of the types without parameters.
var (
	IntType          Type = &ScalarType{IntKind}
	FloatType        Type = &ScalarType{FloatKind}
	BoolType         Type = &ScalarType{BoolKind}
	StringType       Type = &ScalarType{StringKind}
	DeviceType       Type = &ScalarType{DeviceKind}
	DTypeType        Type = &ScalarType{DTypeKind}
	LayoutType       Type = &ScalarType{LayoutKind}
	MemoryFormatType Type = &ScalarType{MemoryFormatKind}
	None             Type = &NoneType{}
	Token            Type = &TokenType{}
	SymFloat         Type = &SymFloatType{}
	Unknown          Type = &UnknownType{}
)

// Tensor builds a contiguous tensor type with static dims.
func Tensor(dt DType, dims ...int64) *TensorType {
	shape := make([]sym.Expr, len(dims))
	for i, d := range dims {
		shape[i] = sym.Const(d)
	}
	return &TensorType{DType: dt, Shape: shape}
}

// TensorOf builds a contiguous tensor type with the given symbolic shape.
func TensorOf(dt DType, shape []sym.Expr) *TensorType {
	return &TensorType{DType: dt, Shape: shape}
}

// Rank is the number of dims.
func (t *TensorType) Rank() int { return len(t.Shape) }

// StaticShape returns the dims as ints when none is symbolic.
func (t *TensorType) StaticShape() ([]int64, bool) {
	out := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		v, ok := d.Const()
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// Numel is the product of the dims as an expression.
func (t *TensorType) Numel() sym.Expr {
	if len(t.Shape) == 0 {
		return sym.Const(1)
	}
	return sym.Mul(t.Shape...)
}

// IsContiguous reports whether the dim order is the default one.
func (t *TensorType) IsContiguous() bool {
	for i, d := range t.DimOrder {
		if d != i {
			return false
		}
	}
	return true
}

// WithDType returns a copy of t with another element type.
func (t *TensorType) WithDType(dt DType) *TensorType {
	c := *t
	c.DType = dt
	return &c
}

// WithShape returns a copy of t with another shape and the default dim order.
func (t *TensorType) WithShape(shape []sym.Expr) *TensorType {
	c := *t
	c.Shape = shape
	c.DimOrder = nil
	return &c
}

func (t *TensorType) String() string {
	var b strings.Builder
	b.WriteString(t.DType.Abbr())
	b.WriteByte('[')
	for i, d := range t.Shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.String())
	}
	b.WriteByte(']')
	if t.DimOrder != nil && !t.IsContiguous() {
		b.WriteString("{")
		for i, d := range t.DimOrder {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(d))
		}
		b.WriteString("}")
	}
	if t.Device != "" {
		b.WriteByte('@')
		b.WriteString(t.Device)
	}
	return b.String()
}

func (t *SymIntType) String() string {
	if t.Expr.IsValid() {
		return "Sym(" + t.Expr.String() + ")"
	}
	return "SymInt"
}

func (*SymFloatType) String() string { return "SymFloat" }

func (t *SymBoolType) String() string {
	if t.Expr.IsValid() {
		return "SymBool(" + t.Expr.String() + ")"
	}
	return "SymBool"
}

func (t *ScalarType) String() string   { return scalarKindNames[t.Kind] }
func (t *ListType) String() string     { return compositeString(t) }
func (t *OptionalType) String() string { return compositeString(t) }
func (t *TupleType) String() string    { return compositeString(t) }

// compositeString prints a list, optional or tuple type with an explicit
// stack into one builder: linear time and no recursion however deep the
// nesting (a 100,000-deep list<list<…>> from a hostile input).
func compositeString(t Type) string {
	var b strings.Builder
	type item struct {
		t   Type   // a type to print, or nil
		lit string // else a literal
	}
	stack := []item{{t: t}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := it.t.(type) {
		case nil:
			b.WriteString(it.lit)
		case *ListType:
			b.WriteString("list<")
			stack = append(stack, item{lit: ">"}, item{t: x.Elem})
		case *OptionalType:
			b.WriteString("optional<")
			stack = append(stack, item{lit: ">"}, item{t: x.Elem})
		case *TupleType:
			b.WriteString("tuple<")
			stack = append(stack, item{lit: ">"})
			for i := len(x.Elems) - 1; i >= 0; i-- {
				stack = append(stack, item{t: x.Elems[i]})
				if i > 0 {
					stack = append(stack, item{lit: ", "})
				}
			}
		default:
			b.WriteString(x.String())
		}
	}
	return b.String()
}
func (*NoneType) String() string     { return "none" }
func (*TokenType) String() string    { return "token" }
func (t *OpaqueType) String() string { return "opaque<" + t.Class + ">" }
func (*UnknownType) String() string  { return "unknown" }

// IsUnknown reports whether t is the unknown type.
func IsUnknown(t Type) bool { _, ok := t.(*UnknownType); return ok }

// TypeEqual reports whether two types are the same, comparing symbolic dims
// by their canonical form.
func TypeEqual(a, b Type) bool {
	switch a := a.(type) {
	case *TensorType:
		b, ok := b.(*TensorType)
		if !ok || a.DType != b.DType || len(a.Shape) != len(b.Shape) || a.Device != b.Device {
			return false
		}
		for i := range a.Shape {
			if !a.Shape[i].Equal(b.Shape[i]) {
				return false
			}
		}
		if a.IsContiguous() != b.IsContiguous() {
			return false
		}
		if !a.IsContiguous() {
			for i := range a.DimOrder {
				if a.DimOrder[i] != b.DimOrder[i] {
					return false
				}
			}
		}
		return true
	case *SymIntType:
		b, ok := b.(*SymIntType)
		return ok && exprEqualOrBothInvalid(a.Expr, b.Expr)
	case *SymBoolType:
		b, ok := b.(*SymBoolType)
		return ok && exprEqualOrBothInvalid(a.Expr, b.Expr)
	case *SymFloatType:
		_, ok := b.(*SymFloatType)
		return ok
	case *ScalarType:
		b, ok := b.(*ScalarType)
		return ok && a.Kind == b.Kind
	case *ListType:
		b, ok := b.(*ListType)
		return ok && TypeEqual(a.Elem, b.Elem)
	case *OptionalType:
		b, ok := b.(*OptionalType)
		return ok && TypeEqual(a.Elem, b.Elem)
	case *TupleType:
		b, ok := b.(*TupleType)
		if !ok || len(a.Elems) != len(b.Elems) {
			return false
		}
		for i := range a.Elems {
			if !TypeEqual(a.Elems[i], b.Elems[i]) {
				return false
			}
		}
		return true
	case *NoneType:
		_, ok := b.(*NoneType)
		return ok
	case *TokenType:
		_, ok := b.(*TokenType)
		return ok
	case *OpaqueType:
		b, ok := b.(*OpaqueType)
		return ok && a.Class == b.Class
	case *UnknownType:
		_, ok := b.(*UnknownType)
		return ok
	}
	return false
}

func exprEqualOrBothInvalid(a, b sym.Expr) bool {
	if !a.IsValid() || !b.IsValid() {
		return a.IsValid() == b.IsValid()
	}
	return a.Equal(b)
}

// AsTensor returns t as a tensor type, or nil.
func AsTensor(t Type) *TensorType { tt, _ := t.(*TensorType); return tt }
