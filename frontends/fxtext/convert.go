package fxtext

import (
	"fmt"
	"strconv"

	"github.com/fxport/fxport/ir"
)

// Argument conversion: the printed forms lose the types of literals (the
// graph form prints strings, dtypes and devices bare; every form prints
// 1 for 1.0 where torch allows it); the op schema's argument types restore them.

var anyType = ir.SchemaType{Base: ir.KAny}

// argType is the schema type of positional argument i (Any past a vararg schema's named arguments).
func argType(s *ir.Schema, i int) ir.SchemaType {
	if i < len(s.Args) {
		return s.Args[i].Type
	}
	return anyType
}

// call converts a call's arguments against op's schema, builds the regions
// of higher-order ops, binds and emits the node.
func (gb *gbuild) call(st *fxStmt, op ir.Op, posE []*expr, keys []string, kwE []*expr) error {
	bound, pending, err := gb.bindCall(st, op, posE, keys, kwE)
	if err != nil {
		return err
	}
	return gb.finishCall(st, op, bound, pending)
}

// bindCall converts and binds a call's arguments; it changes nothing.
func (gb *gbuild) bindCall(st *fxStmt, op ir.Op, posE []*expr, keys []string, kwE []*expr) ([]ir.Arg, []pendingRegion, error) {
	info := op.Info()
	s := &info.Schema
	posE = repairWords(s, posE)
	posE = splatOperands(op, posE)
	var pending []pendingRegion
	pos := make([]ir.Arg, len(posE))
	for i, e := range posE {
		t := argType(s, i)
		if !s.VarArgs && i >= len(s.Args) {
			return nil, nil, gb.nodeErr(st, "%s takes %d arguments, got %d", info.Name, len(s.Args), len(posE))
		}
		a, err := gb.convert(e, t, &pending)
		if err != nil {
			return nil, nil, gb.nodeErr(st, "argument %s: %v", argLabel(s, i), err)
		}
		pos[i] = a
	}
	var kw map[string]ir.Arg
	for i, k := range keys {
		ai := op.ArgIndex(k)
		if ai < 0 {
			return nil, nil, gb.nodeErr(st, "%s has no argument %q", info.Name, k)
		}
		a, err := gb.convert(kwE[i], s.Args[ai].Type, &pending)
		if err != nil {
			return nil, nil, gb.nodeErr(st, "argument %q: %v", k, err)
		}
		if kw == nil {
			kw = map[string]ir.Arg{}
		}
		kw[k] = a
	}
	bound, err := ir.BindArgs(op, pos, kw)
	if err != nil {
		return nil, nil, gb.nodeErr(st, "%v", err)
	}
	return bound, pending, nil
}

// finishCall builds the regions of a bound call and emits its node.
func (gb *gbuild) finishCall(st *fxStmt, op ir.Op, bound []ir.Arg, pending []pendingRegion) error {
	if len(pending) > 0 {
		if err := gb.buildRegions(st, op, bound, pending); err != nil {
			return err
		}
	}
	return gb.emitCall(st, op, bound)
}

func argLabel(s *ir.Schema, i int) string {
	if i < len(s.Args) {
		return fmt.Sprintf("%d (%s)", i, s.Args[i].Name)
	}
	return strconv.Itoa(i)
}

// pendingRegion is a subgraph argument whose region is built once the
// node's other arguments (its operands) are known.
type pendingRegion struct {
	mod  *fxModule
	attr string
}

func isNoneExpr(e *expr) bool {
	return (e.kind == eName || e.kind == eWord) && e.name == "None"
}

// convert reads e as an argument of schema type t.
func (gb *gbuild) convert(e *expr, t ir.SchemaType, pending *[]pendingRegion) (ir.Arg, error) {
	if isNoneExpr(e) {
		if !t.Optional && t.Base != ir.KAny && t.Base != ir.KNone {
			return ir.Arg{}, fmt.Errorf("None for a non-optional %s", t)
		}
		return ir.NoneArg(), nil
	}
	if t.List {
		return gb.convertList(e, t, pending)
	}
	return gb.convertScalar(e, t.Base, pending)
}

func (gb *gbuild) convertList(e *expr, t ir.SchemaType, pending *[]pendingRegion) (ir.Arg, error) {
	elem := ir.SchemaType{Base: t.Base, Optional: t.ElemOptional}
	switch e.kind {
	case eTuple, eList:
		out := make([]ir.Arg, len(e.elems))
		for i, x := range e.elems {
			a, err := gb.convert(x, elem, pending)
			if err != nil {
				return ir.Arg{}, fmt.Errorf("element %d: %w", i, err)
			}
			out[i] = a
		}
		return ir.ListArg(out...), nil
	case eName, eRef:
		if b, ok := gb.lookup(e); ok {
			switch b.kind {
			case bTuple:
				return ir.ValuesArg(b.values()...), nil
			case bValue:
				// A SymInt where SymInt[] is expected, or a list-typed value.
				return ir.ValueArg(b.value), nil
			case bModule:
				return ir.Arg{}, fmt.Errorf("%s is a subgraph, expected a list", e.name)
			}
			return ir.NoneArg(), nil
		}
	case eInt, eWord:
		if t.Base == ir.KInt || t.Base == ir.KSymInt {
			a, err := gb.convertScalar(e, t.Base, pending)
			if err != nil {
				return ir.Arg{}, err
			}
			if t.ListLen > 0 {
				// torch repeats a bare int for int[N].
				l := make([]ir.Arg, t.ListLen)
				for i := range l {
					l[i] = a
				}
				return ir.ListArg(l...), nil
			}
			return a, nil
		}
	}
	return ir.Arg{}, fmt.Errorf("expected a list (%s), got %s", t, describeExpr(e))
}

