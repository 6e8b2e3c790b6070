package pt2

import (
	"fmt"

	"github.com/fxport/fxport/internal/pt2schema"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// lookupOp resolves a node target ("torch.ops.aten.add.Tensor",
// "_operator.add", "torch.ops.higher_order.cond", "math.ceil", …).
func (r *reader) lookupOp(target string) (ir.Op, bool) {
	if op, ok := r.ops[target]; ok {
		return op, true
	}
	op, ok := ir.LookupOp(target)
	if ok {
		r.ops[target] = op
	}
	return op, ok
}

// node converts one node and appends it to the graph.
func (r *reader) node(gs *graphState, n *pt2schema.Node, d *pt2schema.Decoder) error {
	op, known := r.lookupOp(n.Target)
	regions := map[string]*pt2schema.Decoder{}
	var args []ir.Arg
	var err error
	if known {
		args, err = r.bind(gs, op, n, d, regions)
	} else {
		op = ir.OpOpaqueCall
		args, err = r.opaqueArgs(gs, n, d)
	}
	if err != nil {
		return err
	}
	names, types, synth, err := r.outputs(gs, op, n, d)
	if err != nil {
		return err
	}
	node, err := gs.b.Raw(op, args, types, names)
	if err != nil {
		return at(d, ".outputs", "%v", err)
	}
	for _, k := range synth {
		gs.noteSynth(node.Results[k], op.Info().Base, -1)
	}
	for _, kv := range n.Metadata {
		node.Meta.Set(kv.Key, kv.Value)
	}
	if !known {
		node.Meta.Set("pt2.note", fmt.Sprintf("fxport does not know %s; the node is kept opaque", n.Target))
	}
	if len(regions) == 0 {
		return nil
	}
	attach := func(a ir.Arg) (ir.Arg, error) {
		if a.Kind != ir.ArgGraph || a.Graph != nil {
			return a, nil
		}
		body := regions[a.Str]
		region := node.NewRegion(a.Str)
		r.depth++
		defer func() { r.depth-- }()
		if r.depth > maxRegionDepth {
			return a, body.Errorf("subgraphs nested deeper than %d levels", maxRegionDepth)
		}
		if err := r.graph(region, body, nil, ""); err != nil {
			return a, err
		}
		return ir.GraphArg(region), nil
	}
	for i, a := range node.Args {
		if a.Kind == ir.ArgList {
			list := append([]ir.Arg(nil), a.List...)
			changed := false
			for j := range list {
				if list[j].Kind == ir.ArgGraph && list[j].Graph == nil {
					if list[j], err = attach(list[j]); err != nil {
						return err
					}
					changed = true
				}
			}
			if changed {
				node.SetArg(i, ir.ListArg(list...))
			}
			continue
		}
		if a.Kind == ir.ArgGraph && a.Graph == nil {
			g, err := attach(a)
			if err != nil {
				return err
			}
			node.SetArg(i, g)
		}
	}
	return nil
}

// opaqueArgs are the arguments of opaque.call.default for a node whose op
// fxport does not know, so that one unknown op never makes a program
// unreadable: the target as recorded, the input names (all passed by name),
// then the inputs. The results keep the types torch recorded; only a
// target's lowering may then refuse the node, naming the op.
func (r *reader) opaqueArgs(gs *graphState, n *pt2schema.Node, d *pt2schema.Decoder) ([]ir.Arg, error) {
	if n.Target == "" {
		return nil, at(d, ".target", "a node without a target")
	}
	names := make([]ir.Arg, len(n.Inputs))
	args := []ir.Arg{ir.StringArg(n.Target), {}}
	for j := range n.Inputs {
		names[j] = ir.StringArg(n.Inputs[j].Name)
		a, err := r.arg(gs, &n.Inputs[j].Arg, func() string { return fmt.Sprintf("%s.inputs[%d].arg", d.Path(), j) }, nil)
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	args[1] = ir.ListArg(names...)
	return args, nil
}

// bind converts the node's inputs and binds them to the op's schema,
// filling omitted defaults. ATen ops bind by argument name; higher-order
// ops take unnamed inputs positionally; Python-level ops (operator.*,
// math.*, torch.sym_*) take all inputs in order. with_effects and
// auto_functionalized bind the wrapped op's arguments to its schema.
func (r *reader) bind(gs *graphState, op ir.Op, n *pt2schema.Node, d *pt2schema.Decoder, regions map[string]*pt2schema.Decoder) ([]ir.Arg, error) {
	conv := func(j int) (ir.Arg, error) {
		return r.arg(gs, &n.Inputs[j].Arg, func() string { return fmt.Sprintf("%s.inputs[%d].arg", d.Path(), j) }, regions)
	}
	// split converts inputs[from:] into positional (unnamed) and keyword
	// (named) arguments. Named arguments that continue the positional ones
	// in schema order are passed positionally, which spares a map per node.
	split := func(from int, schemaOp ir.Op) ([]ir.Arg, map[string]ir.Arg, error) {
		var pos []ir.Arg
		var kw map[string]ir.Arg
		formals := schemaOp.Info().Schema.Args
		sawNamed := false
		for j := from; j < len(n.Inputs); j++ {
			in := &n.Inputs[j]
			a, err := conv(j)
			if err != nil {
				return nil, nil, err
			}
			if in.Name == "" {
				if sawNamed {
					return nil, nil, at(d, fmt.Sprintf(".inputs[%d]", j), "unnamed input after named ones")
				}
				pos = append(pos, a)
				continue
			}
			sawNamed = true
			idx := schemaOp.ArgIndex(in.Name)
			if idx < 0 && in.Name != "_all_bases" {
				return nil, nil, at(d, fmt.Sprintf(".inputs[%d].name", j), "%s has no argument %q", schemaOp, in.Name)
			}
			_, inKw := kw[in.Name]
			if inKw || idx >= 0 && idx < len(pos) {
				return nil, nil, at(d, fmt.Sprintf(".inputs[%d].name", j), "argument %q given twice", in.Name)
			}
			if idx == len(pos) && !formals[idx].KwargOnly && kw == nil {
				pos = append(pos, a)
				continue
			}
			if kw == nil {
				kw = map[string]ir.Arg{}
			}
			kw[in.Name] = a
		}
		return pos, kw, nil
	}
	bindErr := func(err error) error { return at(d, ".inputs", "%s: %v", n.Target, err) }
	switch op {
	case ir.OpHigherOrderWithEffects, ir.OpHigherOrderAutoFunctionalized, ir.OpHigherOrderAutoFunctionalizedV2:
		lead := 1
		if op == ir.OpHigherOrderWithEffects {
			lead = 2
		}
		if len(n.Inputs) < lead {
			return nil, at(d, ".inputs", "%s needs at least %d inputs", n.Target, lead)
		}
		head := make([]ir.Arg, lead)
		for j := range head {
			var err error
			if head[j], err = conv(j); err != nil {
				return nil, err
			}
		}
		opArg := head[lead-1]
		if opArg.Kind != ir.ArgOp {
			return nil, at(d, fmt.Sprintf(".inputs[%d].arg", lead-1), "%s wraps a %s, not an operator", n.Target, opArg.Kind)
		}
		wrapped, _ := ir.LookupOp(opArg.Str)
		pos, kw, err := split(lead, wrapped)
		if err != nil {
			return nil, err
		}
		if op == ir.OpHigherOrderAutoFunctionalizedV2 {
			bases, ok := kw["_all_bases"]
			if !ok {
				return nil, at(d, ".inputs", "%s has no _all_bases input", n.Target)
			}
			delete(kw, "_all_bases")
			head = append(head, bases)
		} else if _, ok := kw["_all_bases"]; ok {
			return nil, bindErr(fmt.Errorf("%s has no argument \"_all_bases\"", wrapped))
		}
		bound, err := ir.BindArgs(wrapped, pos, kw)
		if err != nil {
			return nil, bindErr(err)
		}
		return append(head, bound...), nil
	}
	if op.Info().Schema.VarArgs {
		args := make([]ir.Arg, len(n.Inputs))
		for j := range n.Inputs {
			if n.Inputs[j].Kind == pt2schema.KindKeyword {
				return nil, at(d, fmt.Sprintf(".inputs[%d]", j), "%s takes positional arguments only, got keyword %q", n.Target, n.Inputs[j].Name)
			}
			var err error
			if args[j], err = conv(j); err != nil {
				return nil, err
			}
		}
		return args, nil
	}
	pos, kw, err := split(0, op)
	if err != nil {
		return nil, err
	}
	if _, ok := kw["_all_bases"]; ok {
		return nil, bindErr(fmt.Errorf("%s has no argument \"_all_bases\"", op))
	}
	args, err := ir.BindArgs(op, pos, kw)
	if err != nil {
		return nil, bindErr(err)
	}
	return args, nil
}

// outputs lists the node's results: names (temporary ones for unnamed
// results, whose indices come back in synth) and the types known before the
// graph's tables are read.
func (r *reader) outputs(gs *graphState, op ir.Op, n *pt2schema.Node, d *pt2schema.Decoder) (names []string, types []ir.Type, synth []int, err error) {
	named := func(a *pt2schema.Argument, path string) error {
		if !validName(a.Name) {
			return at(d, path, "%q is not a valid value name", a.Name)
		}
		names = append(names, a.Name)
		var t ir.Type
		if a.Tag == pt2schema.TagCustomObj {
			t = &ir.OpaqueType{Class: a.Str}
		}
		types = append(types, t)
		return nil
	}
	unnamed := func(t ir.Type) {
		synth = append(synth, len(names))
		names = append(names, gs.tempName())
		types = append(types, t)
	}
	var one func(a *pt2schema.Argument, path string, inList bool) error
	one = func(a *pt2schema.Argument, path string, inList bool) error {
		switch a.Tag {
		case pt2schema.TagTensor, pt2schema.TagSymInt, pt2schema.TagSymBool, pt2schema.TagSymFloat, pt2schema.TagCustomObj:
			return named(a, path)
		case pt2schema.TagNone:
			unnamed(ir.None)
		case pt2schema.TagInt:
			unnamed(&ir.SymIntType{Expr: sym.Const(a.Int)})
		case pt2schema.TagBool:
			e := sym.False()
			if a.Bool {
				e = sym.True()
			}
			unnamed(&ir.SymBoolType{Expr: e})
		case pt2schema.TagFloat:
			unnamed(ir.SymFloat)
		case pt2schema.TagTensors, pt2schema.TagSymInts, pt2schema.TagSymBools, pt2schema.TagSymFloats, pt2schema.TagOptionalTensors:
			if inList {
				return at(d, path, "nested %s output", a.Tag)
			}
			for k := range a.Elems {
				if err := one(&a.Elems[k], fmt.Sprintf("%s.%s[%d]", path, a.Tag, k), true); err != nil {
					return err
				}
			}
		default:
			return at(d, path, "%s cannot be a node output", a.Tag)
		}
		return nil
	}
	for j := range n.Outputs {
		if err := one(&n.Outputs[j], fmt.Sprintf(".outputs[%d]", j), false); err != nil {
			return nil, nil, nil, err
		}
	}
	if op == ir.OpHigherOrderWithEffects && len(types) > 0 && types[0] == nil {
		types[0] = ir.Token
	}
	return names, types, synth, nil
}

// arg converts an argument; path gives its JSON path, for errors. regions collects the bodies of as_graph
// arguments (nil where subgraphs are not allowed).
func (r *reader) arg(gs *graphState, a *pt2schema.Argument, path func() string, regions map[string]*pt2schema.Decoder) (ir.Arg, error) {
	fail := func(format string, args ...any) (ir.Arg, error) {
		return ir.Arg{}, &pt2schema.Error{Path: path(), Msg: fmt.Sprintf(format, args...)}
	}
	list := func() (ir.Arg, error) {
		out := make([]ir.Arg, len(a.Elems))
		for k := range a.Elems {
			var err error
			elem := func() string { return fmt.Sprintf("%s.%s[%d]", path(), a.Tag, k) }
			if out[k], err = r.arg(gs, &a.Elems[k], elem, nil); err != nil {
				return ir.Arg{}, err
			}
		}
		return ir.ListArg(out...), nil
	}
	switch a.Tag {
	case pt2schema.TagNone:
		return ir.NoneArg(), nil
	case pt2schema.TagTensor, pt2schema.TagSymInt, pt2schema.TagSymBool, pt2schema.TagSymFloat, pt2schema.TagCustomObj:
		v := gs.g.Value(a.Name)
		if v == nil {
			return fail("undefined value %q (names must be defined before they are used)", a.Name)
		}
		return ir.ValueArg(v), nil
	case pt2schema.TagTensors, pt2schema.TagSymInts, pt2schema.TagSymBools, pt2schema.TagSymFloats,
		pt2schema.TagOptionalTensors, pt2schema.TagNestedTensors, pt2schema.TagIntLists, pt2schema.TagFloatLists:
		return list()
	case pt2schema.TagInt:
		return ir.IntArg(a.Int), nil
	case pt2schema.TagFloat:
		return ir.FloatArg(a.Float), nil
	case pt2schema.TagBool:
		return ir.BoolArg(a.Bool), nil
	case pt2schema.TagString:
		return ir.StringArg(a.Str), nil
	case pt2schema.TagInts:
		return ir.IntsArg(a.Ints...), nil
	case pt2schema.TagFloats:
		out := make([]ir.Arg, len(a.Floats))
		for k, f := range a.Floats {
			out[k] = ir.FloatArg(f)
		}
		return ir.ListArg(out...), nil
	case pt2schema.TagBools:
		out := make([]ir.Arg, len(a.Bools))
		for k, b := range a.Bools {
			out[k] = ir.BoolArg(b)
		}
		return ir.ListArg(out...), nil
	case pt2schema.TagStrings:
		out := make([]ir.Arg, len(a.Strs))
		for k, s := range a.Strs {
			out[k] = ir.StringArg(s)
		}
		return ir.ListArg(out...), nil
	case pt2schema.TagScalarType:
		dt, err := dtype(a.Int)
		if err != nil {
			return fail("%v", err)
		}
		return ir.DTypeArg(dt), nil
	case pt2schema.TagMemoryFormat:
		if a.Int < 0 || a.Int >= int64(len(pt2schema.MemoryFormatNames)) {
			return fail("unknown MemoryFormat code %d", a.Int)
		}
		return ir.MemoryFormatArg(ir.MemoryFormat(a.Int)), nil
	case pt2schema.TagLayout:
		if a.Int < 0 || a.Int >= int64(len(pt2schema.LayoutNames)) {
			return fail("unknown Layout code %d", a.Int)
		}
		return ir.LayoutArg(ir.Layout(a.Int)), nil
	case pt2schema.TagDevice:
		s, err := argDevice(a.Device)
		if err != nil {
			return fail("%v", err)
		}
		return ir.DeviceArg(s), nil
	case pt2schema.TagOperator:
		op, ok := r.lookupOp(a.Str)
		if !ok {
			return fail("unknown operator %q", a.Str)
		}
		return ir.OpArg(op), nil
	case pt2schema.TagGraph:
		if regions == nil {
			return fail("a subgraph is not allowed here")
		}
		if !validName(a.Graph.Name) {
			return fail("%q is not a valid subgraph name", a.Graph.Name)
		}
		if _, dup := regions[a.Graph.Name]; dup {
			return fail("two subgraphs of one node are named %q", a.Graph.Name)
		}
		regions[a.Graph.Name] = a.Graph.Body
		return ir.Arg{Kind: ir.ArgGraph, Str: a.Graph.Name}, nil
	case pt2schema.TagComplex:
		return fail("complex literals (as_complex) are not supported by the IR")
	case pt2schema.TagStringToArgument:
		return fail("dict arguments (as_string_to_argument) are not supported by the IR")
	}
	return fail("unsupported argument %s", a.Tag)
}
