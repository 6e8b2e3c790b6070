package pm

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// application records one patch application: enough to rebuild the
// original node and to check that what the patch built is still there.
type application struct {
	patch *Patch
	graph *ir.Graph
	node  string   // the original's Short form
	orig  *ir.Node // the original node, erased; kept as a forwarding key

	// The original node, cloned: op, arguments (operands by reference),
	// result names and types, metadata.
	op    ir.Op
	args  []ir.Arg
	names []string
	types []ir.Type
	meta  ir.Meta

	created      []*ir.Node
	createdNames [][]string // result names of the created nodes
	repl         []*ir.Value
	uses         [][]use // per result of the original, its uses at application time
	anchor       *ir.Node
	reverted     bool
}

// use is one operand slot: argument path[0] of user (or graph output
// path[0] when user is the return), then list indexes.
type use struct {
	user *ir.Node
	path []int
}

// Application describes one recorded patch application.
type Application struct {
	Patch, ID string
	// Graph and Node name the original node ("%where (aten.where.self)").
	Graph, Node string
	// Created names the nodes the patch built.
	Created  []string
	Reverted bool
}

// Applications lists every patch application of the export, in order.
func (e *Export) Applications() []Application {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Application, 0, len(e.apps))
	for _, a := range e.apps {
		x := Application{Patch: a.patch.Name, ID: a.patch.ID, Graph: a.graph.Name, Node: a.node, Reverted: a.reverted}
		for _, n := range a.created {
			x.Created = append(x.Created, n.Short())
		}
		out = append(out, x)
	}
	return out
}

func (e *Export) addApp(a *application) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.apps = append(e.apps, a)
}

// applyPatch runs p's Rewrite on n and, when it applies, replaces n and
// records the application on the export. On error the context still names
// the patch and node.
func applyPatch(c *Ctx, p *Patch, n *ir.Node) (bool, error) {
	g := n.Graph
	prev := n.Prev()
	b := ir.NewBuilder(g)
	b.SetInsertBefore(n)
	b.Pass = p.Name
	meta := n.Meta.Clone()
	meta.Delete(ir.MetaProvenance)
	b.Meta = &meta

	c.enter(EntryPatch, p.Name, p.ID, n)
	repl, err := p.Rewrite(n, b, c)
	if err != nil {
		return false, err
	}
	if n.IsErased() || n.Graph != g {
		return false, fmt.Errorf("Rewrite erased or moved the node it was given")
	}
	created := nodesBetween(g, prev, n)
	if repl == nil {
		if err := eraseAll(created); err != nil {
			return false, fmt.Errorf("did not apply but left the nodes it built: %w", err)
		}
		c.leave()
		return false, nil
	}
	if err := checkReplacement(n, repl, created); err != nil {
		return false, err
	}
	a := &application{
		patch: p, graph: g, node: n.Short(), orig: n,
		op: n.Op, args: cloneArgs(n.Args), meta: n.Meta.Clone(),
		created: created, repl: repl, anchor: n.Next(),
	}
	for _, r := range n.Results {
		a.names = append(a.names, r.Name)
		a.types = append(a.types, r.Type)
		a.uses = append(a.uses, usesOf(r))
	}
	for _, cn := range created {
		a.createdNames = append(a.createdNames, resultNames(cn))
	}
	for i, r := range n.Results {
		if repl[i] != nil {
			r.ReplaceAllUsesWith(repl[i])
		}
	}
	if err := n.Erase(); err != nil {
		return false, err
	}
	c.export.addApp(a)
	c.fireEntry(n)
	c.leave()
	return true, nil
}