func describeExpr(e *expr) string {
	if t := e.text(); t != "" {
		return strconv.Quote(clip(t))
	}
	if e.kind == eWord || e.kind == eName || e.kind == eRef {
		return strconv.Quote(e.name)
	}
	return "a value"
}

// convertScalar reads e as a non-list argument of base type k.
func (gb *gbuild) convertScalar(e *expr, k ir.BaseKind, pending *[]pendingRegion) (ir.Arg, error) {
	if b, ok := gb.lookup(e); ok {
		return gb.fromBinding(e, b, k, pending)
	}
	if e.kind == eRef {
		return ir.Arg{}, fmt.Errorf("undefined node %%%s", e.name)
	}
	if e.kind == eWord {
		return gb.word(e.name, k)
	}
	if k == ir.KAny && (e.kind == eTuple || e.kind == eList) {
		return gb.convertList(e, ir.SchemaType{Base: ir.KAny, List: true}, pending)
	}
	a, err := gb.literalArg(e)
	if err != nil {
		return ir.Arg{}, err
	}
	return gb.coerce(a, k, e)
}

// fromBinding converts a name bound in the graph.
func (gb *gbuild) fromBinding(e *expr, b binding, k ir.BaseKind, pending *[]pendingRegion) (ir.Arg, error) {
	switch b.kind {
	case bValue:
		if k == ir.KTensor && ir.AsTensor(b.value.Type) == nil && !ir.IsUnknown(b.value.Type) {
			return ir.Arg{}, fmt.Errorf("%s has type %s, expected a tensor", e.name, b.value.Type)
		}
		return ir.ValueArg(b.value), nil
	case bTuple:
		if k == ir.KAny {
			return ir.ValuesArg(b.values()...), nil
		}
		return ir.Arg{}, fmt.Errorf("%s is a tuple of %d results; select one with getitem", e.name, len(b.elems))
	case bModule:
		if k != ir.KGraph && k != ir.KAny {
			return ir.Arg{}, fmt.Errorf("%s is a subgraph, expected a %s", e.name, k)
		}
		*pending = append(*pending, pendingRegion{mod: b.mod, attr: b.attr})
		return ir.Arg{Kind: ir.ArgGraph, Str: b.attr}, nil
	}
	if k != ir.KAny && k != ir.KNone {
		return ir.Arg{}, fmt.Errorf("%s comes from a node that returns nothing", e.name)
	}
	return ir.NoneArg(), nil
}

// coerce fits a literal to the schema base type.
func (gb *gbuild) coerce(a ir.Arg, k ir.BaseKind, e *expr) (ir.Arg, error) {
	bad := func() (ir.Arg, error) {
		return ir.Arg{}, fmt.Errorf("expected a %s, got %s", k, describeExpr(e))
	}
	switch k {
	case ir.KAny, ir.KNone:
		return a, nil
	case ir.KTensor:
		switch a.Kind {
		case ir.ArgInt, ir.ArgFloat, ir.ArgBool:
			return a, nil // a wrapped number, kept as torch printed it (the IR allows it)
		}
		return bad()
	case ir.KInt, ir.KSymInt:
		if a.Kind == ir.ArgInt || a.Kind == ir.ArgBool {
			return a, nil
		}
	case ir.KFloat, ir.KSymFloat:
		switch a.Kind {
		case ir.ArgFloat:
			return a, nil
		case ir.ArgInt:
			return ir.FloatArg(float64(a.Int)), nil
		}
	case ir.KBool, ir.KSymBool:
		if a.Kind == ir.ArgBool {
			return a, nil
		}
	case ir.KScalar:
		switch a.Kind {
		case ir.ArgInt, ir.ArgFloat, ir.ArgBool:
			return a, nil
		}
	case ir.KStr:
		if a.Kind == ir.ArgString {
			return a, nil
		}
	case ir.KScalarType:
		if a.Kind == ir.ArgDType {
			return a, nil
		}
	case ir.KLayout:
		if a.Kind == ir.ArgLayout {
			return a, nil
		}
	case ir.KMemoryFormat:
		if a.Kind == ir.ArgMemoryFormat {
			return a, nil
		}
	case ir.KDevice:
		switch a.Kind {
		case ir.ArgDevice:
			return a, nil
		case ir.ArgString:
			if isDeviceName(a.Str) {
				return ir.DeviceArg(a.Str), nil
			}
		}
	}
	return bad()
}
