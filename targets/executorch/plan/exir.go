package plan

import (
	"slices"
	"sort"
)

// exirOrderName names the placement that reproduces exir's greedy planner.
const exirOrderName = "exir greedy"

// overlapsTimes reports whether c is live at a position of times (sorted,
// disjoint half-open spans of positions).
func overlapsTimes(c *class, times []span) bool {
	for _, g := range c.segs {
		a, b := int64(g.Start), int64(g.End)+1
		// The first span ending after a; it overlaps [a, b) when it starts
		// before b.
		i, _ := slices.BinarySearchFunc(times, a, func(t span, a int64) int {
			if t.hi <= a {
				return -1
			}
			return 1
		})
		if i < len(times) && times[i].lo < b {
			return true
		}
	}
	return false
}

// placeExir places classes the way exir's greedy memory planner
// (exir/memory_planning.py: greedy and pick_shared_obj) does, so that
// programs exir would plan the same way get its offsets.
//
// Order: exir sorts its tensor specs by allocated_memory, which is the
// byte size already rounded up to the alignment (TensorSpec's
// allocated_memory property aligns nbytes to spec.alignment, 16 by
// default), inserting each spec after the equal ones of an ascending list
// (bisect.insort) and then reversing the list: largest aligned size first,
// and classes of equal aligned size in reverse collection order. Class ids
// follow exir's collection order (graph inputs, then node results in
// program order), so a 12-byte and a 16-byte tensor tie, the later one
// first (ecn_portable_add_i64_f32: i64[1] and f32[1] tensors all take 16
// bytes).
//
// Placement: a class joins the first shared object (in the order they were
// opened) none of whose members it overlaps, at the object's start;
// otherwise the first object in which it fits above every member it
// overlaps (at the highest end of those members, when that leaves room
// within the object's size: exir's allow_overlapping_allocations, on by
// default); otherwise it opens a new object sized to it. Objects never grow
// (the first member is the largest) and are laid out one after another in
// the order they were opened.
func placeExir(classes []*class, align int64) placement {
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
	type object struct {
		size int64
		// times is the union of the members' live positions, as sorted,
		// disjoint half-open spans [start, end+1), and full that of the
		// members reaching the object's end: whether a class overlaps some
		// member is a binary search, and one overlapping a member of full
		// finds no room above it.
		times, full []span
	}
	var objs []*object
	in := make([]int, len(classes))
	within := make([]int64, len(classes))
	live := newPlaced(todo)
	// top[k] is the end of the highest member of object k that overlaps c
	// (0: none), for the objects in busy.
	var top []int64
	var busy, roomy []int
	for _, c := range todo {
		need := alignUp(c.size, align)
		// The first object no member of which overlaps c (in a stack of
		// blocks nearly always one of the first few, while the values live
		// alongside c, and the objects holding them, number thousands).
		// roomy: the objects passed over that may have room above the
		// members c overlaps.
		k, at := -1, int64(0)
		roomy = roomy[:0]
		for i, o := range objs {
			if !overlapsTimes(c, o.times) {
				k = i
				break
			}
			if !overlapsTimes(c, o.full) {
				roomy = append(roomy, i)
			}
		}
		if k < 0 && len(roomy) > 0 {
			// Every object is busy: the first with room above the members
			// of it that overlap c.
			busy = busy[:0]
			for _, q := range live.overlapping(c) {
				i := in[q.id]
				for len(top) <= i {
					top = append(top, 0)
				}
				if top[i] == 0 {
					busy = append(busy, i)
				}
				top[i] = max(top[i], within[q.id]+alignUp(q.size, align))
			}
			for _, i := range roomy {
				if top[i]+need <= objs[i].size {
					k, at = i, top[i]
					break
				}
			}
			for _, i := range busy {
				top[i] = 0
			}
		}
		if k < 0 {
			k = len(objs)
			objs = append(objs, &object{size: need})
		}
		o := objs[k]
		for _, g := range c.segs {
			t := span{int64(g.Start), int64(g.End) + 1}
			o.times = insertSpan(o.times, t)
			if at+need == o.size {
				o.full = insertSpan(o.full, t)
			}
		}
		in[c.id], within[c.id] = k, at
		live.add(c)
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
