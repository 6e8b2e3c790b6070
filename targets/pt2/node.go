package pt2

import (
	"fmt"

	"github.com/fxport/fxport/internal/pt2schema"
	"github.com/fxport/fxport/ir"
)

// node writes one Node. taken holds the names used in n's graph (values and
// node names so far).
func (w *writer) node(e *pt2schema.Encoder, n *ir.Node, taken *names) error {
	sn := pt2schema.Node{Target: target(n.Op)}
	var err error
	if sn.Inputs, err = w.inputs(n); err != nil {
		return n.Errorf("%v", err)
	}
	if sn.Outputs, err = outputs(n); err != nil {
		return n.Errorf("%v", err)
	}
	for _, kv := range n.Meta.Entries() {
		sn.Metadata = append(sn.Metadata, pt2schema.KV{Key: kv.Key, Value: kv.Value})
	}
	sn.Name = nodeName(n, sn.Outputs, taken)
	return pt2schema.EncodeNode(e, &sn)
}

// nodeName is a node's FX name: its result's name when the node writes one
// direct result, as torch does; otherwise (several results, a list, none) a
// fresh name from the op ("topk", "topk_1", …), as torch names such nodes.
// torch.export.load rebuilds one getitem node per result under the result's
// name, so the call node must not take any of those names.
func nodeName(n *ir.Node, outs []pt2schema.Argument, taken *names) *string {
	if len(n.Results) == 1 && len(outs) == 1 && outs[0].Tag != pt2schema.TagTensors {
		name := n.Results[0].Name
		return &name
	}
	base := n.Op.Info().Base
	if base == "" {
		base = "node"
	}
	name := taken.fresh(base)
	return &name
}

// names is the set of names taken in one graph, with, per base, where its
// last fresh name was found: names are only ever added, so every candidate
// before it is still taken, and the next search starts after it. Starting at 1 each
// time made naming the k-th node of one op O(k) (a stack of thousands of
// batch norms, each with three results).
type names struct {
	taken map[string]bool
	next  map[string]int
}

func newNames() *names { return &names{taken: map[string]bool{}, next: map[string]int{}} }

// add takes name.
func (s *names) add(name string) { s.taken[name] = true }

// fresh takes and returns the first free name of base, base_1, base_2, …
func (s *names) fresh(base string) string {
	for pos := s.next[base]; ; pos++ {
		name := base
		if pos > 0 {
			name = fmt.Sprintf("%s_%d", base, pos)
		}
		if !s.taken[name] {
			s.taken[name] = true
			s.next[base] = pos + 1
			return name
		}
	}
}

// isDefault reports whether a equals the schema default of formal.
func isDefault(formal ir.ArgSchema, a ir.Arg) bool {
	if !formal.HasDefault() || a.Kind == ir.ArgValue || a.Kind == ir.ArgGraph {
		return false
	}
	d, err := ir.ParseDefault(formal.Type, formal.Default)
	return err == nil && !containsValue(a) && a.Equal(d)
}

func containsValue(a ir.Arg) bool {
	return len(a.Values()) > 0
}

