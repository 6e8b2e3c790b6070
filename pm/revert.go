package pm

import (
	"errors"
	"fmt"
	"sort"

	"github.com/fxport/fxport/ir"
)

// Revert restores the original node of every application of the named
// patch that is still intact: the nodes the patch built are still in the
// graph with the same results, the original's operands still exist, its
// result names are free, and every user of a replacement still comes after
// the place the original goes back to. The original gets back its op,
// arguments, result names, types and metadata, and the uses the
// replacements had; the built nodes are erased. Applications are undone
// newest first. Applications that are no longer intact stay applied and
// are reported, each naming what changed, in the returned error.
//
// Reverts compose: an application whose operand another patch replaced can
// be reverted once that patch is.
func (e *Export) Revert(patch string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	known := e.Installed(patch)
	var errs []error
	for i := len(e.apps) - 1; i >= 0; i-- {
		a := e.apps[i]
		if a.patch.Name != patch {
			continue
		}
		known = true
		if a.reverted {
			continue
		}
		if err := e.revert(a); err != nil {
			errs = append(errs, fmt.Errorf("application on %s in graph %s: %w", a.node, a.graph.Name, err))
			continue
		}
		a.reverted = true
	}
	if !known {
		return fmt.Errorf("pm: revert: patch %q is not installed in this export", patch)
	}
	if len(errs) > 0 {
		return fmt.Errorf("pm: revert patch %q: %w", patch, errors.Join(errs...))
	}
	return nil
}

// node and value follow the forwarding left by earlier reverts.
func (e *Export) node(n *ir.Node) *ir.Node {
	for n != nil && e.fwdNode[n] != nil {
		n = e.fwdNode[n]
	}
	return n
}

func (e *Export) value(v *ir.Value) *ir.Value {
	for v != nil && e.fwdValue[v] != nil {
		v = e.fwdValue[v]
	}
	return v
}

// forwardArg rewrites the operands of a recorded argument.
func (e *Export) forwardArg(a ir.Arg) ir.Arg {
	switch a.Kind {
	case ir.ArgValue:
		a.Value = e.value(a.Value)
	case ir.ArgList:
		l := make([]ir.Arg, len(a.List))
		for i, x := range a.List {
			l[i] = e.forwardArg(x)
		}
		a.List = l
	}
	return a
}

// replacedBy names the live application that erased v's node, if any.
func (e *Export) replacedBy(v *ir.Value) string {
	for _, a := range e.apps {
		if !a.reverted && v.Def == a.orig {
			return a.patch.Name
		}
	}
	return ""
}

