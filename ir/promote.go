package ir

import "fmt"

// DefaultFloat is torch's default floating dtype (torch.get_default_dtype()),
// the type Python floats and integer-to-float promotions produce.
const DefaultFloat = Float32

// DefaultComplex is the complex counterpart of DefaultFloat.
const DefaultComplex = Complex64

// isBarebonesUnsigned reports uint16/32/64, which torch promotes only with
// themselves, bool and floating types.
func isBarebonesUnsigned(d DType) bool { return d == Uint16 || d == Uint32 || d == Uint64 }

func isFloat8(d DType) bool {
	switch d {
	case Float8E4M3FN, Float8E5M2, Float8E4M3FNUZ, Float8E5M2FNUZ, Float8E8M0FNU:
		return true
	}
	return false
}

// PromoteTypes is torch.promote_types: the smallest dtype both a and b
// convert to without losing their category. Categories rank bool < integer <
// floating < complex; within integers a signed/unsigned mix widens to a signed
// type that holds both (uint8 + int8 → int16); float16 + bfloat16 → float32;
// a complex type with a wider float widens (complex32 + float32 → complex64).
// It returns Undefined for pairs torch refuses (float8 variants mixed with
// other types, uint16/32/64 mixed with other integer types, quantized types).
func PromoteTypes(a, b DType) DType {
	if a == b {
		return a
	}
	if a == Undefined {
		return b
	}
	if b == Undefined {
		return a
	}
	if a == Bool {
		return b
	}
	if b == Bool {
		return a
	}
	ka, kb := dtypeTable[a%numDTypes].kind, dtypeTable[b%numDTypes].kind
	if ka == kindOther || kb == kindOther || isFloat8(a) || isFloat8(b) {
		return Undefined
	}
	if a.IsComplex() || b.IsComplex() {
		ra, rb := complexPart(a), complexPart(b)
		r := PromoteTypes(ra, rb)
		if r == Undefined {
			return Undefined
		}
		return r.ToComplex()
	}
	if a.IsFloat() || b.IsFloat() {
		if !a.IsFloat() {
			return b
		}
		if !b.IsFloat() {
			return a
		}
		if (a == Float16 && b == BFloat16) || (a == BFloat16 && b == Float16) {
			return Float32
		}
		if a.Bits() >= b.Bits() {
			return a
		}
		return b
	}
	// Both integers.
	if isBarebonesUnsigned(a) || isBarebonesUnsigned(b) {
		return Undefined
	}
	switch {
	case a.IsSigned() && b.IsSigned():
		if a.Bits() >= b.Bits() {
			return a
		}
		return b
	case a.IsSigned(): // b is uint8
		if a.Bits() > b.Bits() {
			return a
		}
		return Int16
	default: // a is uint8, b signed
		if b.Bits() > a.Bits() {
			return b
		}
		return Int16
	}
}

// complexPart is the real type standing for d when promoting with a complex
// type: the component type of a complex d, float16 for integers (so that
// complex32 survives), d itself for floats.
func complexPart(d DType) DType {
	switch {
	case d.IsComplex():
		return d.ToReal()
	case d.IsFloat():
		return d
	}
	return Float16
}

// operandCategory is torch's priority class of an operand in result_type:
// tensors with at least one dim beat zero-dim tensors, which beat Python
// scalars ("wrapped numbers").
type operandCategory int

const (
	catDimTensor operandCategory = iota
	catZeroDim
	catScalar
)

// Operand is one input to ResultTypeOf: a dtype and its category.
type Operand struct {
	DType DType
	// ZeroDim marks a 0-dim tensor; Scalar a Python number (bool, int, float,
	// SymInt, …). Neither set means a tensor with at least one dim.
	ZeroDim, Scalar bool
}

