package pt2

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fxport/fxport/internal/pt2schema"
	"github.com/fxport/fxport/ir"
)

// target spells an op the way torch.export's serializer does:
// "torch.ops.aten.add.Tensor", "_operator.add", "math.ceil", "torch.sym_max".
func target(op ir.Op) string {
	info := op.Info()
	switch info.Namespace {
	case "operator":
		return "_operator." + info.Base
	case "math", "builtins", "torch":
		return info.Name
	}
	return "torch.ops." + info.Name
}

// deviceOf parses the IR spelling of a device ("", "cpu", "cuda:0", "meta").
func deviceOf(s string) (pt2schema.Device, error) {
	if s == "" {
		return pt2schema.Device{Type: "cpu"}, nil
	}
	typ, idx, hasIdx := strings.Cut(s, ":")
	if typ == "" {
		return pt2schema.Device{}, fmt.Errorf("bad device %q", s)
	}
	d := pt2schema.Device{Type: typ}
	if hasIdx {
		v, err := strconv.ParseInt(idx, 10, 64)
		if err != nil || v < 0 {
			return pt2schema.Device{}, fmt.Errorf("bad device %q", s)
		}
		d.Index = &v
	}
	return d, nil
}

// valueRef is the Argument that names v, by v's type.
func valueRef(v *ir.Value) (pt2schema.Argument, error) {
	a := pt2schema.Argument{Name: v.Name}
	switch t := v.Type.(type) {
	case *ir.TensorType, *ir.TokenType:
		a.Tag = pt2schema.TagTensor
	case *ir.SymIntType:
		a.Tag = pt2schema.TagSymInt
	case *ir.SymBoolType:
		a.Tag = pt2schema.TagSymBool
	case *ir.SymFloatType:
		a.Tag = pt2schema.TagSymFloat
	case *ir.OpaqueType:
		a.Tag, a.Str = pt2schema.TagCustomObj, t.Class
	default:
		return a, fmt.Errorf("value %s of type %s cannot be referred to in a .pt2 program (tensors, SymInt/SymBool/SymFloat, tokens and custom objects can)", v, typeName(v.Type))
	}
	return a, nil
}

func typeName(t ir.Type) string {
	if t == nil {
		return "?"
	}
	return t.String()
}

// literal converts a non-list literal; ok is false for other kinds.
func literal(a ir.Arg) (pt2schema.Argument, bool, error) {
	switch a.Kind {
	case ir.ArgNone:
		return pt2schema.Argument{Tag: pt2schema.TagNone}, true, nil
	case ir.ArgInt:
		return pt2schema.Argument{Tag: pt2schema.TagInt, Int: a.Int}, true, nil
	case ir.ArgFloat:
		return pt2schema.Argument{Tag: pt2schema.TagFloat, Float: a.Float}, true, nil
	case ir.ArgBool:
		return pt2schema.Argument{Tag: pt2schema.TagBool, Bool: a.Bool()}, true, nil
	case ir.ArgString:
		return pt2schema.Argument{Tag: pt2schema.TagString, Str: a.Str}, true, nil
	case ir.ArgDType:
		code := a.DType().PT2Code()
		if code < 0 {
			return pt2schema.Argument{}, true, fmt.Errorf("dtype %s has no torch.export code", a.DType())
		}
		return pt2schema.Argument{Tag: pt2schema.TagScalarType, Int: int64(code)}, true, nil
	case ir.ArgLayout:
		return pt2schema.Argument{Tag: pt2schema.TagLayout, Int: a.Int}, true, nil
	case ir.ArgMemoryFormat:
		return pt2schema.Argument{Tag: pt2schema.TagMemoryFormat, Int: a.Int}, true, nil
	case ir.ArgDevice:
		d, err := deviceOf(a.Str)
		return pt2schema.Argument{Tag: pt2schema.TagDevice, Device: d}, true, err
	case ir.ArgOp:
		op, ok := ir.LookupOp(a.Str)
		if !ok {
			return pt2schema.Argument{}, true, fmt.Errorf("unknown op %q", a.Str)
		}
		return pt2schema.Argument{Tag: pt2schema.TagOperator, Str: target(op)}, true, nil
	}
	return pt2schema.Argument{}, false, nil
}

// argument converts one node argument. elem is the schema type of the
// formal argument (used only to type empty lists); graph writes a region.
func (w *writer) argument(a ir.Arg, st *ir.SchemaType) (pt2schema.Argument, error) {
	if lit, ok, err := literal(a); ok {
		return lit, err
	}
	switch a.Kind {
	case ir.ArgValue:
		return valueRef(a.Value)
	case ir.ArgGraph:
		g := a.Graph
		return pt2schema.Argument{Tag: pt2schema.TagGraph, Graph: &pt2schema.GraphArgument{
			Name:  g.Name,
			Write: func(e *pt2schema.Encoder) error { return w.graph(e, g, false) },
		}}, nil
	case ir.ArgList:
		return w.list(a.List, st)
	}
	return pt2schema.Argument{}, fmt.Errorf("argument %s cannot be written", a)
}

// elemClass sorts list elements into the Argument list kinds.
type elemClass uint8

const (
	clsOther elemClass = iota
	clsNone
	clsInt
	clsFloat
	clsBool
	clsString
	clsTensor
	clsSymInt
	clsSymFloat
	clsSymBool
	clsList
)

