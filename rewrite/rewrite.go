// Package rewrite is fxport's one rewrite engine: patterns (a root op, a
// benefit, a match and a rewrite function) applied to a graph by a
// worklist driver until no pattern applies (a fixpoint).
//
// The driver visits every node once in graph order; when a pattern rewrites
// a node, the nodes it built and the users of its results are visited
// (again). For each node the patterns of its op are tried by decreasing
// benefit (then by name), then the patterns of any op; the first that
// applies wins. A rewrite that keeps producing work is stopped after a
// bound on the number of rewrites, with an error naming the pattern that
// fired last, so a pair of patterns undoing each other cannot loop forever.
// Everything is deterministic: the same graph and patterns give the same
// result.
//
// The package depends only on ir; passes build pattern sets and drive them
// (see passes' legalize-kernels).
package rewrite

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/fxport/fxport/ir"
)

// Pattern rewrites one kind of node.
type Pattern struct {
	// Name identifies the pattern in statistics, firings and errors.
	Name string
	// Root is the op the pattern matches; ir.OpInvalid matches any op.
	Root ir.Op
	// Benefit orders overlapping patterns: higher is tried first.
	Benefit int
	// Match, when set, is asked first; false skips the pattern.
	Match func(n *ir.Node) bool
	// Rewrite builds the replacement of n with b, whose insertion point is
	// just before n and whose built nodes carry n's metadata and the pass
	// in their provenance. It returns one value per result of n (nil for a
	// result without uses), or nil values and no error when the pattern
	// does not apply after all. It must not erase n or change its users:
	// the driver replaces n's uses and erases it.
	Rewrite func(b *ir.Builder, n *ir.Node) ([]*ir.Value, error)
}

// Set is a validated, ordered collection of patterns.
type Set struct {
	byRoot map[ir.Op][]*Pattern
	any    []*Pattern
	names  []string
}

// NewSet validates ps (a name and a Rewrite each, names unique) and orders
// them by decreasing benefit, then name.
func NewSet(ps ...*Pattern) (*Set, error) {
	s := &Set{byRoot: map[ir.Op][]*Pattern{}}
	seen := map[string]bool{}
	for _, p := range ps {
		switch {
		case p == nil || p.Name == "":
			return nil, errors.New("rewrite: a pattern without a name")
		case p.Rewrite == nil:
			return nil, fmt.Errorf("rewrite: pattern %s has no Rewrite function", p.Name)
		case seen[p.Name]:
			return nil, fmt.Errorf("rewrite: two patterns named %s", p.Name)
		}
		seen[p.Name] = true
		s.names = append(s.names, p.Name)
		if p.Root == ir.OpInvalid {
			s.any = append(s.any, p)
		} else {
			s.byRoot[p.Root] = append(s.byRoot[p.Root], p)
		}
	}
	order := func(a, b *Pattern) int {
		if c := cmp.Compare(b.Benefit, a.Benefit); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	}
	for _, l := range s.byRoot {
		slices.SortStableFunc(l, order)
	}
	slices.SortStableFunc(s.any, order)
	slices.Sort(s.names)
	return s, nil
}

// MustSet is NewSet for pattern sets declared at init; it panics on an
// invalid set (a programming error).
func MustSet(ps ...*Pattern) *Set {
	s, err := NewSet(ps...)
	if err != nil {
		panic(err)
	}
	return s
}

// Names lists the set's pattern names, sorted.
func (s *Set) Names() []string { return slices.Clone(s.names) }

// Roots lists the ops some pattern of the set is rooted at, in op order.
func (s *Set) Roots() []ir.Op {
	out := make([]ir.Op, 0, len(s.byRoot))
	for op := range s.byRoot {
		out = append(out, op)
	}
	slices.Sort(out)
	return out
}

// Has reports whether some pattern is rooted at op (or matches any op).
func (s *Set) Has(op ir.Op) bool { return len(s.byRoot[op]) > 0 || len(s.any) > 0 }

