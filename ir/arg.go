package ir

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ArgKind says what an Arg holds.
type ArgKind uint8

// Argument kinds. ArgValue refers to an SSA value (an operand); all the
// others are literals bound to the op schema's argument.
const (
	ArgNone ArgKind = iota
	ArgValue
	ArgInt
	ArgFloat
	ArgBool
	ArgString
	ArgDType
	ArgLayout
	ArgMemoryFormat
	ArgDevice
	ArgList
	ArgGraph
	ArgOp
)

var argKindNames = [...]string{"none", "value", "int", "float", "bool", "str", "dtype", "layout", "memory_format", "device", "list", "graph", "op"}

func (k ArgKind) String() string {
	if int(k) < len(argKindNames) {
		return argKindNames[k]
	}
	return fmt.Sprintf("ArgKind(%d)", uint8(k))
}

// Arg is one actual argument of a node: an operand value or a typed literal.
// Lists may mix values and literals (e.g. a SymInt[] of [%sym_size, 4]).
type Arg struct {
	Kind  ArgKind
	Int   int64   // ArgInt; ArgBool (0/1); ArgDType, ArgLayout, ArgMemoryFormat (enum value)
	Float float64 // ArgFloat
	Str   string  // ArgString; ArgDevice ("cpu", "cuda:0"); ArgOp (qualified op name)
	Value *Value  // ArgValue
	List  []Arg   // ArgList
	Graph *Graph  // ArgGraph: a region owned by the node
}

// Literal and operand constructors.
func NoneArg() Arg                       { return Arg{Kind: ArgNone} }
func ValueArg(v *Value) Arg              { return Arg{Kind: ArgValue, Value: v} }
func IntArg(i int64) Arg                 { return Arg{Kind: ArgInt, Int: i} }
func FloatArg(f float64) Arg             { return Arg{Kind: ArgFloat, Float: f} }
func StringArg(s string) Arg             { return Arg{Kind: ArgString, Str: s} }
func DTypeArg(d DType) Arg               { return Arg{Kind: ArgDType, Int: int64(d)} }
func LayoutArg(l Layout) Arg             { return Arg{Kind: ArgLayout, Int: int64(l)} }
func MemoryFormatArg(m MemoryFormat) Arg { return Arg{Kind: ArgMemoryFormat, Int: int64(m)} }
func DeviceArg(d string) Arg             { return Arg{Kind: ArgDevice, Str: d} }
func ListArg(elems ...Arg) Arg           { return Arg{Kind: ArgList, List: elems} }
func GraphArg(g *Graph) Arg              { return Arg{Kind: ArgGraph, Graph: g} }
func OpArg(op Op) Arg                    { return Arg{Kind: ArgOp, Str: op.String()} }
func BoolArg(b bool) Arg {
	if b {
		return Arg{Kind: ArgBool, Int: 1}
	}
	return Arg{Kind: ArgBool}
}

// IntsArg builds a list of int literals.
func IntsArg(xs ...int64) Arg {
	l := make([]Arg, len(xs))
	for i, x := range xs {
		l[i] = IntArg(x)
	}
	return ListArg(l...)
}

// ValuesArg builds a list of operands.
func ValuesArg(vs ...*Value) Arg {
	l := make([]Arg, len(vs))
	for i, v := range vs {
		l[i] = ValueArg(v)
	}
	return ListArg(l...)
}

// Bool returns the literal bool.
func (a Arg) Bool() bool { return a.Int != 0 }

// IsNone reports a None literal.
func (a Arg) IsNone() bool { return a.Kind == ArgNone }

// DType returns the literal dtype.
func (a Arg) DType() DType { return DType(a.Int) }

// Values returns the operands in a (a itself, or the elements of a list), in order.
func (a Arg) Values() []*Value {
	var out []*Value
	a.walkValues(func(v *Value) { out = append(out, v) })
	return out
}

func (a *Arg) walkValues(f func(*Value)) {
	switch a.Kind {
	case ArgValue:
		f(a.Value)
	case ArgList:
		for i := range a.List {
			a.List[i].walkValues(f)
		}
	}
}

// replaceValue substitutes new for every occurrence of old and returns how many it replaced.
func (a *Arg) replaceValue(old, new *Value) int {
	switch a.Kind {
	case ArgValue:
		if a.Value == old {
			a.Value = new
			return 1
		}
	case ArgList:
		n := 0
		for i := range a.List {
			n += a.List[i].replaceValue(old, new)
		}
		return n
	}
	return 0
}

// Equal compares two args; values compare by identity, graphs by identity.
func (a Arg) Equal(b Arg) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case ArgNone:
		return true
	case ArgValue:
		return a.Value == b.Value
	case ArgFloat:
		return a.Float == b.Float || (math.IsNaN(a.Float) && math.IsNaN(b.Float))
	case ArgString, ArgDevice, ArgOp:
		return a.Str == b.Str
	case ArgList:
		if len(a.List) != len(b.List) {
			return false
		}
		for i := range a.List {
			if !a.List[i].Equal(b.List[i]) {
				return false
			}
		}
		return true
	case ArgGraph:
		return a.Graph == b.Graph
	default:
		return a.Int == b.Int
	}
}

