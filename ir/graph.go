package ir

import (
	"fmt"
	"strconv"
	"strings"
)

// Graph is a straight-line list of nodes in SSA form (FX graphs have no
// branches; control flow lives in the regions of higher-order ops). Region
// graphs are isolated from above: they see only their own inputs.
type Graph struct {
	Name    string
	Inputs  []*Value
	Program *Program
	// Parent is the higher-order node that owns this region, nil for the main graph.
	Parent *Node

	first, last *Node
	numNodes    int
	// order is the node list as a slice, for Nodes: nil until Nodes builds
	// it, and again after any insertion (but at the end) or removal. A
	// pass that walks the graph without changing it reads this array
	// instead of chasing the list's pointers, one cache miss per node
	// once the graph outgrows the cache.
	order []*Node
	// opCount counts the nodes of each op (a node's Op never changes):
	// OpCount lets a pass that rewrites one rare op skip a graph without
	// visiting its nodes.
	opCount map[Op]int
	// ret is the pseudo-node whose Args are the graph's outputs; it is the
	// "user" recorded on values that are returned, so use lists stay exact.
	ret    Node
	names  map[string]*Value
	suffix map[string]int // last numeric suffix FreshName used per base
	nextID int
}

func newGraph(name string, p *Program, parent *Node) *Graph {
	g := &Graph{Name: name, Program: p, Parent: parent, names: map[string]*Value{}}
	g.ret.Graph = g
	if parent != nil && p != nil {
		p.regionsMade++
	}
	return g
}

// NewRegion makes a region graph owned by n; attach it with GraphArg in one of n's arguments.
func (n *Node) NewRegion(name string) *Graph {
	return newGraph(name, n.Graph.Program, n)
}

// Node is one operation: an op applied to arguments bound to the op's schema,
// producing zero or more results.
type Node struct {
	ID int
	Op Op
	// mark is scratch state of the algorithm walking the graph (Mark).
	mark uint32
	// Args has one entry per schema argument (filled from defaults when omitted),
	// or the positional operands of a VarArgs op.
	Args    []Arg
	Results []*Value
	Meta    Meta
	Graph   *Graph

	prev, next *Node
	dead       bool
}

// Value is an SSA value: a graph input or a node result. ID and Type do not
// change after creation, except through SetType by shape inference.
type Value struct {
	ID    int
	Name  string
	Type  Type
	Def   *Node // nil for graph inputs
	Index int   // result index in Def, or input index in Graph
	Graph *Graph

	uses []*Node // one entry per use; a returned value lists &Graph.ret
}

// Uses returns the nodes that use v, one entry per use (a node using v twice appears twice).
// A return of the graph is reported as the graph's return pseudo-node (see IsReturn).
func (v *Value) Uses() []*Node { return v.uses }

// NumUses is the exact number of uses.
func (v *Value) NumUses() int { return len(v.uses) }

// IsReturn reports whether n is the pseudo-node holding a graph's outputs.
func (n *Node) IsReturn() bool { return n.Graph != nil && n == &n.Graph.ret }

// String is the short form "%name".
func (v *Value) String() string { return "%" + v.Name }

// IsInput reports whether v is a graph input.
func (v *Value) IsInput() bool { return v.Def == nil }

// Tensor returns v's type as a tensor, or nil.
func (v *Value) Tensor() *TensorType { return AsTensor(v.Type) }

// SetType changes v's type (shape inference and dtype passes use it).
func (v *Value) SetType(t Type) { v.Type = t }

// First is the first node, or nil.
func (g *Graph) First() *Node { return g.first }

// Last is the last node, or nil.
func (g *Graph) Last() *Node { return g.last }

// Next is the following node, or nil.
func (n *Node) Next() *Node { return n.next }

// Prev is the preceding node, or nil.
func (n *Node) Prev() *Node { return n.prev }

// Len is the number of nodes.
func (g *Graph) Len() int { return g.numNodes }

// Nodes returns a snapshot of the nodes in order; edits during iteration do not affect it.
func (g *Graph) Nodes() []*Node {
	if g.order == nil || len(g.order) != g.numNodes {
		g.order = make([]*Node, 0, g.numNodes)
		for n := g.first; n != nil; n = n.next {
			g.order = append(g.order, n)
		}
	}
	return append(make([]*Node, 0, len(g.order)), g.order...)
}

