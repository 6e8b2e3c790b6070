package plan

import (
	"sort"
)

// placeBounded tries to place every planned class inside an arena of
// limit bytes: classes in the given order, each into a gap left by the
// classes already placed whose lifetimes overlap it. Classes living at
// least minLife node positions go as high as possible (the top of the
// highest gap that fits), the others as low as possible, so long-lived
// values do not split the space short-lived ones need. It fails when a
// class does not fit.
func placeBounded(classes []*class, align, limit int64, less func(a, b *class) bool, minLife int) (placement, bool) {
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
	pl := placement{name: "bounded two-ended fit", offset: make([]int64, len(classes))}
	live := newSpaceSet(todo)
	defer live.release()
	var gaps []span
	for _, c := range todo {
		busy := live.busy(c)
		need := alignUp(c.size, align)
		// Free gaps within [0, limit).
		gaps = gaps[:0]
		off := int64(0)
		for _, s := range busy {
			if s.lo > off {
				gaps = append(gaps, span{off, s.lo})
			}
			if s.hi > off {
				off = s.hi
			}
		}
		if off < limit {
			gaps = append(gaps, span{off, limit})
		}
		at := int64(-1)
		high := c.end-c.start >= minLife
		for i := range gaps {
			g := gaps[i]
			if high {
				g = gaps[len(gaps)-1-i]
			}
			lo := alignUp(g.lo, align)
			if lo+need > g.hi {
				continue
			}
			if high {
				at = (g.hi - need) / align * align
				if at < lo {
					continue
				}
			} else {
				at = lo
			}
			break
		}
		if at < 0 {
			return placement{work: live.work}, false
		}
		pl.offset[c.id] = at
		if at+need > pl.arena {
			pl.arena = at + need
		}
		live.add(c, span{at, at + need})
	}
	pl.work = live.work
	return pl, true
}