// String prints the arg in IR text form.
func (a Arg) String() string {
	var b strings.Builder
	writeArg(&b, a)
	return b.String()
}

func writeArg(b *strings.Builder, a Arg) {
	switch a.Kind {
	case ArgNone:
		b.WriteString("None")
	case ArgValue:
		b.WriteByte('%')
		if a.Value == nil {
			b.WriteString("<nil>")
		} else {
			b.WriteString(a.Value.Name)
		}
	case ArgInt:
		b.WriteString(strconv.FormatInt(a.Int, 10))
	case ArgFloat:
		b.WriteString(FormatFloat(a.Float))
	case ArgBool:
		if a.Int != 0 {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case ArgString:
		b.WriteString(strconv.Quote(a.Str))
	case ArgDType:
		b.WriteString("torch.")
		b.WriteString(DType(a.Int).String())
	case ArgLayout:
		b.WriteString("torch.")
		b.WriteString(Layout(a.Int).String())
	case ArgMemoryFormat:
		b.WriteString("torch.")
		b.WriteString(MemoryFormat(a.Int).String())
	case ArgDevice:
		b.WriteString("device(")
		b.WriteString(strconv.Quote(a.Str))
		b.WriteString(")")
	case ArgList:
		b.WriteByte('[')
		for i, e := range a.List {
			if i > 0 {
				b.WriteString(", ")
			}
			writeArg(b, e)
		}
		b.WriteByte(']')
	case ArgGraph:
		b.WriteByte('^')
		if a.Graph != nil {
			b.WriteString(a.Graph.Name)
		}
	case ArgOp:
		b.WriteString("op(")
		b.WriteString(a.Str)
		b.WriteString(")")
	}
}

// FormatFloat prints a float so that it reads back exactly and never looks
// like an int: 1.0, 0.5, 1e-05, inf, -inf, nan.
func FormatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// ParseDefault converts a schema default spelling into an Arg for an argument of type t.
func ParseDefault(t SchemaType, s string) (Arg, error) {
	s = strings.TrimSpace(s)
	if s == "None" {
		return NoneArg(), nil
	}
	if t.List {
		elem := t
		elem.List, elem.ListLen, elem.Optional = false, 0, false
		if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
			body := strings.TrimSpace(s[1 : len(s)-1])
			if body == "" {
				return ListArg(), nil
			}
			parts := strings.Split(body, ",")
			l := make([]Arg, len(parts))
			for i, p := range parts {
				a, err := ParseDefault(elem, p)
				if err != nil {
					return Arg{}, err
				}
				l[i] = a
			}
			return ListArg(l...), nil
		}
		// "int[2] stride=1" repeats a single value N times.
		a, err := ParseDefault(elem, s)
		if err != nil {
			return Arg{}, err
		}
		n := t.ListLen
		if n == 0 {
			n = 1
		}
		l := make([]Arg, n)
		for i := range l {
			l[i] = a
		}
		return ListArg(l...), nil
	}
	switch t.Base {
	case KBool, KSymBool:
		switch s {
		case "True":
			return BoolArg(true), nil
		case "False":
			return BoolArg(false), nil
		}
	case KInt, KSymInt:
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return IntArg(v), nil
		}
	case KFloat, KSymFloat:
		if v, err := parseFloatLiteral(s); err == nil {
			return FloatArg(v), nil
		}
	case KScalar:
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return IntArg(v), nil
		}
		if v, err := parseFloatLiteral(s); err == nil {
			return FloatArg(v), nil
		}
		switch s {
		case "True":
			return BoolArg(true), nil
		case "False":
			return BoolArg(false), nil
		}
	case KStr:
		if uq, err := strconv.Unquote(s); err == nil {
			return StringArg(uq), nil
		}
		if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
			return StringArg(s[1 : len(s)-1]), nil
		}
	case KMemoryFormat:
		if m, ok := MemoryFormatFromName(s); ok {
			return MemoryFormatArg(m), nil
		}
	case KLayout:
		if l, ok := LayoutFromName(s); ok {
			return LayoutArg(l), nil
		}
	case KScalarType:
		if d, ok := DTypeFromName(s); ok {
			return DTypeArg(d), nil
		}
	case KDevice:
		return DeviceArg(strings.Trim(s, "\"'")), nil
	}
	return Arg{}, fmt.Errorf("cannot read default %q for a %s argument", s, t)
}

func parseFloatLiteral(s string) (float64, error) {
	switch s {
	case "inf", "math.inf":
		return math.Inf(1), nil
	case "-inf", "-math.inf":
		return math.Inf(-1), nil
	case "nan", "math.nan":
		return math.NaN(), nil
	}
	return strconv.ParseFloat(s, 64)
}

var posInf = math.Inf(1)

func nan() float64 { return math.NaN() }