// inputs writes a node's arguments the way torch.export does: ATen ops by
// schema name, leaving out arguments at their default, keyword-only ones
// marked keyword; higher-order ops positionally and unnamed; Python-level
// ops positionally under their parameter names; the ops with_effects and
// auto_functionalized wrap with their own schema's names.
func (w *writer) inputs(n *ir.Node) ([]pt2schema.NamedArgument, error) {
	info := n.Op.Info()
	s := &info.Schema
	var out []pt2schema.NamedArgument
	add := func(name string, a ir.Arg, st *ir.SchemaType, kind int64) error {
		x, err := w.argument(a, st)
		if err != nil {
			if name != "" {
				return fmt.Errorf("argument %q: %v", name, err)
			}
			return fmt.Errorf("argument %d: %v", len(out), err)
		}
		out = append(out, pt2schema.NamedArgument{Name: name, Arg: x, Kind: kind})
		return nil
	}
	// wrapped writes the arguments of the op a higher-order op wraps.
	wrapped := func(opArg ir.Arg, args []ir.Arg, allKeyword bool) error {
		op, ok := ir.LookupOp(opArg.Str)
		if opArg.Kind != ir.ArgOp || !ok {
			return fmt.Errorf("%s wraps %s, not an operator", info.Name, opArg)
		}
		ws := &op.Info().Schema
		if ws.VarArgs || len(args) != len(ws.Args) {
			return fmt.Errorf("%s: wrapped op %s takes %d arguments, the node has %d", info.Name, op, len(ws.Args), len(args))
		}
		lastPos := -1
		for i, f := range ws.Args {
			if !f.KwargOnly && !isDefault(f, args[i]) {
				lastPos = i
			}
		}
		for i, f := range ws.Args {
			st := f.Type
			switch {
			case !allKeyword && !f.KwargOnly && i <= lastPos:
				if err := add("", args[i], &st, pt2schema.KindPositional); err != nil {
					return err
				}
			case (allKeyword || f.KwargOnly) && !isDefault(f, args[i]):
				if err := add(f.Name, args[i], &st, pt2schema.KindKeyword); err != nil {
					return err
				}
			}
		}
		return nil
	}
	switch n.Op {
	case ir.OpHigherOrderWithEffects:
		if len(n.Args) < 2 {
			return nil, fmt.Errorf("with_effects needs a token and an op")
		}
		for _, a := range n.Args[:2] {
			if err := add("", a, nil, pt2schema.KindPositional); err != nil {
				return nil, err
			}
		}
		return out, wrapped(n.Args[1], n.Args[2:], false)
	case ir.OpHigherOrderAutoFunctionalized, ir.OpHigherOrderAutoFunctionalizedV2:
		lead := 1
		if n.Op == ir.OpHigherOrderAutoFunctionalizedV2 {
			lead = 2
		}
		if len(n.Args) < lead {
			return nil, fmt.Errorf("%s needs an op", info.Name)
		}
		if err := add("", n.Args[0], nil, pt2schema.KindPositional); err != nil {
			return nil, err
		}
		if lead == 2 {
			st := ir.SchemaType{Base: ir.KTensor, List: true}
			if err := add("_all_bases", n.Args[1], &st, pt2schema.KindKeyword); err != nil {
				return nil, err
			}
		}
		return out, wrapped(n.Args[0], n.Args[lead:], true)
	}
	hop := n.Op.Has(ir.PropHigherOrder)
	if s.VarArgs || hop {
		for i, a := range n.Args {
			name := ""
			var st *ir.SchemaType
			if i < len(s.Args) {
				st = &s.Args[i].Type
				if !hop {
					name = s.Args[i].Name
				}
			}
			if err := add(name, a, st, pt2schema.KindPositional); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if len(n.Args) != len(s.Args) {
		return nil, fmt.Errorf("%d arguments for a schema of %d", len(n.Args), len(s.Args))
	}
	// torch's deserializer appends positional inputs in order: once an
	// argument is left out at its default, the ones after it must be
	// keyword inputs (_assert_tensor_metadata(%x, dtype=...) skips size
	// and stride).
	gap := false
	for i, f := range s.Args {
		if isDefault(f, n.Args[i]) {
			gap = true
			continue
		}
		kind := int64(pt2schema.KindPositional)
		if f.KwargOnly || gap {
			kind = pt2schema.KindKeyword
		}
		st := f.Type
		if err := add(f.Name, n.Args[i], &st, kind); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// outputs writes a node's results: one Argument per result, except that an
// ATen op returning one list (Tensor[], SymInt[]) has them in one list.
func outputs(n *ir.Node) ([]pt2schema.Argument, error) {
	s := &n.Op.Info().Schema
	one := func(v *ir.Value) (pt2schema.Argument, error) {
		if _, ok := v.Type.(*ir.NoneType); ok {
			return pt2schema.Argument{Tag: pt2schema.TagNone}, nil
		}
		return valueRef(v)
	}
	listRet := !s.VarArgs && !n.Op.Has(ir.PropHigherOrder) && len(s.Returns) == 1 && s.Returns[0].Type.List
	if listRet {
		out := pt2schema.Argument{Tag: pt2schema.TagTensors}
		count := map[pt2schema.ArgTag]int{}
		for _, r := range n.Results {
			a, err := one(r)
			if err != nil {
				return nil, err
			}
			count[a.Tag]++
			out.Elems = append(out.Elems, a)
		}
		k := len(n.Results)
		switch {
		case count[pt2schema.TagTensor] == k && (k > 0 || s.Returns[0].Type.Base == ir.KTensor):
		case count[pt2schema.TagSymInt] == k:
			out.Tag = pt2schema.TagSymInts
		case count[pt2schema.TagTensor]+count[pt2schema.TagNone] == k:
			out.Tag = pt2schema.TagOptionalTensors
		default:
			return nil, fmt.Errorf("results of %s do not form one list kind", n.Op)
		}
		return []pt2schema.Argument{out}, nil
	}
	out := make([]pt2schema.Argument, 0, len(n.Results))
	for _, r := range n.Results {
		a, err := one(r)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
