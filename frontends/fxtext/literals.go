package fxtext

// Literals: Python values of the code and readable forms, and the words the
// graph form prints with str(), read by the schema type they bind to.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir"
)

// literalArg reads a Python literal of the code and readable forms.
func (gb *gbuild) literalArg(e *expr) (ir.Arg, error) {
	switch e.kind {
	case eInt:
		return ir.IntArg(e.i), nil
	case eFloat:
		return ir.FloatArg(e.f), nil
	case eStr:
		return ir.StringArg(e.s), nil
	case eWord:
		return gb.word(e.name, ir.KAny)
	case eRef:
		return ir.Arg{}, fmt.Errorf("undefined node %%%s", e.name)
	case eTuple, eList:
		out := make([]ir.Arg, len(e.elems))
		for i, x := range e.elems {
			a, err := gb.literalArg(x)
			if err != nil {
				return ir.Arg{}, err
			}
			out[i] = a
		}
		return ir.ListArg(out...), nil
	case eUnary:
		if e.name == "-" && len(e.elems) == 1 && e.elems[0].kind == eName {
			if a, ok := nameLiteral(e.elems[0].name); ok && a.Kind == ir.ArgFloat {
				return ir.FloatArg(-a.Float), nil
			}
		}
	case eName:
		if a, ok := nameLiteral(e.name); ok {
			return a, nil
		}
		if op, ok := opLiteral(e.name); ok {
			return ir.OpArg(op), nil
		}
		if !strings.Contains(e.name, ".") {
			return ir.Arg{}, fmt.Errorf("undefined name %s", e.name)
		}
	case eCall:
		if e.fn.kind == eName && (e.fn.name == "device" || e.fn.name == "torch.device") {
			return deviceCall(e)
		}
		if e.fn.kind == eName && e.fn.name == "float" && len(e.elems) == 1 && e.elems[0].kind == eStr {
			if f, err := parseFloatWord(e.elems[0].s); err == nil {
				return ir.FloatArg(f), nil
			}
		}
		return ir.Arg{}, fmt.Errorf("nested call %s: FX arguments are nodes or literals", clip(e.text()))
	case eBinOp:
		return ir.Arg{}, fmt.Errorf("nested expression %s: FX arguments are nodes or literals", clip(e.text()))
	}
	return ir.Arg{}, fmt.Errorf("cannot read %s as a literal", describeExpr(e))
}

// nameLiteral reads the names that stand for literals.
func nameLiteral(name string) (ir.Arg, bool) {
	switch name {
	case "None":
		return ir.NoneArg(), true
	case "True":
		return ir.BoolArg(true), true
	case "False":
		return ir.BoolArg(false), true
	case "inf", "math.inf":
		return ir.FloatArg(math.Inf(1)), true
	case "nan", "math.nan":
		return ir.FloatArg(math.NaN()), true
	}
	if strings.HasPrefix(name, "torch.") {
		if d, ok := ir.DTypeFromName(name); ok {
			return ir.DTypeArg(d), true
		}
		if l, ok := ir.LayoutFromName(name); ok {
			return ir.LayoutArg(l), true
		}
		if m, ok := ir.MemoryFormatFromName(name); ok {
			return ir.MemoryFormatArg(m), true
		}
	}
	return ir.Arg{}, false
}

// opLiteral reads an operator passed as an argument (with_effects,
// auto_functionalized): torch.ops.aten.foo.default, or aten.foo.default as
// str() prints it.
func opLiteral(name string) (ir.Op, bool) {
	if strings.Count(name, ".") < 1 {
		return ir.OpInvalid, false
	}
	op, ok := ir.LookupOp(name)
	return op, ok
}

