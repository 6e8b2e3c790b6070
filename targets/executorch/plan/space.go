package plan

import (
	"cmp"
	"math/bits"
	"slices"
	"sync"
)

// spaceIndex holds the address spans of the classes placed so far, by
// lifetime, so that a greedy step reads the union of the spans of the
// classes live alongside it, merged, instead of each such class's span: in
// a stack of blocks, values that live across the whole program (mutable
// buffers, their write-backs, values hoisted to the start) overlap every
// class, and listing them for every placement was O(classes × long-lived
// classes).
//
// It is a segment tree over positions. A segment [s, e] of a placed class
// is stored at its canonical nodes (own), and its span is added to sub of
// those nodes and of every node on the paths from leaves s and e to the
// root, which holds each canonical node's ancestors: sub[n] is then a
// superset of the spans stored in n's subtree, and every span in it
// belongs to a class live somewhere in n's range. The classes overlapping
// a query segment [a, b] are those stored at a canonical node of [a, b] or
// below it (sub of the canonical nodes) or at an ancestor of one (own of
// the nodes on the paths from leaves a and b). Each set is kept as sorted,
// disjoint, merged spans: only the union matters to the placements (gapFor
// and the bounded fit read the busy spans' union; every offset and size is
// a multiple of the alignment, so merging touching spans loses no gap).
type spaceIndex struct {
	base, leaves int
	own, sub     [][]span
	touched      []int // nodes with a non-empty set, for reset
}

// newSpaceIndex sizes an index for classes, as newLifetimeIndex does; ok
// is false when it cannot hold them.
func newSpaceIndex(classes []*class) (*spaceIndex, bool) {
	if len(classes) == 0 {
		return nil, false
	}
	lo, hi := classes[0].start, classes[0].end
	for _, c := range classes {
		if c.end < c.start || len(c.segs) == 0 {
			return nil, false
		}
		lo, hi = min(lo, c.start), max(hi, c.end)
	}
	if lo < -1<<30 || hi >= 1<<30 || hi-lo >= 1<<30 {
		return nil, false
	}
	leaves := 1 << bits.Len(uint(hi-lo+1))
	x, _ := spacePool.Get().(*spaceIndex)
	if x == nil || len(x.own) < 2*leaves {
		x = &spaceIndex{own: make([][]span, 2*leaves), sub: make([][]span, 2*leaves)}
	}
	x.base, x.leaves = lo, leaves
	return x, true
}

// spacePool keeps emptied indexes: the search places the same classes
// hundreds of times.
var spacePool sync.Pool

// release empties x and returns it to the pool.
func (x *spaceIndex) release() {
	x.reset()
	spacePool.Put(x)
}

// reset empties the index, keeping its memory.
func (x *spaceIndex) reset() {
	for _, n := range x.touched {
		x.own[n], x.sub[n] = x.own[n][:0], x.sub[n][:0]
	}
	x.touched = x.touched[:0]
}

// add records that c occupies s.
func (x *spaceIndex) add(c *class, s span) {
	for _, g := range c.segs {
		a, b := g.Start-x.base+x.leaves, g.End-x.base+x.leaves
		for l, r := a, b+1; l < r; l, r = l>>1, r>>1 {
			if l&1 == 1 {
				x.insert(x.own, l, s)
				x.insert(x.sub, l, s)
				l++
			}
			if r&1 == 1 {
				r--
				x.insert(x.own, r, s)
				x.insert(x.sub, r, s)
			}
		}
		for a, b = a>>1, b>>1; a >= 1; a, b = a>>1, b>>1 {
			x.insert(x.sub, a, s)
			if b != a {
				x.insert(x.sub, b, s)
			}
		}
	}
}

// insert adds s to the set sets[n], merging it with the spans it meets.
func (x *spaceIndex) insert(sets [][]span, n int, s span) {
	if len(x.own[n]) == 0 && len(x.sub[n]) == 0 {
		x.touched = append(x.touched, n)
	}
	sets[n] = insertSpan(sets[n], s)
}

// insertSpan adds s to set (sorted by lo, disjoint), merging it with the
// spans it overlaps or touches, and returns the set.
func insertSpan(set []span, s span) []span {
	// i: the first span ending at or after s.lo; j: the first starting
	// after s.hi. Spans i..j-1 meet s.
	i, _ := slices.BinarySearchFunc(set, s.lo, func(t span, lo int64) int { return cmp.Compare(t.hi, lo) })
	j := i
	for j < len(set) && set[j].lo <= s.hi {
		j++
	}
	if i == j {
		return slices.Insert(set, i, s)
	}
	set[i] = span{min(s.lo, set[i].lo), max(s.hi, set[j-1].hi)}
	return slices.Delete(set, i+1, j)
}