// Candidates are the patterns tried on n, in order.
func (s *Set) candidates(n *ir.Node) []*Pattern {
	l := s.byRoot[n.Op]
	if len(s.any) == 0 {
		return l
	}
	if len(l) == 0 {
		return s.any
	}
	return append(slices.Clone(l), s.any...)
}

// Options configure one application.
type Options struct {
	// Pass is recorded in the provenance of every node built.
	Pass string
	// Filter, when set, limits the nodes patterns are tried on. It is
	// called only on nodes of an op some pattern of the set is rooted at
	// (Set.Has).
	Filter func(n *ir.Node) bool
	// MaxRewrites bounds the rewrites of one Apply; 0 means 8 per node of
	// the graphs at the start plus 64.
	MaxRewrites int
	// OnRewrite, when set, is told of each rewrite: the pattern, the
	// replaced node's op and the replacement values.
	OnRewrite func(p *Pattern, from ir.Op, to []*ir.Value)
	// Retype, when set, allows a replacement value whose type differs from
	// the result it replaces (a refined shape or dim order): the driver
	// passes it the users of such values to infer their types again.
	// Without it a type change is an error.
	Retype func(users []*ir.Node) error
}

// Result counts what one application did.
type Result struct {
	// Rewrites is the number of rewrites; ByPattern splits it by pattern.
	Rewrites  int
	ByPattern map[string]int
}

// ErrNoFixpoint is wrapped by the error of an application that reached
// Options.MaxRewrites.
var ErrNoFixpoint = errors.New("no fixpoint")

// Apply runs the set's patterns over graphs to a fixpoint.
func Apply(graphs []*ir.Graph, s *Set, opt Options) (Result, error) {
	res := Result{ByPattern: map[string]int{}}
	var w worklist
	total := 0
	for _, g := range graphs {
		for _, n := range g.Nodes() {
			w.push(n)
			total++
		}
	}
	limit := opt.MaxRewrites
	if limit <= 0 {
		limit = 8*total + 64
	}
	for {
		n := w.pop()
		if n == nil {
			return res, nil
		}
		if n.IsErased() || n.IsReturn() || !s.Has(n.Op) || (opt.Filter != nil && !opt.Filter(n)) {
			continue
		}
		for _, p := range s.candidates(n) {
			if p.Match != nil && !p.Match(n) {
				continue
			}
			done, err := apply(p, n, &w, opt)
			if err != nil {
				return res, err
			}
			if !done {
				continue
			}
			res.Rewrites++
			res.ByPattern[p.Name]++
			if res.Rewrites >= limit && w.len() > 0 {
				return res, fmt.Errorf("rewrite %s: %w after %d rewrites (the last by pattern %s): patterns keep rewriting each other's results", opt.Pass, ErrNoFixpoint, res.Rewrites, p.Name)
			}
			break
		}
	}
}