// deviceCall reads device(type='cuda', index=0) and torch.device('cuda:0').
func deviceCall(e *expr) (ir.Arg, error) {
	typ, index := "", ""
	for i, a := range e.elems {
		switch {
		case i == 0 && a.kind == eStr:
			typ = a.s
		case i == 1 && a.kind == eInt:
			index = strconv.FormatInt(a.i, 10)
		default:
			return ir.Arg{}, fmt.Errorf("bad device %s", clip(e.text()))
		}
	}
	for i, k := range e.keys {
		a := e.kw[i]
		switch {
		case k == "type" && a.kind == eStr:
			typ = a.s
		case k == "index" && a.kind == eInt:
			index = strconv.FormatInt(a.i, 10)
		case k == "index" && a.kind == eName && a.name == "None":
		default:
			return ir.Arg{}, fmt.Errorf("bad device %s", clip(e.text()))
		}
	}
	if index != "" && !strings.Contains(typ, ":") {
		typ += ":" + index
	}
	if !isDeviceName(typ) {
		return ir.Arg{}, fmt.Errorf("bad device %s", clip(e.text()))
	}
	return ir.DeviceArg(typ), nil
}

func parseFloatWord(w string) (float64, error) {
	switch w {
	case "inf", "+inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	case "nan", "-nan":
		return math.NaN(), nil
	}
	if strings.ContainsAny(w, "xXpP_") {
		return 0, fmt.Errorf("bad float %q", w)
	}
	return strconv.ParseFloat(w, 64)
}

// word reads a graph-form word (a value torch printed with str()) as type k.
func (gb *gbuild) word(w string, k ir.BaseKind) (ir.Arg, error) {
	if w == "None" {
		return ir.NoneArg(), nil
	}
	asInt := func() (ir.Arg, bool) {
		v, err := strconv.ParseInt(w, 10, 64)
		return ir.IntArg(v), err == nil
	}
	asFloat := func() (ir.Arg, bool) {
		f, err := parseFloatWord(w)
		return ir.FloatArg(f), err == nil
	}
	asBool := func() (ir.Arg, bool) {
		switch w {
		case "True":
			return ir.BoolArg(true), true
		case "False":
			return ir.BoolArg(false), true
		}
		return ir.Arg{}, false
	}
	bad := func() (ir.Arg, error) { return ir.Arg{}, fmt.Errorf("expected a %s, got %q", k, clip(w)) }
	switch k {
	case ir.KInt, ir.KSymInt:
		if a, ok := asInt(); ok {
			return a, nil
		}
		if a, ok := asBool(); ok {
			return a, nil
		}
		return bad()
	case ir.KFloat, ir.KSymFloat:
		if a, ok := asFloat(); ok {
			return a, nil
		}
		return bad()
	case ir.KBool, ir.KSymBool:
		if a, ok := asBool(); ok {
			return a, nil
		}
		return bad()
	case ir.KScalar, ir.KTensor:
		var a ir.Arg
		ok := false
		if a, ok = asInt(); !ok {
			if a, ok = asFloat(); !ok {
				a, ok = asBool()
			}
		}
		if !ok {
			return bad()
		}
		return a, nil
	case ir.KStr:
		return ir.StringArg(w), nil
	case ir.KScalarType:
		if d, ok := ir.DTypeFromName(w); ok {
			return ir.DTypeArg(d), nil
		}
		return bad()
	case ir.KLayout:
		if l, ok := ir.LayoutFromName(w); ok {
			return ir.LayoutArg(l), nil
		}
		return bad()
	case ir.KMemoryFormat:
		if m, ok := ir.MemoryFormatFromName(w); ok {
			return ir.MemoryFormatArg(m), nil
		}
		return bad()
	case ir.KDevice:
		if isDeviceName(w) {
			return ir.DeviceArg(w), nil
		}
		return bad()
	case ir.KAny, ir.KNone:
		if a, ok := asInt(); ok {
			return a, nil
		}
		if a, ok := asBool(); ok {
			return a, nil
		}
		if a, ok := asFloat(); ok {
			return a, nil
		}
		if a, ok := nameLiteral(w); ok {
			return a, nil
		}
		if op, ok := opLiteral(w); ok && strings.Count(w, ".") >= 2 {
			return ir.OpArg(op), nil
		}
		return ir.StringArg(w), nil
	}
	return bad()
}
