package ir

import (
	"fmt"
)

// Builder inserts nodes into a graph at an insertion point, binding
// arguments to the op schema, filling defaults and inferring result types.
// Nodes it makes carry the builder's Pass in their provenance.
type Builder struct {
	g      *Graph
	before *Node // insert before this node; nil appends
	// Pass, when set, is recorded in the provenance of every node built.
	Pass string
	// Meta, when set, is copied onto every node built (e.g. the stack trace
	// of the node being rewritten).
	Meta *Meta
}

// NewBuilder returns a builder that appends to g.
func NewBuilder(g *Graph) *Builder { return &Builder{g: g} }

// Graph is the graph being built.
func (b *Builder) Graph() *Graph { return b.g }

// SetInsertBefore makes following nodes go just before n.
func (b *Builder) SetInsertBefore(n *Node) { b.g, b.before = n.Graph, n }

// SetInsertAfter makes following nodes go just after n (in order).
func (b *Builder) SetInsertAfter(n *Node) { b.g, b.before = n.Graph, n.next }

// SetInsertAtEnd makes following nodes be appended.
func (b *Builder) SetInsertAtEnd() { b.before = nil }

// Call builds op applied to positional arguments, with defaults filled and
// result types inferred. It returns the node.
func (b *Builder) Call(op Op, args ...Arg) (*Node, error) {
	return b.CallKw(op, args, nil)
}

// CallKw builds op with positional and keyword arguments.
func (b *Builder) CallKw(op Op, pos []Arg, kw map[string]Arg) (*Node, error) {
	bound, err := BindArgs(op, pos, kw)
	if err != nil {
		return nil, err
	}
	n, err := b.g.newNode(op, bound, nil, nil)
	if err != nil {
		return nil, err
	}
	types, err := InferTypes(n)
	if err != nil {
		n.dropUses()
		return nil, err
	}
	for i, t := range types {
		v, err := b.g.newValue(b.g.FreshName(op.Info().Base), t, n, i)
		if err != nil {
			return nil, err
		}
		n.Results = append(n.Results, v)
	}
	b.insert(n)
	return n, nil
}

// Value builds op and returns its single result.
func (b *Builder) Value(op Op, args ...Arg) (*Value, error) {
	n, err := b.Call(op, args...)
	if err != nil {
		return nil, err
	}
	if len(n.Results) != 1 {
		return nil, n.Errorf("expected one result, op returns %d", len(n.Results))
	}
	return n.Results[0], nil
}

// Raw builds a node with explicitly given, already bound arguments and result
// types, without inference. Frontends and the parser use it; names may be
// empty to get fresh ones.
func (b *Builder) Raw(op Op, args []Arg, types []Type, names []string) (*Node, error) {
	n, err := b.g.newNode(op, args, types, names)
	if err != nil {
		return nil, err
	}
	b.insert(n)
	return n, nil
}

func (b *Builder) insert(n *Node) {
	if b.Meta != nil {
		n.Meta = b.Meta.Clone()
	}
	if b.Pass != "" {
		n.AddProvenance(b.Pass)
	}
	b.g.linkBefore(n, b.before)
}

// BindArgs binds positional and keyword arguments to op's schema, filling
// defaults. Errors name the op and the argument.
func BindArgs(op Op, pos []Arg, kw map[string]Arg) ([]Arg, error) {
	info := op.Info()
	s := &info.Schema
	if s.VarArgs {
		if len(kw) > 0 {
			return nil, fmt.Errorf("%s takes positional arguments only", info.Name)
		}
		return append([]Arg(nil), pos...), nil
	}
	out := make([]Arg, len(s.Args))
	set := make([]bool, len(s.Args))
	if len(pos) > len(s.Args) {
		return nil, fmt.Errorf("%s takes %d arguments, got %d", info.Name, len(s.Args), len(pos))
	}
	for i, a := range pos {
		if s.Args[i].KwargOnly {
			return nil, fmt.Errorf("%s: argument %q is keyword-only but was given positionally", info.Name, s.Args[i].Name)
		}
		out[i], set[i] = a, true
	}
	for name, a := range kw {
		i := op.ArgIndex(name)
		if i < 0 {
			return nil, fmt.Errorf("%s has no argument %q", info.Name, name)
		}
		if set[i] {
			return nil, fmt.Errorf("%s: argument %q given twice", info.Name, name)
		}
		out[i], set[i] = a, true
	}
	for i, as := range s.Args {
		if set[i] {
			continue
		}
		if !as.HasDefault() {
			return nil, fmt.Errorf("%s: missing required argument %q", info.Name, as.Name)
		}
		d, err := ParseDefault(as.Type, as.Default)
		if err != nil {
			return nil, fmt.Errorf("%s: argument %q: %w", info.Name, as.Name, err)
		}
		out[i] = d
	}
	return out, nil
}

// IsDefault reports whether argument i of n equals its schema default.
func (n *Node) IsDefault(i int) bool {
	s := &n.Op.Info().Schema
	if s.VarArgs || i >= len(s.Args) || !s.Args[i].HasDefault() {
		return false
	}
	d, err := ParseDefault(s.Args[i].Type, s.Args[i].Default)
	if err != nil {
		return false
	}
	return literalEqual(n.Args[i], d)
}

// literalEqual compares literal args, treating an int default and a float
// literal of the same value as different (they print differently).
func literalEqual(a, b Arg) bool {
	if a.Kind == ArgValue || b.Kind == ArgValue {
		return false
	}
	return a.Equal(b)
}
