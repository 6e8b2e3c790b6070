package interp

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
)

// Value is a runtime value: *Tensor, int64, float64, bool, complex128,
// string, nil (None), []Value (lists and tuples), ir.DType, ir.Layout,
// ir.MemoryFormat, Device, Token, *ir.Graph (a region) or ir.Op.
type Value = any

// Device is a device literal ("cpu", "cuda:0"); the interpreter runs
// everything on the CPU.
type Device string

// Token is the effect token threaded through with_effects.
type Token struct{}

// Literal converts a literal argument to a Value. Operands and lists (which
// may hold operands) are resolved by the caller.
func Literal(a ir.Arg) (Value, error) {
	switch a.Kind {
	case ir.ArgNone:
		return nil, nil
	case ir.ArgInt:
		return a.Int, nil
	case ir.ArgFloat:
		return a.Float, nil
	case ir.ArgBool:
		return a.Int != 0, nil
	case ir.ArgString:
		return a.Str, nil
	case ir.ArgDType:
		return ir.DType(a.Int), nil
	case ir.ArgLayout:
		return ir.Layout(a.Int), nil
	case ir.ArgMemoryFormat:
		return ir.MemoryFormat(a.Int), nil
	case ir.ArgDevice:
		return Device(a.Str), nil
	case ir.ArgGraph:
		return a.Graph, nil
	case ir.ArgOp:
		op, ok := ir.LookupOp(a.Str)
		if !ok {
			return nil, fmt.Errorf("unknown op %q", a.Str)
		}
		return op, nil
	}
	return nil, fmt.Errorf("cannot use a %s argument as a literal", a.Kind)
}

// Describe prints a value briefly for diagnostics.
func Describe(v Value) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case *Tensor:
		return x.String()
	case []Value:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = Describe(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case string:
		return fmt.Sprintf("%q", x)
	case ir.DType:
		return "torch." + x.String()
	case *ir.Graph:
		return "^" + x.Name
	case Token:
		return "token"
	}
	return fmt.Sprint(v)
}

// kindOf names a value's kind for error messages.
func kindOf(v Value) string {
	switch v.(type) {
	case nil:
		return "None"
	case *Tensor:
		return "tensor"
	case int64:
		return "int"
	case float64:
		return "float"
	case bool:
		return "bool"
	case complex128:
		return "complex"
	case string:
		return "str"
	case []Value:
		return "list"
	case ir.DType:
		return "dtype"
	case *ir.Graph:
		return "graph"
	case Token:
		return "token"
	}
	return fmt.Sprintf("%T", v)
}
