package partition

import (
	"fmt"
	"slices"

	"github.com/fxport/fxport/ir"
)

// OpCallDelegate is the delegate call op every backend's partitions become.
var OpCallDelegate = ir.OpHigherOrderExecutorchCallDelegate

// Spec names what Outline builds for one backend.
type Spec struct {
	// Backend is the delegate id, the call's second operand
	// ("XnnpackBackend").
	Backend string
	// Region names the region graph ("lowered_module_0").
	Region string
	// Pass is recorded as the provenance of the call ("xnnpack-partition").
	Pass string
	// Prefix starts every error ("xnnpack partition").
	Prefix string
	// Position, when set, gives each node's position in the graph's
	// current order (a Legalizer's, with nothing changed since its last
	// run). Outline then finds the nodes to move after the call from the
	// users of g's results instead of walking every node between g's first
	// and last, which in a long graph can be most of it.
	Position func(*ir.Node) int
}

// Boundary returns what g (nodes of one graph) exchanges with the rest of
// it: inputs, the values g reads that no node of g defines, in first-use
// order; outputs, the results of g's nodes that a node outside g uses or
// the graph returns, in node order.
func Boundary(g []*ir.Node) (inputs, outputs []*ir.Value) {
	in := members(g)
	seen := map[*ir.Value]bool{}
	for _, n := range g {
		for _, v := range n.Operands() {
			if (v.Def == nil || !in[v.Def]) && !seen[v] {
				seen[v] = true
				inputs = append(inputs, v)
			}
		}
	}
	for _, n := range g {
		for _, r := range n.Results {
			for _, u := range r.Uses() {
				if u.IsReturn() || !in[u] {
					outputs = append(outputs, r)
					break
				}
			}
		}
	}
	return inputs, outputs
}

// Outline moves g (nodes of one graph, in graph order, convex) into a new
// region named s.Region, held by a new
//
//	%out… = higher_order.executorch_call_delegate(^region, s.Backend, %in…)
//
// placed after g's last node. The region's inputs are g's Boundary inputs
// (they keep their names), its outputs g's Boundary outputs; the call's
// results take over the outputs' uses and names. The nodes are copied
// unchanged (arguments remapped, metadata cloned) and erased from the
// graph; nodes between g's first and last node that depend on g move after
// the call, keeping their order. A g none of whose results is used changes
// nothing and gives a nil call.
func Outline(g []*ir.Node, s Spec) (*ir.Node, error) {
	inputs, outputs := Boundary(g)
	if len(outputs) == 0 {
		return nil, nil
	}
	in := members(g)
	last := g[len(g)-1]
	var movers []*ir.Node
	ok := false
	if s.Position != nil {
		movers, ok = dependents(g, in, s.Position)
	}
	if !ok {
		dep := map[*ir.Node]bool{}
		for n := g[0]; n != nil && n != last; n = n.Next() {
			if in[n] {
				continue
			}
			for _, v := range n.Operands() {
				if v.Def != nil && (in[v.Def] || dep[v.Def]) {
					dep[n] = true
					movers = append(movers, n)
					break
				}
			}
		}
	}
	region := g[0].NewRegion(s.Region)
	vmap := map[*ir.Value]*ir.Value{}
	for _, v := range inputs {
		nv, err := region.AddInput(v.Name, v.Type)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Prefix, err)
		}
		vmap[v] = nv
	}
	b := ir.NewBuilder(region)
	for _, n := range g {
		if _, err := CopyNode(b, n, vmap); err != nil {
			return nil, n.Errorf("%s: copying into the region: %v", s.Prefix, err)
		}
	}
	outs := make([]ir.Arg, len(outputs))
	types := make([]ir.Type, len(outputs))
	for i, o := range outputs {
		outs[i] = ir.ValueArg(vmap[o])
		types[i] = o.Type
	}
	region.SetOutputs(outs...)
	callArgs := []ir.Arg{ir.GraphArg(region), ir.StringArg(s.Backend)}
	for _, v := range inputs {
		callArgs = append(callArgs, ir.ValueArg(v))
	}
	cb := ir.NewBuilder(last.Graph)
	cb.SetInsertAfter(last)
	cb.Pass = s.Pass
	call, err := cb.Raw(OpCallDelegate, callArgs, types, nil)
	if err != nil {
		return nil, last.Errorf("%s: building the delegate call: %v", s.Prefix, err)
	}
	for i, o := range outputs {
		o.ReplaceAllUsesWith(call.Results[i])
	}
	at := call.Next()
	for _, m := range movers {
		m.MoveBefore(at) // nil: to the end of the graph
	}
	for i := len(g) - 1; i >= 0; i-- {
		if err := g[i].Erase(); err != nil {
			return nil, g[i].Errorf("%s: erasing a claimed node: %v", s.Prefix, err)
		}
	}
	for i, o := range outputs {
		if err := call.Results[i].Rename(o.Name); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Prefix, err)
		}
	}
	return call, nil
}

