package plan

import "math/bits"

// lifetimeIndex holds the classes placed so far and finds those whose
// lifetime overlaps a given class's (overlaps), so that each greedy
// placement step reads only the classes live alongside it instead of every
// placed class: placing n classes costs O(n log n) plus the overlapping
// pairs, not O(n²). A placed hull [start, end] meets [a, b] when it holds
// a (a segment tree over positions keeps each hull at its canonical nodes)
// or starts in (a, b] (classes by start, with a bitset of the starts in
// use).
type lifetimeIndex struct {
	base    int        // the first position (inputs live from -1): index 0
	leaves  int        // a power of two above every position
	tree    [][]*class // segment tree: node i covers a range of positions
	byStart [][]*class
	starts  []uint64
}

// newLifetimeIndex sizes an index for classes; ok is false when a class's
// hull is empty or spans more positions than the index holds (the callers
// then compare every pair, as before).
func newLifetimeIndex(classes []*class) (*lifetimeIndex, bool) {
	if len(classes) == 0 {
		return nil, false
	}
	lo, hi := classes[0].start, classes[0].end
	for _, c := range classes {
		if c.end < c.start {
			return nil, false
		}
		lo, hi = min(lo, c.start), max(hi, c.end)
	}
	if lo < -1<<30 || hi >= 1<<30 || hi-lo >= 1<<30 {
		return nil, false
	}
	n := hi - lo + 1
	leaves := 1 << bits.Len(uint(n))
	return &lifetimeIndex{
		base:    lo,
		leaves:  leaves,
		tree:    make([][]*class, 2*leaves),
		byStart: make([][]*class, n),
		starts:  make([]uint64, (n+63)/64),
	}, true
}

// add records a placed class.
func (x *lifetimeIndex) add(c *class) {
	start, end := c.start-x.base, c.end-x.base
	for l, r := start+x.leaves, end+x.leaves+1; l < r; l, r = l>>1, r>>1 {
		if l&1 == 1 {
			x.tree[l] = append(x.tree[l], c)
			l++
		}
		if r&1 == 1 {
			r--
			x.tree[r] = append(x.tree[r], c)
		}
	}
	x.byStart[start] = append(x.byStart[start], c)
	x.starts[start/64] |= 1 << (start % 64)
}

// overlapping appends to out the placed classes that overlap c (each once,
// in no particular order) and returns it.
func (x *lifetimeIndex) overlapping(c *class, out []*class) []*class {
	start, end := c.start-x.base, c.end-x.base
	for i := start + x.leaves; i >= 1; i >>= 1 {
		for _, q := range x.tree[i] {
			if overlaps(c, q) {
				out = append(out, q)
			}
		}
	}
	// Hulls starting in (c.start, c.end]: they do not hold c.start, so
	// the walk above did not see them.
	lo, hi := start+1, min(end, len(x.byStart)-1)
	for w := lo / 64; lo <= hi && w <= hi/64; w++ {
		word := x.starts[w]
		if w == lo/64 {
			word &^= 1<<(lo%64) - 1
		}
		if w == hi/64 && hi%64 != 63 {
			word &= 1<<(hi%64+1) - 1
		}
		for word != 0 {
			t := w*64 + bits.TrailingZeros64(word)
			word &= word - 1
			for _, q := range x.byStart[t] {
				if overlaps(c, q) {
					out = append(out, q)
				}
			}
		}
	}
	return out
}

// placedSet is the classes placed so far: a lifetimeIndex, or a plain list
// compared pair by pair when the index cannot hold the classes.
type placedSet struct {
	index *lifetimeIndex
	list  []*class
	buf   []*class
}

func newPlaced(classes []*class) *placedSet {
	x, ok := newLifetimeIndex(classes)
	if !ok {
		x = nil
	}
	return &placedSet{index: x}
}

func (s *placedSet) add(c *class) {
	if s.index != nil {
		s.index.add(c)
		return
	}
	s.list = append(s.list, c)
}

// overlapping returns the placed classes that overlap c (valid until the
// next call).
func (s *placedSet) overlapping(c *class) []*class {
	s.buf = s.buf[:0]
	if s.index != nil {
		s.buf = s.index.overlapping(c, s.buf)
		return s.buf
	}
	for _, q := range s.list {
		if overlaps(c, q) {
			s.buf = append(s.buf, q)
		}
	}
	return s.buf
}
