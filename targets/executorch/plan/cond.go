package plan

import (
	"sort"

	"github.com/fxport/fxport/ir"
)

// Span is a run of program positions [Start, End], both inclusive.
type Span struct{ Start, End int }

// normalize sorts c's segments, merges overlapping ones and sets the hull.
func (c *class) normalize() {
	sort.Slice(c.segs, func(i, j int) bool {
		if c.segs[i].Start != c.segs[j].Start {
			return c.segs[i].Start < c.segs[j].Start
		}
		return c.segs[i].End < c.segs[j].End
	})
	out := c.segs[:0]
	for _, s := range c.segs {
		if k := len(out) - 1; k >= 0 && s.Start <= out[k].End {
			out[k].End = max(out[k].End, s.End)
			continue
		}
		out = append(out, s)
	}
	c.segs = out
	if len(out) > 0 {
		c.start, c.end = out[0].Start, out[len(out)-1].End
	}
}

// extend adds s to c's segments and reports whether c grew.
func (c *class) extend(s Span) bool {
	for _, t := range c.segs {
		if t.Start <= s.Start && s.End <= t.End {
			return false
		}
	}
	c.segs = append(c.segs, s)
	c.normalize()
	return true
}

// shareCondResults gives a cond's result the storage of the value each
// branch returns for it (one storage class: the branch writes the bytes
// the result is read from, and the MoveCall copies nothing), where that is
// safe: the returned value and everything sharing its storage is defined
// inside the branch, and the branch returns no other value of that class.
// Other returned values keep their own storage (see extendMoveSources).
func shareCondResults(l *layout, uf unionFind, order []*ir.Value, unplanned map[*ir.Value]string) {
	// cls holds each class's values (by root, in order) and a summary of
	// where they live, kept up to date across the unions below: shareable
	// reads the summary, not every value of the class (a chain of nested
	// conds makes one class of one value per level, and reading it at
	// every level was quadratic in the depth).
	l.treeInterval(l.main) // number the graph tree once; the summaries use it
	owned := l.treeOwned
	cls := map[*ir.Value]*condClass{}
	for _, v := range order {
		r := uf.find(v)
		c := cls[r]
		if c == nil {
			c = newCondClass()
			cls[r] = c
		}
		c.add(l, v)
	}
	for _, c := range l.conds {
		t, f, _ := condRegions(c)
		for _, g := range []*ir.Graph{t, f} {
			outs := g.Outputs()
			for i, r := range c.Results {
				if r.Tensor() == nil || i >= len(outs) || outs[i].Kind != ir.ArgValue {
					continue
				}
				if _, ok := unplanned[r]; ok {
					continue
				}
				if o := outs[i].Value; shareable(l, uf, cls, owned, g, outs, i) && uf.find(o) != uf.find(r) {
					rr, ro := uf.find(r), uf.find(o)
					uf.union(r, o)
					keep, drop := rr, ro
					if nr := uf.find(r); nr != rr {
						keep, drop = nr, rr
					}
					if cls[keep] == nil {
						cls[keep] = newCondClass()
					}
					cls[keep].merge(l, cls[drop])
					delete(cls, drop)
				}
			}
		}
	}
}

// condClass is a storage class's values and where they live: whether one
// is a graph input (no defining node), and the hull of their graphs'
// intervals in the layout's graph tree (exact while every graph is in
// the tree; else shareable reads the values).
type condClass struct {
	members  []*ir.Value
	input    bool
	outside  bool // a member's graph is not in the tree
	lo, hi   int
	nonEmpty bool
}

func newCondClass() *condClass { return &condClass{} }

func (c *condClass) add(l *layout, v *ir.Value) {
	c.members = append(c.members, v)
	if v.Def == nil {
		c.input = true
	}
	iv, ok := l.treeInterval(v.Graph)
	if !ok {
		c.outside = true
		return
	}
	if !c.nonEmpty {
		c.lo, c.hi, c.nonEmpty = iv[0], iv[1], true
		return
	}
	c.lo, c.hi = min(c.lo, iv[0]), max(c.hi, iv[1])
}

func (c *condClass) merge(l *layout, d *condClass) {
	if d == nil {
		return
	}
	if c.members == nil && !c.nonEmpty && !c.input && !c.outside {
		*c = *d
		return
	}
	if len(c.members) < len(d.members) {
		// Append the smaller list (the order of members does not matter).
		c.members, d.members = d.members, c.members
	}
	c.members = append(c.members, d.members...)
	c.input = c.input || d.input
	c.outside = c.outside || d.outside
	if d.nonEmpty {
		if !c.nonEmpty {
			c.lo, c.hi, c.nonEmpty = d.lo, d.hi, true
		} else {
			c.lo, c.hi = min(c.lo, d.lo), max(c.hi, d.hi)
		}
	}
}

// shareable reports whether output i of region g may share its cond
// result's storage.
// The class summaries hold while the tree is numbered as it was for owned
// graphs.
func shareable(l *layout, uf unionFind, cls map[*ir.Value]*condClass, owned int, g *ir.Graph, outs []ir.Arg, i int) bool {
	o := outs[i].Value
	if o.Def == nil || o.Tensor() == nil || !l.within(o.Graph, g) {
		return false
	}
	root := uf.find(o)
	for j, a := range outs {
		if j == i || a.Kind != ir.ArgValue {
			continue
		}
		if w := l.resolve(a.Value); w != nil && uf.find(w) == root {
			return false
		}
	}
	c := cls[root]
	if c == nil {
		return true
	}
	if c.input {
		return false
	}
	if gi, ok := l.tree[g]; ok && !c.outside && l.treeOwned == owned && len(l.owner) == owned {
		// Every member's graph within g: g's interval holds their hull.
		return !c.nonEmpty || gi[0] <= c.lo && c.hi <= gi[1]
	}
	for _, v := range c.members {
		if v.Def == nil || !l.within(v.Graph, g) {
			return false
		}
	}
	return true
}

// extendMoveSources keeps the bytes of a value a branch returns alive as
// long as the cond's result: ExecuTorch's MoveCall assigns the EValue, so
// after the move the result may be the returned tensor itself (not a copy)
// and reads its storage until the result's last use. Values that share
// their result's storage need nothing; others (a region input passed
// through, a value captured from outside, a value returned twice) get a
// segment from the cond node to the end of the result's class. Extensions
// repeat until nothing grows (a result may itself be returned by an outer
// branch).
func extendMoveSources(l *layout, of map[*ir.Value]*class) {
	for changed := true; changed; {
		changed = false
		for _, c := range l.conds {
			t, f, _ := condRegions(c)
			for _, g := range []*ir.Graph{t, f} {
				outs := g.Outputs()
				for i, r := range c.Results {
					if i >= len(outs) || outs[i].Kind != ir.ArgValue {
						continue
					}
					rc, sc := of[r], of[l.resolve(outs[i].Value)]
					if rc == nil || sc == nil || rc == sc {
						continue
					}
					if sc.extend(Span{l.pos[c], rc.end}) {
						changed = true
					}
				}
			}
		}
	}
}

// segsOverlap reports whether two sorted, disjoint segment lists share a
// position.
func segsOverlap(a, b []Span) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i].Start <= b[j].End && b[j].Start <= a[i].End {
			return true
		}
		if a[i].End < b[j].End {
			i++
		} else {
			j++
		}
	}
	return false
}
