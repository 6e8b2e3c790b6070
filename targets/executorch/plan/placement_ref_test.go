package plan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// The placements as they were before lifetimeIndex: every class compared
// with every placed class (O(n²)). TestPlacementsMatchRef checks that the
// indexed versions place every class at the same offset.

// placeRef is place before lifetimeIndex.
func placeRef(classes []*class, align int64, name string, less func(a, b *class) bool, bestFit bool) placement {
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
	var placed []*class
	for _, c := range todo {
		type bspan struct{ lo, hi int64 }
		var busy []bspan
		for _, q := range placed {
			if overlaps(c, q) {
				busy = append(busy, bspan{pl.offset[q.id], pl.offset[q.id] + alignUp(q.size, align)})
			}
		}
		sort.Slice(busy, func(i, j int) bool { return busy[i].lo < busy[j].lo })
		need := alignUp(c.size, align)
		off := gapFor(busy2(busy), need, align, bestFit)
		pl.offset[c.id] = off
		if off+need > pl.arena {
			pl.arena = off + need
		}
		placed = append(placed, c)
	}
	return pl
}

// placeBoundedRef is placeBounded before lifetimeIndex.
func placeBoundedRef(classes []*class, align, limit int64, less func(a, b *class) bool, minLife int) (placement, bool) {
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
	var placed []*class
	for _, c := range todo {
		var busy []span
		for _, q := range placed {
			if overlaps(c, q) {
				busy = append(busy, span{pl.offset[q.id], pl.offset[q.id] + alignUp(q.size, align)})
			}
		}
		sort.Slice(busy, func(i, j int) bool { return busy[i].lo < busy[j].lo })
		need := alignUp(c.size, align)
		// Free gaps within [0, limit).
		var gaps []span
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
			return placement{}, false
		}
		pl.offset[c.id] = at
		if at+need > pl.arena {
			pl.arena = at + need
		}
		placed = append(placed, c)
	}
	return pl, true
}

// placeExirRef is placeExir before lifetimeIndex.
func placeExirRef(classes []*class, align int64) placement {
	var todo []*class
	for _, c := range classes {
		if c.planned && c.size > 0 {
			todo = append(todo, c)
		}
	}
	sort.SliceStable(todo, func(i, j int) bool {
		si, sj := alignUp(todo[i].size, align), alignUp(todo[j].size, align)
		if si != sj {
			return si > sj
		}
		return todo[i].id > todo[j].id
	})
	type member struct {
		c   *class
		off int64 // within the object
	}
	type object struct {
		size    int64
		members []member
	}
	var objs []*object
	in := make([]int, len(classes))
	within := make([]int64, len(classes))
	for _, c := range todo {
		need := alignUp(c.size, align)
		k, at := -1, int64(0)
		for i, o := range objs {
			free := true
			for _, m := range o.members {
				if overlaps(c, m.c) {
					free = false
					break
				}
			}
			if free {
				k = i
				break
			}
		}
		if k < 0 {
			for i, o := range objs {
				top := int64(0)
				for _, m := range o.members {
					if overlaps(c, m.c) {
						top = max(top, m.off+alignUp(m.c.size, align))
					}
				}
				if top > 0 && top+need <= o.size {
					k, at = i, top
					break
				}
			}
		}
		if k < 0 {
			k = len(objs)
			objs = append(objs, &object{size: need})
		}
		objs[k].members = append(objs[k].members, member{c, at})
		in[c.id], within[c.id] = k, at
	}
	pl := placement{name: exirOrderName, offset: make([]int64, len(classes))}
	base := make([]int64, len(objs))
	for i, o := range objs {
		base[i] = pl.arena
		pl.arena += o.size
	}
	for _, c := range todo {
		pl.offset[c.id] = base[in[c.id]] + within[c.id]
	}
	return pl
}

func busy2[T ~struct{ lo, hi int64 }](b []T) []span {
	out := make([]span, len(b))
	for i, s := range b {
		out[i] = span(s)
	}
	return out
}

// randomClasses makes n classes with random sizes (ties and zero sizes
// included) and lifetimes, some of several segments, some unplanned.
func randomClasses(rng *rand.Rand, n, horizon int) []*class {
	sizes := []int64{0, 1, 4, 16, 17, 64, 100, 256, 1000, 4096}
	out := make([]*class, n)
	for i := range out {
		c := &class{id: i, planned: rng.IntN(10) > 0, size: sizes[rng.IntN(len(sizes))]}
		if rng.IntN(3) == 0 {
			c.size = int64(1 + rng.IntN(5000))
		}
		start := rng.IntN(horizon+1) - 1 // inputs live from -1
		length := rng.IntN(1 + horizon/8)
		if rng.IntN(10) == 0 {
			length = rng.IntN(horizon)
		}
		at := start
		for k := 0; k < 1+rng.IntN(3) && at < horizon; k++ {
			end := min(horizon-1, at+rng.IntN(1+length))
			c.segs = append(c.segs, Span{Start: at, End: end})
			at = end + 2 + rng.IntN(1+length)
			if rng.IntN(2) == 0 {
				break
			}
		}
		c.start, c.end = c.segs[0].Start, c.segs[len(c.segs)-1].End
		out[i] = c
	}
	return out
}