// ResultType is torch.result_type over node arguments. Tensor operands
// contribute their dtype; int, float and bool literals and SymInt/SymFloat/
// SymBool values count as Python scalars; None and list arguments are
// skipped (a list contributes its elements). It documents torch's rule:
//
//   - the dtypes of each category (dim>0 tensors, 0-dim tensors, scalars) are
//     promoted among themselves with PromoteTypes; a Python float counts as
//     the default dtype (float32), a complex as complex64, an int as int64;
//   - a lower-priority category only matters when it is of a higher kind
//     (bool < integer < floating < complex) than the higher-priority one:
//     i64 tensor + 1.5 → f32, i32 tensor + i64 0-dim tensor → i32,
//     f16 tensor + f32 0-dim tensor → f16, i32 0-dim + 2.5 → f32,
//     and int tensor + complex scalar → complex64.
func ResultType(args ...Arg) (DType, error) {
	var ops []Operand
	var walk func(a Arg) error
	walk = func(a Arg) error {
		switch a.Kind {
		case ArgNone:
			return nil
		case ArgList:
			for _, e := range a.List {
				if err := walk(e); err != nil {
					return err
				}
			}
			return nil
		case ArgBool:
			ops = append(ops, Operand{DType: Bool, Scalar: true})
			return nil
		case ArgInt:
			ops = append(ops, Operand{DType: Int64, Scalar: true})
			return nil
		case ArgFloat:
			ops = append(ops, Operand{DType: Float64, Scalar: true})
			return nil
		case ArgValue:
			switch t := a.Value.Type.(type) {
			case *TensorType:
				ops = append(ops, Operand{DType: t.DType, ZeroDim: t.Rank() == 0})
				return nil
			case *SymIntType:
				ops = append(ops, Operand{DType: Int64, Scalar: true})
				return nil
			case *SymFloatType:
				ops = append(ops, Operand{DType: Float64, Scalar: true})
				return nil
			case *SymBoolType:
				ops = append(ops, Operand{DType: Bool, Scalar: true})
				return nil
			case *ScalarType:
				switch t.Kind {
				case IntKind:
					ops = append(ops, Operand{DType: Int64, Scalar: true})
					return nil
				case FloatKind:
					ops = append(ops, Operand{DType: Float64, Scalar: true})
					return nil
				case BoolKind:
					ops = append(ops, Operand{DType: Bool, Scalar: true})
					return nil
				}
			case *NoneType:
				return nil
			}
			return fmt.Errorf("%s of type %s takes no part in type promotion", a.Value, a.Value.Type)
		}
		return fmt.Errorf("%s argument %s takes no part in type promotion", a.Kind, a)
	}
	for _, a := range args {
		if err := walk(a); err != nil {
			return Undefined, err
		}
	}
	return ResultTypeOf(ops...)
}

// ResultTypeOf is ResultType over already classified operands.
func ResultTypeOf(ops ...Operand) (DType, error) {
	var state [3]DType
	for _, o := range ops {
		cat := catDimTensor
		d := o.DType
		switch {
		case o.Scalar:
			cat = catScalar
			// Python scalars count as the default types of their kind.
			if d.IsComplex() {
				d = DefaultComplex
			} else if d.IsFloat() {
				d = DefaultFloat
			} else if d.IsInteger() {
				d = Int64
			}
		case o.ZeroDim:
			cat = catZeroDim
		}
		p := PromoteTypes(state[cat], d)
		if p == Undefined && d != Undefined {
			return Undefined, fmt.Errorf("cannot promote %s with %s", state[cat], d)
		}
		state[cat] = p
	}
	r := combineCategories(state[catDimTensor], combineCategories(state[catZeroDim], state[catScalar]))
	if r == Undefined {
		return Undefined, fmt.Errorf("no operand to take a dtype from")
	}
	return r, nil
}

// combineCategories merges a higher-priority category's dtype with a lower
// one's, following torch's TypeProperties.cpp.
func combineCategories(higher, lower DType) DType {
	switch {
	case higher.IsComplex():
		return higher
	case lower.IsComplex():
		if higher.IsFloat() {
			return higher.ToComplex()
		}
		return lower
	case higher.IsFloat():
		return higher
	}
	if higher == Bool || lower.IsFloat() {
		if p := PromoteTypes(higher, lower); p != Undefined {
			return p
		}
		return higher
	}
	if higher != Undefined {
		return higher
	}
	return lower
}

// CanCast is torch.can_cast(from, to): whether an in-place op may write a
// value of type from into a tensor of type to without a category downgrade
// (float into int, complex into real, non-bool into bool are refused).
func CanCast(from, to DType) bool {
	switch {
	case from.IsComplex() && !to.IsComplex():
		return false
	case from.IsFloat() && (to.IsInteger() || to == Bool):
		return false
	case from != Bool && to == Bool:
		return false
	}
	return true
}

// isIntegral reports integer or bool dtypes (torch's isIntegralType(t, includeBool=true)).
func isIntegral(d DType) bool { return d.IsInteger() || d == Bool }

// toFloatIfIntegral maps integer and bool dtypes to the default float (what
// torch's "int_to_float" ops such as sin and true division do).
func toFloatIfIntegral(d DType) DType {
	if isIntegral(d) {
		return DefaultFloat
	}
	return d
}