// overlapping appends to out the sets of spans (each sorted and disjoint)
// whose union is the union of the spans of the placed classes that overlap
// c, and returns it; the sets are x's own, valid until the next add.
func (x *spaceIndex) overlapping(c *class, out [][]span) [][]span {
	put := func(set []span) {
		if len(set) > 0 {
			out = append(out, set)
		}
	}
	for _, g := range c.segs {
		a, b := g.Start-x.base+x.leaves, g.End-x.base+x.leaves
		for l, r := a, b+1; l < r; l, r = l>>1, r>>1 {
			if l&1 == 1 {
				put(x.sub[l])
				l++
			}
			if r&1 == 1 {
				r--
				put(x.sub[r])
			}
		}
		for ; a >= 1; a, b = a>>1, b>>1 {
			put(x.own[a])
			if b != a {
				put(x.own[b])
			}
		}
	}
	return out
}

// unionOf appends to out the union of sets (each sorted by lo and
// disjoint) as sorted, disjoint spans, touching spans merged, and returns
// it: a k-way merge over the sets' heads, O(spans × log sets) instead of
// sorting their concatenation.
func unionOf(sets [][]span, heads, h []int, out []span) ([]span, []int, []int) {
	switch len(sets) {
	case 0:
		return out, heads, h
	case 1:
		return append(out, sets[0]...), heads, h
	}
	// heads[i]: the next span of sets[i]; h: a min-heap of set indices by
	// their next span's lo.
	heads = heads[:0]
	for range sets {
		heads = append(heads, 0)
	}
	h = h[:0]
	lo := func(i int) int64 { return sets[i][heads[i]].lo }
	down := func(k int) {
		for {
			m, l, r := k, 2*k+1, 2*k+2
			if l < len(h) && lo(h[l]) < lo(h[m]) {
				m = l
			}
			if r < len(h) && lo(h[r]) < lo(h[m]) {
				m = r
			}
			if m == k {
				return
			}
			h[k], h[m] = h[m], h[k]
			k = m
		}
	}
	for i := range sets {
		if len(sets[i]) > 0 {
			h = append(h, i)
		}
	}
	for k := len(h)/2 - 1; k >= 0; k-- {
		down(k)
	}
	have := false
	var cur span
	for len(h) > 0 {
		i := h[0]
		sp := sets[i][heads[i]]
		heads[i]++
		if heads[i] == len(sets[i]) {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		if len(h) > 0 {
			down(0)
		}
		switch {
		case !have:
			cur, have = sp, true
		case sp.lo <= cur.hi:
			cur.hi = max(cur.hi, sp.hi)
		default:
			out = append(out, cur)
			cur = sp
		}
	}
	if have {
		out = append(out, cur)
	}
	return out, heads, h
}

// spaceSet is the placed classes' spans: a spaceIndex, or a plain list
// compared pair by pair when the index cannot hold the classes.
type spaceSet struct {
	index *spaceIndex
	list  []*class
	spans []span
	buf   []span
	sets  [][]span
	heads []int
	heap  []int
	// work is the number of spans busy has read, plus one per call.
	work int64
}

func newSpaceSet(classes []*class) *spaceSet {
	x, ok := newSpaceIndex(classes)
	if !ok {
		x = nil
	}
	return &spaceSet{index: x}
}

// release returns the index's memory for the next placement.
func (s *spaceSet) release() {
	if s.index != nil {
		s.index.release()
		s.index = nil
	}
}

func (s *spaceSet) add(c *class, sp span) {
	if s.index != nil {
		s.index.add(c, sp)
		return
	}
	s.list = append(s.list, c)
	s.spans = append(s.spans, sp)
}

// busy returns spans whose union is the union of the spans of the placed
// classes overlapping c, sorted by lo (valid until the next call).
func (s *spaceSet) busy(c *class) []span {
	s.buf = s.buf[:0]
	if s.index != nil {
		s.sets = s.index.overlapping(c, s.sets[:0])
		s.work++
		for _, set := range s.sets {
			s.work += int64(len(set))
		}
		s.buf, s.heads, s.heap = unionOf(s.sets, s.heads, s.heap, s.buf)
		return s.buf
	}
	s.work += 1 + int64(len(s.list))
	for i, q := range s.list {
		if overlaps(c, q) {
			s.buf = append(s.buf, s.spans[i])
		}
	}
	// The order among spans with one lo does not change the union's gaps.
	slices.SortFunc(s.buf, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	return s.buf
}