// OpCount is the number of nodes of op in g (not in its regions).
func (g *Graph) OpCount(op Op) int { return g.opCount[op] }

// HasOpWhere reports whether some node of g (not of its regions) has an op
// for which f is true; f sees each distinct op once, in no set order.
func (g *Graph) HasOpWhere(f func(Op) bool) bool {
	for op := range g.opCount {
		if f(op) {
			return true
		}
	}
	return false
}

// Outputs returns the graph's outputs (usually values; literals such as None are allowed).
func (g *Graph) Outputs() []Arg { return g.ret.Args }

// SetOutputs replaces the outputs, keeping use lists exact.
func (g *Graph) SetOutputs(outs ...Arg) {
	g.ret.dropUses()
	g.ret.Args = outs
	g.ret.addUses()
}

// SetOutput replaces output i.
func (g *Graph) SetOutput(i int, a Arg) { g.ret.SetArg(i, a) }

// Value looks up a value by name.
func (g *Graph) Value(name string) *Value { return g.names[name] }

// FreshName returns an unused value name built from base the way FX does: base, base_1, base_2, …
func (g *Graph) FreshName(base string) string {
	base = sanitizeName(base)
	if _, taken := g.names[base]; !taken {
		return base
	}
	// Remember the last suffix handed out per base so that naming stays
	// linear in the graph size (FX keeps the same per-base counter).
	if g.suffix == nil {
		g.suffix = map[string]int{}
	}
	for i := g.suffix[base] + 1; ; i++ {
		n := base + "_" + strconv.Itoa(i)
		if _, taken := g.names[n]; !taken {
			g.suffix[base] = i
			return n
		}
	}
}