// checkReplacement validates what Rewrite returned.
func checkReplacement(n *ir.Node, repl []*ir.Value, created []*ir.Node) error {
	if len(repl) != len(n.Results) {
		return fmt.Errorf("Rewrite returned %d values for %d results", len(repl), len(n.Results))
	}
	for i, v := range repl {
		r := n.Results[i]
		switch {
		case v == nil && r.NumUses() > 0:
			return fmt.Errorf("Rewrite returned no value for used result %s", r)
		case v == nil:
		case v.Def == n:
			return fmt.Errorf("Rewrite returned the node's own result %s", v)
		case v.Graph != n.Graph:
			return fmt.Errorf("replacement %s of %s belongs to graph %s", v, r, v.Graph.Name)
		case !ir.TypesCompatible(r.Type, v.Type):
			return fmt.Errorf("replacement %s has type %s, result %s has %s", v, v.Type, r, r.Type)
		}
	}
	for _, cn := range created {
		for _, v := range cn.Operands() {
			if v.Def == n {
				return fmt.Errorf("built node %s uses the result %s of the node it replaces", cn.Short(), v)
			}
		}
	}
	return nil
}

// nodesBetween lists the nodes strictly between prev (nil: graph start) and n.
func nodesBetween(g *ir.Graph, prev, n *ir.Node) []*ir.Node {
	start := g.First()
	if prev != nil {
		start = prev.Next()
	}
	var out []*ir.Node
	for x := start; x != nil && x != n; x = x.Next() {
		out = append(out, x)
	}
	return out
}

// eraseAll erases nodes in reverse order.
func eraseAll(ns []*ir.Node) error {
	for i := len(ns) - 1; i >= 0; i-- {
		if err := ns[i].Erase(); err != nil {
			return err
		}
	}
	return nil
}

func resultNames(n *ir.Node) []string {
	out := make([]string, len(n.Results))
	for i, r := range n.Results {
		out[i] = r.Name
	}
	return out
}

// cloneArgs copies argument lists deeply; operands and regions are shared.
func cloneArgs(args []ir.Arg) []ir.Arg {
	out := make([]ir.Arg, len(args))
	for i, a := range args {
		out[i] = cloneArg(a)
	}
	return out
}

func cloneArg(a ir.Arg) ir.Arg {
	if a.Kind == ir.ArgList {
		a.List = cloneArgs(a.List)
	}
	return a
}

// usesOf lists the operand slots that hold v, user by user.
func usesOf(v *ir.Value) []use {
	var out []use
	seen := map[*ir.Node]bool{}
	for _, u := range v.Uses() {
		if seen[u] {
			continue
		}
		seen[u] = true
		for i, a := range userArgs(u) {
			for _, p := range findValue(a, v) {
				out = append(out, use{user: u, path: append([]int{i}, p...)})
			}
		}
	}
	return out
}

// userArgs is a user's argument list (the outputs for the return).
func userArgs(u *ir.Node) []ir.Arg {
	if u.IsReturn() {
		return u.Graph.Outputs()
	}
	return u.Args
}

// findValue returns the paths (list indexes) at which a holds v.
func findValue(a ir.Arg, v *ir.Value) [][]int {
	switch a.Kind {
	case ir.ArgValue:
		if a.Value == v {
			return [][]int{nil}
		}
	case ir.ArgList:
		var out [][]int
		for i, e := range a.List {
			for _, p := range findValue(e, v) {
				out = append(out, append([]int{i}, p...))
			}
		}
		return out
	}
	return nil
}

// valueAt returns the operand at a use's slot, or nil.
func (u use) valueAt() *ir.Value {
	args := userArgs(u.user)
	if u.path[0] >= len(args) {
		return nil
	}
	a := args[u.path[0]]
	for _, i := range u.path[1:] {
		if a.Kind != ir.ArgList || i >= len(a.List) {
			return nil
		}
		a = a.List[i]
	}
	if a.Kind != ir.ArgValue {
		return nil
	}
	return a.Value
}

// set stores v in a use's slot, keeping use lists exact.
func (u use) set(v *ir.Value) {
	a := replaceAt(userArgs(u.user)[u.path[0]], u.path[1:], v)
	if u.user.IsReturn() {
		u.user.Graph.SetOutput(u.path[0], a)
	} else {
		u.user.SetArg(u.path[0], a)
	}
}

func replaceAt(a ir.Arg, path []int, v *ir.Value) ir.Arg {
	if len(path) == 0 {
		return ir.ValueArg(v)
	}
	l := append([]ir.Arg(nil), a.List...)
	l[path[0]] = replaceAt(l[path[0]], path[1:], v)
	a.List = l
	return a
}
