package dynamo

import (
	"fmt"
	"sort"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// SubstSymbols replaces symbols by expressions (simultaneously, with
// sym.Expr.Subst) in every type of the program: graph inputs and node
// results of the main graph and of every region, and the weights. The Env
// is left alone (see RenameSymbols). It reports whether a type changed; a
// substitution that makes an expression invalid (a boolean for an integer)
// is an error naming the value.
func SubstSymbols(p *ir.Program, m map[string]sym.Expr) (bool, error) {
	if len(m) == 0 {
		return false, nil
	}
	changed := false
	for _, g := range p.Graphs() {
		vals := append([]*ir.Value(nil), g.Inputs...)
		for _, n := range g.Nodes() {
			vals = append(vals, n.Results...)
		}
		for _, v := range vals {
			t, c, err := substType(v.Type, m)
			if err != nil {
				return changed, fmt.Errorf("graph %s: value %s: %w", g.Name, v, err)
			}
			if c {
				v.SetType(t)
				changed = true
			}
		}
	}
	for _, w := range p.Weights {
		t, c, err := substType(w.Type, m)
		if err != nil {
			return changed, fmt.Errorf("weight %q: %w", w.Name, err)
		}
		if c {
			w.Type = t.(*ir.TensorType)
			changed = true
		}
	}
	return changed, nil
}

// substType rebuilds t with m substituted; types are immutable, so a changed
// type is a new value.
func substType(t ir.Type, m map[string]sym.Expr) (ir.Type, bool, error) {
	subst := func(e sym.Expr) (sym.Expr, bool, error) {
		if !e.IsValid() {
			return e, false, nil
		}
		r := e.Subst(m)
		if !r.IsValid() || r.IsInt() != e.IsInt() {
			return e, false, fmt.Errorf("substituting into %s gives an invalid expression", e)
		}
		return r, !r.Equal(e), nil
	}
	switch t := t.(type) {
	case *ir.TensorType:
		var shape []sym.Expr
		for i, d := range t.Shape {
			r, c, err := subst(d)
			if err != nil {
				return t, false, fmt.Errorf("dim %d: %w", i, err)
			}
			if c && shape == nil {
				shape = append([]sym.Expr(nil), t.Shape...)
			}
			if shape != nil {
				shape[i] = r
			}
		}
		if shape == nil {
			return t, false, nil
		}
		nt := *t
		nt.Shape = shape
		return &nt, true, nil
	case *ir.SymIntType:
		r, c, err := subst(t.Expr)
		if err != nil || !c {
			return t, false, err
		}
		return &ir.SymIntType{Expr: r}, true, nil
	case *ir.SymBoolType:
		r, c, err := subst(t.Expr)
		if err != nil || !c {
			return t, false, err
		}
		return &ir.SymBoolType{Expr: r}, true, nil
	case *ir.ListType:
		e, c, err := substType(t.Elem, m)
		if err != nil || !c {
			return t, false, err
		}
		return &ir.ListType{Elem: e}, true, nil
	case *ir.OptionalType:
		e, c, err := substType(t.Elem, m)
		if err != nil || !c {
			return t, false, err
		}
		return &ir.OptionalType{Elem: e}, true, nil
	case *ir.TupleType:
		var elems []ir.Type
		for i, el := range t.Elems {
			e, c, err := substType(el, m)
			if err != nil {
				return t, false, fmt.Errorf("tuple element %d: %w", i, err)
			}
			if c && elems == nil {
				elems = append([]ir.Type(nil), t.Elems...)
			}
			if elems != nil {
				elems[i] = e
			}
		}
		if elems == nil {
			return t, false, nil
		}
		return &ir.TupleType{Elems: elems}, true, nil
	}
	return t, false, nil
}

// RenameSymbols renames symbols everywhere in the program: in every type
// (SubstSymbols) and in the Env, whose range, hint and unbacked flag move to
// the new name. Renames apply simultaneously (s0→s1 with s1→s0 swaps). A new
// name must be a valid symbol name and must not be a symbol of the program
// that keeps its name.
func RenameSymbols(p *ir.Program, renames map[string]string) (bool, error) {
	if len(renames) == 0 {
		return false, nil
	}
	used := programSymbols(p)
	targets := map[string]string{}
	for _, old := range sortedKeys(renames) {
		nw := renames[old]
		if !sym.ValidName(nw) {
			return false, fmt.Errorf("cannot rename %s: %q is not a valid symbol name", old, nw)
		}
		if prev, dup := targets[nw]; dup {
			return false, fmt.Errorf("cannot rename both %s and %s to %s", prev, old, nw)
		}
		targets[nw] = old
		if _, renamed := renames[nw]; used[nw] && !renamed && nw != old {
			return false, fmt.Errorf("cannot rename %s to %s: %s is already a symbol of the program", old, nw, nw)
		}
	}
	m := map[string]sym.Expr{}
	for old, nw := range renames {
		if old != nw {
			m[old] = sym.Sym(nw)
		}
	}
	if len(m) == 0 {
		return false, nil
	}
	if _, err := SubstSymbols(p, m); err != nil {
		return false, err
	}
	env := sym.NewEnv()
	for _, s := range p.Env.Symbols() {
		r, _ := p.Env.Range(s)
		var hint *int64
		if h, ok := p.Env.Hint(s); ok {
			hint = &h
		}
		name := s
		if nw, ok := renames[s]; ok {
			name = nw
		}
		env.Declare(name, r, hint, p.Env.IsUnbacked(s))
	}
	p.Env = env
	return true, nil
}

// programSymbols lists every symbol the Env declares or a type mentions.
func programSymbols(p *ir.Program) map[string]bool {
	out := map[string]bool{}
	for _, s := range p.Env.Symbols() {
		out[s] = true
	}
	var addType func(t ir.Type)
	addExpr := func(e sym.Expr) {
		if e.IsValid() {
			for _, s := range e.Symbols() {
				out[s] = true
			}
		}
	}
	addType = func(t ir.Type) {
		switch t := t.(type) {
		case *ir.TensorType:
			for _, d := range t.Shape {
				addExpr(d)
			}
		case *ir.SymIntType:
			addExpr(t.Expr)
		case *ir.SymBoolType:
			addExpr(t.Expr)
		case *ir.ListType:
			addType(t.Elem)
		case *ir.OptionalType:
			addType(t.Elem)
		case *ir.TupleType:
			for _, e := range t.Elems {
				addType(e)
			}
		}
	}
	for _, g := range p.Graphs() {
		for _, v := range g.Inputs {
			addType(v.Type)
		}
		for _, n := range g.Nodes() {
			for _, r := range n.Results {
				addType(r.Type)
			}
		}
	}
	for _, w := range p.Weights {
		addType(w.Type)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