// apply runs p on n; it replaces n and queues the new work when p applies.
func apply(p *Pattern, n *ir.Node, w *worklist, opt Options) (bool, error) {
	g := n.Graph
	before := n.Prev()
	b := ir.NewBuilder(g)
	b.SetInsertBefore(n)
	b.Pass = opt.Pass
	meta := n.Meta.Clone()
	b.Meta = &meta
	vals, err := p.Rewrite(b, n)
	built := builtBetween(g, before, n)
	if err == nil && vals == nil {
		if len(built) > 0 {
			err = fmt.Errorf("built %d nodes but did not apply", len(built))
		} else {
			return false, nil
		}
	}
	if err == nil && len(vals) != len(n.Results) {
		err = fmt.Errorf("returned %d values for the %d results of %s", len(vals), len(n.Results), n.Op)
	}
	if err == nil {
		for i, r := range n.Results {
			switch {
			case vals[i] == nil && r.NumUses() > 0:
				err = fmt.Errorf("gave no value for result %d, which has uses", i)
			case vals[i] != nil && vals[i].Graph != g:
				err = fmt.Errorf("gave a value of another graph for result %d", i)
			case vals[i] != nil && opt.Retype == nil && !ir.TypeEqual(vals[i].Type, r.Type):
				err = fmt.Errorf("replaced result %d of type %s by %s of type %s", i, r.Type, vals[i], vals[i].Type)
			}
		}
	}
	if err != nil {
		for i := len(built) - 1; i >= 0; i-- {
			if noUses(built[i]) {
				_ = built[i].Erase()
			}
		}
		return false, n.Errorf("%s: pattern %s: %v", opt.Pass, p.Name, err)
	}
	from := n.Op
	names := make([]string, len(n.Results))
	var retype []*ir.Node
	for i, r := range n.Results {
		names[i] = r.Name
		if vals[i] == nil {
			continue
		}
		changed := !ir.TypeEqual(vals[i].Type, r.Type)
		for _, u := range r.Uses() {
			w.push(u)
			if changed && !u.IsReturn() {
				retype = append(retype, u)
			}
		}
		r.ReplaceAllUsesWith(vals[i])
	}
	if err := n.Erase(); err != nil {
		return false, n.Errorf("%s: pattern %s: %v", opt.Pass, p.Name, err)
	}
	// Values built for the rewrite keep the replaced results' names, so a
	// decomposition reads like the program it came from.
	isBuilt := map[*ir.Node]bool{}
	for _, m := range built {
		isBuilt[m] = true
	}
	for i, v := range vals {
		if v != nil && isBuilt[v.Def] && names[i] != "" && g.Value(names[i]) == nil {
			if err := v.Rename(names[i]); err != nil {
				return false, fmt.Errorf("rewrite %s: renaming %s to %s: %w", opt.Pass, v, names[i], err)
			}
		}
	}
	if len(retype) > 0 {
		if err := opt.Retype(retype); err != nil {
			return false, fmt.Errorf("rewrite %s: pattern %s: %w", opt.Pass, p.Name, err)
		}
	}
	for _, m := range built {
		w.push(m)
	}
	if opt.OnRewrite != nil {
		opt.OnRewrite(p, from, vals)
	}
	return true, nil
}

func noUses(n *ir.Node) bool {
	for _, r := range n.Results {
		if r.NumUses() > 0 {
			return false
		}
	}
	return true
}

// builtBetween lists the nodes of g after before (from the start when nil)
// up to end.
func builtBetween(g *ir.Graph, before, end *ir.Node) []*ir.Node {
	m := g.First()
	if before != nil {
		m = before.Next()
	}
	var out []*ir.Node
	for ; m != nil && m != end; m = m.Next() {
		out = append(out, m)
	}
	return out
}

// worklist is a FIFO of nodes without duplicates. Whether a node is queued
// is its mark (ir.Node.Mark) equal to the worklist's epoch: a map keyed by
// node, filled with every node of the graph before the first rewrite, cost
// a hash insert and delete per node, and a table by node ID a random access
// per node, each a cache miss once the graph outgrew the cache.
type worklist struct {
	q     []*ir.Node
	head  int
	epoch uint32
}

// epochs numbers the worklists; a node's mark is the epoch of the worklist
// it is queued on.
var epochs atomic.Uint32

func (w *worklist) push(n *ir.Node) {
	if n == nil {
		return
	}
	for w.epoch == 0 {
		w.epoch = epochs.Add(1)
	}
	if n.Mark() == w.epoch {
		return
	}
	n.SetMark(w.epoch)
	w.q = append(w.q, n)
}

func (w *worklist) pop() *ir.Node {
	if w.head == len(w.q) {
		return nil
	}
	n := w.q[w.head]
	w.q[w.head] = nil
	w.head++
	n.SetMark(0)
	if w.head > 1024 && w.head*2 > len(w.q) {
		w.q = append(w.q[:0], w.q[w.head:]...)
		w.head = 0
	}
	return n
}

func (w *worklist) len() int { return len(w.q) - w.head }
