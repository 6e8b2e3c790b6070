package plan

import (
	"sort"
)

// alignUp rounds n up to a multiple of a.
func alignUp(n, a int64) int64 {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

// overlaps reports whether two classes are live at one position.
func overlaps(a, b *class) bool {
	if a.start > b.end || b.start > a.end {
		return false
	}
	return len(a.segs) == 1 && len(b.segs) == 1 || segsOverlap(a.segs, b.segs)
}

// placement is one candidate: offsets by class id and the arena size.
type placement struct {
	name   string
	offset []int64
	arena  int64
	// work counts the busy spans the placement's steps read (one more per
	// step): what the search's budget is spent in.
	work int64
}

// orders are the placement orders tried; the smallest arena wins (ties go
// to the earlier order).
var orders = []struct {
	name string
	less func(a, b *class) bool
}{
	{"greedy by size", func(a, b *class) bool {
		if a.size != b.size {
			return a.size > b.size
		}
		return a.start < b.start
	}},
	{"greedy by size×lifetime", func(a, b *class) bool {
		wa, wb := a.size*int64(a.end-a.start+1), b.size*int64(b.end-b.start+1)
		if wa != wb {
			return wa > wb
		}
		return a.start < b.start
	}},
	{"first fit by definition", func(a, b *class) bool {
		if a.start != b.start {
			return a.start < b.start
		}
		return a.size > b.size
	}},
	{"greedy by lifetime", func(a, b *class) bool {
		la, lb := a.end-a.start, b.end-b.start
		if la != lb {
			return la > lb
		}
		return a.size > b.size
	}},
}

// place runs one greedy first-fit placement of the planned classes. With
// bound > 0 it stops as soon as the arena reaches bound: the placement is
// then incomplete, and its arena (at least bound) tells the caller, which
// keeps only a placement smaller than bound, that it lost.
func place(classes []*class, align int64, name string, less func(a, b *class) bool, bestFit bool, bound int64) placement {
	var todo []*class
	for _, c := range classes {
		if c.planned && c.size > 0 {
			todo = append(todo, c)
		}
	}
	sort.SliceStable(todo, func(i, j int) bool {
		if less(todo[i], todo[j]) {
			return true
		}
		if less(todo[j], todo[i]) {
			return false
		}
		return todo[i].id < todo[j].id
	})
	pl := placement{name: name, offset: make([]int64, len(classes))}
	live := newSpaceSet(todo)
	defer live.release()
	for _, c := range todo {
		need := alignUp(c.size, align)
		off := gapFor(live.busy(c), need, align, bestFit)
		pl.offset[c.id] = off
		if off+need > pl.arena {
			pl.arena = off + need
			if bound > 0 && pl.arena >= bound {
				// The arena only grows: this placement cannot win.
				pl.work = live.work
				return pl
			}
		}
		live.add(c, span{off, off + need})
	}
	pl.work = live.work
	return pl
}

type span struct{ lo, hi int64 }

// gapFor finds an offset for a block of need bytes among busy spans (sorted
// by lo): the first gap that fits, or with bestFit the smallest such gap
// (the space above every span counts as an unbounded gap, used only when no
// bounded gap fits).
func gapFor(busy []span, need, align int64, bestFit bool) int64 {
	off := int64(0)
	best, bestSize := int64(-1), int64(-1)
	for _, s := range busy {
		if off+need <= s.lo {
			if !bestFit {
				return off
			}
			if g := s.lo - off; bestSize < 0 || g < bestSize {
				best, bestSize = off, g
			}
		}
		if s.hi > off {
			off = alignUp(s.hi, align)
		}
	}
	if best >= 0 {
		return best
	}
	return off
}

// maxLive is the largest total aligned size of classes live at one point.
func maxLive(classes []*class, align int64) int64 {
	type ev struct {
		at    int
		delta int64
	}
	var evs []ev
	for _, c := range classes {
		if !c.planned || c.size == 0 {
			continue
		}
		s := alignUp(c.size, align)
		for _, g := range c.segs {
			evs = append(evs, ev{g.Start, s}, ev{g.End + 1, -s})
		}
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].at != evs[j].at {
			return evs[i].at < evs[j].at
		}
		return evs[i].delta < evs[j].delta // ends before starts at one point
	})
	var cur, best int64
	for _, e := range evs {
		cur += e.delta
		if cur > best {
			best = cur
		}
	}
	return best
}