func sanitizeName(s string) string {
	if s == "" {
		return "v"
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || (i > 0 && r >= '0' && r <= '9'):
			b.WriteRune(r)
		case r >= '0' && r <= '9':
			b.WriteByte('_')
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func (g *Graph) newValue(name string, t Type, def *Node, index int) (*Value, error) {
	if name == "" {
		name = g.FreshName("v")
	}
	if _, taken := g.names[name]; taken {
		return nil, fmt.Errorf("graph %s: value name %%%s defined twice", g.Name, name)
	}
	g.nextID++
	v := &Value{ID: g.nextID, Name: name, Type: t, Def: def, Index: index, Graph: g}
	g.names[name] = v
	return v, nil
}

// AddInput appends a graph input. The name must be unused.
func (g *Graph) AddInput(name string, t Type) (*Value, error) {
	v, err := g.newValue(name, t, nil, len(g.Inputs))
	if err != nil {
		return nil, err
	}
	g.Inputs = append(g.Inputs, v)
	return v, nil
}

// RemoveInput deletes an unused graph input.
func (g *Graph) RemoveInput(v *Value) error {
	if v.Graph != g || v.Def != nil {
		return fmt.Errorf("graph %s: %s is not one of its inputs", g.Name, v)
	}
	if len(v.uses) > 0 {
		return fmt.Errorf("graph %s: input %s still has %d uses", g.Name, v, len(v.uses))
	}
	g.Inputs = append(g.Inputs[:v.Index], g.Inputs[v.Index+1:]...)
	for i := v.Index; i < len(g.Inputs); i++ {
		g.Inputs[i].Index = i
	}
	delete(g.names, v.Name)
	return nil
}

// Rename changes a value's name; the new name must be unused.
func (v *Value) Rename(name string) error {
	if name == v.Name {
		return nil
	}
	if _, taken := v.Graph.names[name]; taken {
		return fmt.Errorf("graph %s: cannot rename %s: %%%s exists", v.Graph.Name, v, name)
	}
	delete(v.Graph.names, v.Name)
	v.Name = name
	v.Graph.names[name] = v
	return nil
}

// newNode creates a detached node with results of the given types and names.
func (g *Graph) newNode(op Op, args []Arg, types []Type, names []string) (*Node, error) {
	g.nextID++
	n := &Node{ID: g.nextID, Op: op, Args: args, Graph: g}
	n.Results = make([]*Value, len(types))
	for i, t := range types {
		name := ""
		if i < len(names) {
			name = names[i]
		}
		if name == "" {
			name = g.FreshName(op.Info().Base)
		}
		v, err := g.newValue(name, t, n, i)
		if err != nil {
			for _, r := range n.Results[:i] {
				delete(g.names, r.Name)
			}
			return nil, err
		}
		n.Results[i] = v
	}
	for i := range args {
		if err := g.checkArgGraph(&args[i], n); err != nil {
			return nil, err
		}
	}
	n.addUses()
	return n, nil
}

func (g *Graph) checkArgGraph(a *Arg, n *Node) error {
	var err error
	a.walkValues(func(v *Value) {
		if err == nil && v.Graph != g {
			err = fmt.Errorf("graph %s: operand %s belongs to graph %s", g.Name, v, v.Graph.Name)
		}
	})
	if a.Kind == ArgGraph && a.Graph != nil {
		adoptRegion(a.Graph, n)
	}
	if a.Kind == ArgList {
		for i := range a.List {
			if a.List[i].Kind == ArgGraph && a.List[i].Graph != nil {
				adoptRegion(a.List[i].Graph, n)
			}
		}
	}
	return err
}

func (n *Node) addUses() {
	for i := range n.Args {
		n.Args[i].walkValues(func(v *Value) { v.uses = append(v.uses, n) })
	}
}

func (n *Node) dropUses() {
	for i := range n.Args {
		n.Args[i].walkValues(func(v *Value) { v.removeUse(n) })
	}
}

func (v *Value) removeUse(n *Node) {
	for i := len(v.uses) - 1; i >= 0; i-- {
		if v.uses[i] == n {
			last := len(v.uses) - 1
			v.uses[i] = v.uses[last]
			v.uses[last] = nil
			v.uses = v.uses[:last]
			return
		}
	}
}

func (g *Graph) linkBefore(n, at *Node) {
	if g.opCount == nil {
		g.opCount = map[Op]int{}
	}
	g.opCount[n.Op]++
	if at == nil { // append
		if g.order != nil {
			g.order = append(g.order, n)
		}
		n.prev = g.last
		n.next = nil
		if g.last != nil {
			g.last.next = n
		} else {
			g.first = n
		}
		g.last = n
	} else {
		g.order = nil
		n.next = at
		n.prev = at.prev
		if at.prev != nil {
			at.prev.next = n
		} else {
			g.first = n
		}
		at.prev = n
	}
	g.numNodes++
}

func (g *Graph) unlink(n *Node) {
	g.order = nil
	if c := g.opCount[n.Op]; c > 1 {
		g.opCount[n.Op] = c - 1
	} else {
		delete(g.opCount, n.Op)
	}
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		g.first = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		g.last = n.prev
	}
	n.prev, n.next = nil, nil
	g.numNodes--
}

// SetArg replaces argument i, keeping use lists exact.
func (n *Node) SetArg(i int, a Arg) {
	n.Args[i].walkValues(func(v *Value) { v.removeUse(n) })
	n.Args[i] = a
	n.Args[i].walkValues(func(v *Value) { v.uses = append(v.uses, n) })
	if a.Kind == ArgGraph && a.Graph != nil {
		adoptRegion(a.Graph, n)
	}
}

// SetArgs replaces all arguments.
func (n *Node) SetArgs(args []Arg) {
	n.dropUses()
	n.Args = args
	n.addUses()
	for i := range args {
		if args[i].Kind == ArgGraph && args[i].Graph != nil {
			adoptRegion(args[i].Graph, n)
		}
	}
}

// Arg returns the named argument (per the op schema). It panics if the op has
// no such argument, which is a bug in the caller.
func (n *Node) Arg(name string) Arg {
	i := n.Op.ArgIndex(name)
	if i < 0 || i >= len(n.Args) {
		panic(fmt.Sprintf("ir: %s has no argument %q", n.Short(), name))
	}
	return n.Args[i]
}

// SetNamedArg replaces the named argument.
func (n *Node) SetNamedArg(name string, a Arg) {
	i := n.Op.ArgIndex(name)
	if i < 0 || i >= len(n.Args) {
		panic(fmt.Sprintf("ir: %s has no argument %q", n.Short(), name))
	}
	n.SetArg(i, a)
}

// Operands returns the values n uses, in argument order (with repeats).
func (n *Node) Operands() []*Value {
	var out []*Value
	for i := range n.Args {
		n.Args[i].walkValues(func(v *Value) { out = append(out, v) })
	}
	return out
}

// Result returns the single result; it panics when n has not exactly one.
func (n *Node) Result() *Value {
	if len(n.Results) != 1 {
		panic(fmt.Sprintf("ir: %s has %d results, not 1", n.Short(), len(n.Results)))
	}
	return n.Results[0]
}

// Regions returns the graphs n owns, in argument order.
func (n *Node) Regions() []*Graph {
	var out []*Graph
	n.forEachRegion(func(g *Graph) { out = append(out, g) })
	return out
}

// Short names the node for diagnostics: "%add (aten.add.Tensor)".
func (n *Node) Short() string {
	if n.IsReturn() {
		return "return"
	}
	if len(n.Results) > 0 {
		return fmt.Sprintf("%%%s (%s)", n.Results[0].Name, n.Op)
	}
	return fmt.Sprintf("#%d (%s)", n.ID, n.Op)
}

// OpLabel is the op's name as its user knows it: for an opaque call (an op
// a frontend kept without knowing it) the target it recorded, else the op.
func (n *Node) OpLabel() string {
	if n.Op == OpOpaqueCall && len(n.Args) > 0 && n.Args[0].Kind == ArgString {
		return n.Args[0].Str + ", unknown to fxport"
	}
	return n.Op.String()
}

// LongString is the node's line in IR text.
func (n *Node) LongString() string {
	var b strings.Builder
	p := printer{b: &b}
	p.node(n, 0)
	return strings.TrimRight(b.String(), "\n")
}

// Provenance lists the passes recorded as having created or changed n.
func (n *Node) Provenance() []string {
	s, ok := n.Meta.Get(MetaProvenance)
	if !ok || s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// AddProvenance records that pass created or changed n (once per pass).
func (n *Node) AddProvenance(pass string) {
	if pass == "" {
		return
	}
	for _, p := range n.Provenance() {
		if p == pass {
			return
		}
	}
	if s, ok := n.Meta.Get(MetaProvenance); ok && s != "" {
		n.Meta.Set(MetaProvenance, s+","+pass)
	} else {
		n.Meta.Set(MetaProvenance, pass)
	}
}

// ReplaceAllUsesWith makes every user of v use w instead (graph outputs included).
func (v *Value) ReplaceAllUsesWith(w *Value) {
	if v == w {
		return
	}
	users := v.uses
	v.uses = nil
	var seen map[*Node]bool
	if len(users) > 8 {
		seen = make(map[*Node]bool, len(users))
	}
	for i, u := range users {
		if seen != nil {
			if seen[u] {
				continue
			}
			seen[u] = true
		} else if containsNode(users[:i], u) {
			continue
		}
		for j := range u.Args {
			for c := u.Args[j].replaceValue(v, w); c > 0; c-- {
				w.uses = append(w.uses, u)
			}
		}
	}
}

func containsNode(ns []*Node, n *Node) bool {
	for _, x := range ns {
		if x == n {
			return true
		}
	}
	return false
}

// Erase removes n from its graph. Its results must be unused.
func (n *Node) Erase() error {
	for _, r := range n.Results {
		if len(r.uses) > 0 {
			return n.Errorf("cannot erase: result %s has %d uses", r, len(r.uses))
		}
	}
	n.eraseUnchecked()
	return nil
}

func (n *Node) eraseUnchecked() {
	n.dropUses()
	for _, r := range n.Results {
		delete(n.Graph.names, r.Name)
	}
	n.Graph.unlink(n)
	n.dead = true
}

// Mark and SetMark are a word of scratch state for the one algorithm
// walking the graph at a time (the rewrite driver keeps in it whether a node
// is on its worklist): a mark on the node costs no lookup in a table of
// every node. Nothing else reads it, and it does not survive Clone.
func (n *Node) Mark() uint32 { return n.mark }

// SetMark sets n's mark (see Mark).
func (n *Node) SetMark(m uint32) { n.mark = m }

// IsErased reports whether n was removed from its graph.
func (n *Node) IsErased() bool { return n.dead }

// MoveBefore moves n to just before at (same graph); a nil at moves n to the end.
func (n *Node) MoveBefore(at *Node) {
	if n == at {
		return
	}
	n.Graph.unlink(n)
	n.Graph.linkBefore(n, at)
}
