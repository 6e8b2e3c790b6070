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
	// members lists each class's values (by root, in order), kept up to
	// date across the unions below: shareable reads one class, not every
	// value of the program (nested conds were cubic).
	members := map[*ir.Value][]*ir.Value{}
	for _, v := range order {
		r := uf.find(v)
		members[r] = append(members[r], v)
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
				if o := outs[i].Value; shareable(l, uf, members, g, outs, i) && uf.find(o) != uf.find(r) {
					rr, ro := uf.find(r), uf.find(o)
					uf.union(r, o)
					if nr := uf.find(r); nr == rr {
						members[rr] = append(members[rr], members[ro]...)
						delete(members, ro)
					} else {
						members[nr] = append(members[nr], members[rr]...)
						delete(members, rr)
					}
				}
			}
		}
	}
}

// shareable reports whether output i of region g may share its cond
// result's storage.
func shareable(l *layout, uf unionFind, members map[*ir.Value][]*ir.Value, g *ir.Graph, outs []ir.Arg, i int) bool {
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
	for _, v := range members[root] {
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
