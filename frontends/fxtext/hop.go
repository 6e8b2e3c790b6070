package fxtext

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// buildRegions builds the subgraph arguments of a higher-order op node from
// their classes. A subgraph's inputs are typed from its annotations, or
// else from the operands the op passes it (cond's operands, while_loop's
// carried and additional inputs, map's and scan's slices, a wrapper's
// arguments).
func (gb *gbuild) buildRegions(st *fxStmt, op ir.Op, bound []ir.Arg, pending []pendingRegion) error {
	mods := map[string]*fxModule{}
	for _, p := range pending {
		mods[p.attr] = p.mod
	}
	probe := &ir.Node{Op: op, Graph: gb.g}
	used := map[string]bool{}
	var fill func(a *ir.Arg, argName string) error
	fill = func(a *ir.Arg, argName string) error {
		if a.Kind == ir.ArgList {
			for j := range a.List {
				if err := fill(&a.List[j], argName); err != nil {
					return err
				}
			}
			return nil
		}
		if a.Kind != ir.ArgGraph || a.Graph != nil {
			return nil
		}
		m := mods[a.Str]
		if m == nil {
			return gb.nodeErr(st, "subgraph %s not found", a.Str)
		}
		name := a.Str
		for i := 1; used[name]; i++ {
			name = fmt.Sprintf("%s_%d", a.Str, i)
		}
		used[name] = true
		r := probe.NewRegion(name)
		sub := newGraphBuilder(gb.builder, r, m, false)
		what := fmt.Sprintf("subgraph %s of %s", a.Str, nodeLabel(st))
		if err := sub.build(regionInputs(op, argName, bound), what); err != nil {
			return err
		}
		a.Graph = r
		return nil
	}
	s := &op.Info().Schema
	for i := range bound {
		argName := ""
		if i < len(s.Args) {
			argName = s.Args[i].Name
		}
		if err := fill(&bound[i], argName); err != nil {
			return err
		}
	}
	return nil
}

func nodeLabel(st *fxStmt) string {
	if st.name == "" {
		return "a node"
	}
	return "%" + st.name
}

// regionInputs is what a higher-order op passes to the subgraph in argName,
// or nil when fxtext does not know (the subgraph must be annotated).
func regionInputs(op ir.Op, argName string, args []ir.Arg) []ir.Type {
	get := func(name string) []ir.Type {
		i := op.ArgIndex(name)
		if i < 0 || i >= len(args) {
			return nil
		}
		return elemTypes(args[i])
	}
	join := func(parts ...[]ir.Type) []ir.Type {
		out := []ir.Type{}
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	switch op.Info().Name {
	case "higher_order.cond":
		return join(get("operands"))
	case "higher_order.while_loop":
		return join(get("carried_inputs"), get("additional_inputs"))
	case "higher_order.map_impl":
		return join(sliced(get("xs")), get("pos_args"))
	case "higher_order.scan":
		return join(get("init"), sliced(get("xs")), get("additional_inputs"))
	}
	s := &op.Info().Schema
	if s.VarArgs && op.ArgIndex(argName) >= 0 && len(args) >= len(s.Args) {
		// wrap_with_set_grad_enabled, wrap_with_autocast, invoke_subgraph:
		// the operands after the named arguments.
		var out []ir.Type
		for _, a := range args[len(s.Args):] {
			out = append(out, argValueType(a))
		}
		return join(out)
	}
	return nil
}

// elemTypes is the types of a list argument's elements (or of a single value).
func elemTypes(a ir.Arg) []ir.Type {
	if a.Kind == ir.ArgList {
		out := make([]ir.Type, len(a.List))
		for i, e := range a.List {
			out[i] = argValueType(e)
		}
		return out
	}
	if a.Kind == ir.ArgNone {
		return nil
	}
	return []ir.Type{argValueType(a)}
}

// argValueType is the type of an operand or a literal.
func argValueType(a ir.Arg) ir.Type {
	switch a.Kind {
	case ir.ArgValue:
		return a.Value.Type
	case ir.ArgInt:
		return ir.IntType
	case ir.ArgFloat:
		return ir.FloatType
	case ir.ArgBool:
		return ir.BoolType
	case ir.ArgString:
		return ir.StringType
	case ir.ArgList:
		ts := elemTypes(a)
		if len(ts) > 0 {
			return &ir.ListType{Elem: ts[0]}
		}
	}
	return ir.None
}

// sliced drops the leading (mapped or scanned) dim of tensor types.
func sliced(ts []ir.Type) []ir.Type {
	out := make([]ir.Type, len(ts))
	for i, t := range ts {
		if tt := ir.AsTensor(t); tt != nil && tt.Rank() > 0 {
			out[i] = tt.WithShape(append([]sym.Expr(nil), tt.Shape[1:]...))
			continue
		}
		out[i] = t
	}
	return out
}