func classify(a ir.Arg) elemClass {
	switch a.Kind {
	case ir.ArgNone:
		return clsNone
	case ir.ArgInt:
		return clsInt
	case ir.ArgFloat:
		return clsFloat
	case ir.ArgBool:
		return clsBool
	case ir.ArgString:
		return clsString
	case ir.ArgList:
		return clsList
	case ir.ArgValue:
		switch t := a.Value.Type.(type) {
		case *ir.TensorType, *ir.TokenType:
			return clsTensor
		case *ir.SymIntType:
			return clsSymInt
		case *ir.SymFloatType:
			return clsSymFloat
		case *ir.SymBoolType:
			return clsSymBool
		case *ir.ScalarType:
			switch t.Kind {
			case ir.IntKind:
				return clsSymInt
			case ir.FloatKind:
				return clsSymFloat
			case ir.BoolKind:
				return clsSymBool
			}
		}
	}
	return clsOther
}

// list picks the Argument list kind torch would use for the elements.
func (w *writer) list(elems []ir.Arg, st *ir.SchemaType) (pt2schema.Argument, error) {
	if len(elems) == 0 {
		tag := pt2schema.TagTensors
		if st != nil {
			switch st.Base {
			case ir.KInt, ir.KSymInt:
				tag = pt2schema.TagInts
			case ir.KFloat, ir.KSymFloat:
				tag = pt2schema.TagFloats
			case ir.KBool, ir.KSymBool:
				tag = pt2schema.TagBools
			case ir.KStr:
				tag = pt2schema.TagStrings
			}
		}
		return pt2schema.Argument{Tag: tag}, nil
	}
	count := map[elemClass]int{}
	for _, e := range elems {
		count[classify(e)]++
	}
	n := len(elems)
	only := func(cs ...elemClass) bool {
		s := 0
		for _, c := range cs {
			s += count[c]
		}
		return s == n
	}
	out := pt2schema.Argument{}
	switch {
	case only(clsInt):
		out.Tag = pt2schema.TagInts
		for _, e := range elems {
			out.Ints = append(out.Ints, e.Int)
		}
		return out, nil
	case only(clsFloat):
		out.Tag = pt2schema.TagFloats
		for _, e := range elems {
			out.Floats = append(out.Floats, e.Float)
		}
		return out, nil
	case only(clsBool):
		out.Tag = pt2schema.TagBools
		for _, e := range elems {
			out.Bools = append(out.Bools, e.Bool())
		}
		return out, nil
	case only(clsString):
		out.Tag = pt2schema.TagStrings
		for _, e := range elems {
			out.Strs = append(out.Strs, e.Str)
		}
		return out, nil
	case only(clsTensor):
		out.Tag = pt2schema.TagTensors
	case only(clsTensor, clsNone):
		out.Tag = pt2schema.TagOptionalTensors
	case only(clsSymInt, clsInt):
		out.Tag = pt2schema.TagSymInts
	case only(clsSymFloat, clsFloat):
		out.Tag = pt2schema.TagSymFloats
	case only(clsSymBool, clsBool):
		out.Tag = pt2schema.TagSymBools
	case only(clsList):
		return w.nestedList(elems)
	case only(clsTensor, clsSymInt, clsSymFloat, clsSymBool):
		// A list of values of different kinds (cond operands mixing tensors
		// and SymInts): torch writes every FX node as a TensorArgument name.
		out.Tag = pt2schema.TagTensors
		for _, e := range elems {
			out.Elems = append(out.Elems, pt2schema.Argument{Tag: pt2schema.TagTensor, Name: e.Value.Name})
		}
		return out, nil
	default:
		return out, fmt.Errorf("list %s mixes elements no .pt2 list kind holds", ir.ListArg(elems...))
	}
	for _, e := range elems {
		var x pt2schema.Argument
		var err error
		if e.Kind == ir.ArgValue {
			x, err = valueRef(e.Value)
			if err == nil && out.Tag == pt2schema.TagSymInts && x.Tag != pt2schema.TagSymInt {
				x.Tag = pt2schema.TagSymInt
			}
			if err == nil && out.Tag == pt2schema.TagSymFloats && x.Tag != pt2schema.TagSymFloat {
				x.Tag = pt2schema.TagSymFloat
			}
			if err == nil && out.Tag == pt2schema.TagSymBools && x.Tag != pt2schema.TagSymBool {
				x.Tag = pt2schema.TagSymBool
			}
		} else {
			x, _, err = literal(e)
		}
		if err != nil {
			return out, err
		}
		out.Elems = append(out.Elems, x)
	}
	return out, nil
}

// nestedList writes a list of lists (as_nested_tensors, as_int_lists, as_float_lists).
func (w *writer) nestedList(elems []ir.Arg) (pt2schema.Argument, error) {
	var inner []pt2schema.Argument
	for _, e := range elems {
		x, err := w.list(e.List, nil)
		if err != nil {
			return pt2schema.Argument{}, err
		}
		inner = append(inner, x)
	}
	kind := inner[0].Tag
	for _, x := range inner {
		if len(x.Elems) == 0 && len(x.Ints) == 0 && len(x.Floats) == 0 {
			continue // an empty inner list fits any kind
		}
		kind = x.Tag
		break
	}
	out := pt2schema.Argument{Elems: inner}
	switch kind {
	case pt2schema.TagTensors:
		out.Tag = pt2schema.TagNestedTensors
	case pt2schema.TagInts:
		out.Tag = pt2schema.TagIntLists
	case pt2schema.TagFloats:
		out.Tag = pt2schema.TagFloatLists
	default:
		return out, fmt.Errorf("list of lists of %s cannot be written", kind)
	}
	for i := range inner {
		empty := len(inner[i].Elems) == 0 && len(inner[i].Ints) == 0 && len(inner[i].Floats) == 0
		if empty {
			inner[i].Tag = kind
		} else if inner[i].Tag != kind {
			return out, fmt.Errorf("list of lists mixes %s and %s", kind, inner[i].Tag)
		}
	}
	return out, nil
}