func samePlacement(t *testing.T, what string, got, want placement) {
	t.Helper()
	if got.arena != want.arena || got.name != want.name || !slices.Equal(got.offset, want.offset) {
		t.Fatalf("%s: arena %d offsets %v, reference arena %d offsets %v", what, got.arena, got.offset, want.arena, want.offset)
	}
}

// The indexed placements (lifetimeIndex) give every class the offset the
// pairwise ones gave, on random classes: every greedy order with first
// and best fit, exir's shared objects, and the bounded two-ended fit.
func TestPlacementsMatchRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	bounded := 0
	for iter := range 300 {
		classes := randomClasses(rng, 1+rng.IntN(120), 1+rng.IntN(200))
		align := int64(1) << rng.IntN(6)
		for _, fit := range []bool{false, true} {
			for _, o := range orders {
				what := fmt.Sprintf("iteration %d, %s, best fit %v", iter, o.name, fit)
				samePlacement(t, what, place(classes, align, o.name, o.less, fit, 0), placeRef(classes, align, o.name, o.less, fit))
			}
		}
		samePlacement(t, fmt.Sprintf("iteration %d, exir", iter), placeExir(classes, align), placeExirRef(classes, align))
		lb := maxLive(classes, align)
		for _, o := range orders {
			limit := lb + int64(rng.IntN(int(lb/4+1)))
			minLife := rng.IntN(50)
			got, ok := placeBounded(classes, align, limit, o.less, minLife)
			want, wantOK := placeBoundedRef(classes, align, limit, o.less, minLife)
			if ok != wantOK {
				t.Fatalf("iteration %d, bounded %s: ok %v, reference %v", iter, o.name, ok, wantOK)
			}
			if ok {
				bounded++
				samePlacement(t, fmt.Sprintf("iteration %d, bounded %s", iter, o.name), got, want)
			}
		}
	}
	if bounded == 0 {
		t.Fatal("no bounded placement fit: that comparison tested nothing")
	}
}

// Larger random programs shaped like a stack of blocks (short-lived values
// plus values that live across most of the program, as mutable buffers and
// their write-backs do) place every class where the pairwise reference
// does; a placement given a bound stops early exactly when it would not
// beat the bound, and is otherwise the unbounded one.
func TestPlacementsMatchRefLongLived(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := range 5 {
		horizon := 200 + rng.IntN(1500)
		classes := randomClasses(rng, 200+rng.IntN(300), horizon)
		for _, c := range classes {
			if rng.IntN(8) == 0 && len(c.segs) == 1 {
				c.segs[0].End = horizon - 1 - rng.IntN(3)
				c.end = c.segs[0].End
			}
		}
		align := int64(16)
		for _, fit := range []bool{false, true} {
			for _, o := range orders {
				what := fmt.Sprintf("iteration %d, %s, best fit %v", iter, o.name, fit)
				want := placeRef(classes, align, o.name, o.less, fit)
				samePlacement(t, what, place(classes, align, o.name, o.less, fit, 0), want)
				for _, bound := range []int64{want.arena, want.arena + 1, want.arena / 2} {
					got := place(classes, align, o.name, o.less, fit, bound)
					if (got.arena < bound) != (want.arena < bound) {
						t.Fatalf("%s, bound %d: arena %d, unbounded %d", what, bound, got.arena, want.arena)
					}
					if want.arena < bound {
						samePlacement(t, what+" with a bound", got, want)
					}
				}
			}
		}
		lb := maxLive(classes, align)
		for _, o := range orders {
			limit := alignUp(lb+lb/8, align)
			got, ok := placeBounded(classes, align, limit, o.less, horizon/4)
			want, wantOK := placeBoundedRef(classes, align, limit, o.less, horizon/4)
			if ok != wantOK {
				t.Fatalf("iteration %d, bounded %s: ok %v, reference %v", iter, o.name, ok, wantOK)
			}
			if ok {
				samePlacement(t, fmt.Sprintf("iteration %d, bounded %s", iter, o.name), got, want)
			}
		}
	}
}