// revert checks that the application is intact, then undoes it.
func (e *Export) revert(a *application) error {
	g := a.graph
	created := make([]*ir.Node, len(a.created))
	createdSet := map[*ir.Node]bool{}
	for i, cn := range a.created {
		cn = e.node(cn)
		if cn.IsErased() || cn.Graph != g {
			if len(cn.Results) > 0 {
				if by := e.replacedBy(cn.Results[0]); by != "" {
					return fmt.Errorf("built node %s was replaced by patch %q; revert that first", cn.Short(), by)
				}
			}
			return fmt.Errorf("built node %s was removed", cn.Short())
		}
		if got := resultNames(cn); !equalStrings(got, a.createdNames[i]) {
			return fmt.Errorf("built node %s changed its results (%v, was %v)", cn.Short(), got, a.createdNames[i])
		}
		created[i] = cn
		createdSet[cn] = true
	}
	for _, name := range a.names {
		if g.Value(name) != nil {
			return fmt.Errorf("result name %%%s is taken by another value", name)
		}
	}
	args := make([]ir.Arg, len(a.args))
	var operands []*ir.Value
	for i, arg := range a.args {
		args[i] = e.forwardArg(arg)
		operands = append(operands, args[i].Values()...)
	}
	for _, v := range operands {
		if v.Graph != g || g.Value(v.Name) != v {
			if by := e.replacedBy(v); by != "" {
				return fmt.Errorf("operand %s was replaced by patch %q; revert that first", v, by)
			}
			return fmt.Errorf("operand %s no longer exists", v)
		}
	}
	repl := make([]*ir.Value, len(a.repl))
	isRepl := map[*ir.Value]bool{}
	for i, r := range a.repl {
		repl[i] = e.value(r)
		if repl[i] != nil {
			isRepl[repl[i]] = true
		}
	}
	for _, cn := range created {
		for _, r := range cn.Results {
			if isRepl[r] {
				continue
			}
			for _, u := range r.Uses() {
				if !createdSet[u] {
					return fmt.Errorf("%s, built by the patch, gained a use by %s", r, u.Short())
				}
			}
		}
	}
	uses := make([][]use, len(a.uses))
	recorded := map[*ir.Node]bool{}
	for i, us := range a.uses {
		for _, u := range us {
			u.user = e.node(u.user)
			uses[i] = append(uses[i], u)
			recorded[u.user] = true
		}
	}

	// Where the original goes back: after the last built node, else where
	// it was (before its old successor), else before its first user.
	pos := map[*ir.Node]int{}
	for i, n := range g.Nodes() {
		pos[n] = i
	}
	end := len(pos)
	var before *ir.Node
	anchor := e.node(a.anchor)
	switch {
	case len(created) > 0:
		last := created[0]
		for _, cn := range created {
			if pos[cn] > pos[last] {
				last = cn
			}
		}
		before = last.Next()
	case anchor != nil && !anchor.IsErased() && anchor.Graph == g:
		before = anchor
	default:
		first := end
		for _, us := range uses {
			for _, u := range us {
				if !u.user.IsReturn() && !u.user.IsErased() && pos[u.user] < first {
					first = pos[u.user]
					before = u.user
				}
			}
		}
	}
	at := end
	if before != nil {
		at = pos[before]
	}
	for _, v := range operands {
		if v.Def != nil && pos[v.Def] >= at {
			return fmt.Errorf("operand %s is now defined after the original's place", v)
		}
	}
	for _, r := range repl {
		if r == nil {
			continue
		}
		preexisting := r.Def == nil || !createdSet[r.Def]
		for _, u := range r.Uses() {
			if u.IsReturn() || createdSet[u] || preexisting && !recorded[u] {
				continue
			}
			if pos[u] < at {
				return fmt.Errorf("user %s of replacement %s now comes before the original's place", u.Short(), r)
			}
		}
	}

	// Intact: rebuild the original and move the uses back.
	b := ir.NewBuilder(g)
	if before != nil {
		b.SetInsertBefore(before)
	}
	orig, err := b.Raw(a.op, args, a.types, a.names)
	if err != nil {
		return fmt.Errorf("rebuilding the original: %w", err)
	}
	orig.Meta = a.meta.Clone()
	for i, us := range uses {
		r := repl[i]
		if r == nil {
			continue
		}
		for _, u := range us {
			if u.user.IsErased() || u.valueAt() != r {
				continue // the user went away or no longer reads the replacement
			}
			u.set(orig.Results[i])
		}
	}
	for i, r := range repl {
		if r != nil && r.Def != nil && createdSet[r.Def] {
			r.ReplaceAllUsesWith(orig.Results[i]) // uses gained after the application
		}
	}
	sort.Slice(created, func(i, j int) bool { return pos[created[i]] < pos[created[j]] })
	if err := eraseAll(created); err != nil {
		return fmt.Errorf("erasing the built nodes: %w", err)
	}
	if e.fwdNode == nil {
		e.fwdNode, e.fwdValue = map[*ir.Node]*ir.Node{}, map[*ir.Value]*ir.Value{}
	}
	e.fwdNode[a.orig] = orig
	for i, r := range a.orig.Results {
		e.fwdValue[r] = orig.Results[i]
	}
	return nil
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