// dependents returns the nodes outside g (in: its members) placed before
// g's last node that depend on a member, in graph order (pos): the
// descendants of g's members reached through nodes before that last node.
// Every path runs forward in a topological order, so no descendant placed
// after the last node leads back before it. ok is false when pos does not
// know a node it needs.
func dependents(g []*ir.Node, in map[*ir.Node]bool, pos func(*ir.Node) int) (_ []*ir.Node, ok bool) {
	end := pos(g[len(g)-1])
	seen := map[*ir.Node]bool{}
	var out, work []*ir.Node
	ok = end >= 0
	visit := func(n *ir.Node) {
		for _, r := range n.Results {
			for _, u := range r.Uses() {
				if u.IsReturn() || in[u] || seen[u] {
					continue
				}
				if p := pos(u); p < 0 {
					ok = false
				} else if p >= end {
					continue
				}
				seen[u] = true
				out = append(out, u)
				work = append(work, u)
			}
		}
	}
	for _, n := range g {
		visit(n)
	}
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		visit(n)
	}
	if !ok {
		return nil, false
	}
	slices.SortFunc(out, func(a, b *ir.Node) int { return pos(a) - pos(b) })
	return out, true
}

// CopyNode appends to b a copy of n: its arguments remapped through vmap
// (Remap), its results' types and names, a clone of its metadata. vmap then
// maps n's results to the copy's.
func CopyNode(b *ir.Builder, n *ir.Node, vmap map[*ir.Value]*ir.Value) (*ir.Node, error) {
	args := make([]ir.Arg, len(n.Args))
	for i, a := range n.Args {
		args[i] = Remap(a, vmap)
	}
	types := make([]ir.Type, len(n.Results))
	names := make([]string, len(n.Results))
	for i, r := range n.Results {
		types[i], names[i] = r.Type, r.Name
	}
	nn, err := b.Raw(n.Op, args, types, names)
	if err != nil {
		return nil, err
	}
	nn.Meta = n.Meta.Clone()
	for i, r := range n.Results {
		vmap[r] = nn.Results[i]
	}
	return nn, nil
}

// Remap rewrites the values of a (and of its list elements) through vmap.
func Remap(a ir.Arg, vmap map[*ir.Value]*ir.Value) ir.Arg {
	return MapValues(a, func(v ir.Arg) ir.Arg { return ir.ValueArg(vmap[v.Value]) })
}

// MapValues replaces each value argument of a (a itself, or an element of
// its lists, at any depth) by f of it; other arguments stay. a is not
// changed.
func MapValues(a ir.Arg, f func(ir.Arg) ir.Arg) ir.Arg {
	switch a.Kind {
	case ir.ArgValue:
		return f(a)
	case ir.ArgList:
		l := make([]ir.Arg, len(a.List))
		for i, e := range a.List {
			l[i] = MapValues(e, f)
		}
		out := a
		out.List = l
		return out
	}
	return a
}

func members(g []*ir.Node) map[*ir.Node]bool {
	in := make(map[*ir.Node]bool, len(g))
	for _, n := range g {
		in[n] = true
	}
	return in
}
