package plan

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// unionOf must give the union that sorting the sets' concatenation by lo
// and merging overlapping or touching spans gives (what busy did before).
func TestUnionOfMatchesSortedMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 16))
	var heads, heap []int
	for iter := 0; iter < 3000; iter++ {
		var sets [][]span
		var all []span
		for range r.IntN(12) {
			// A sorted, disjoint set, as spaceIndex keeps.
			var set []span
			at := int64(r.IntN(4)) * 16
			for range r.IntN(8) {
				lo := at + int64(r.IntN(4))*16
				hi := lo + 16*int64(1+r.IntN(4))
				set = append(set, span{lo, hi})
				at = hi + 16*int64(r.IntN(2))
				if at == hi {
					at += 16 // disjoint, not touching, within one set
				}
			}
			if len(set) > 0 || r.IntN(2) == 0 {
				sets = append(sets, set)
			}
			all = append(all, set...)
		}
		slices.SortFunc(all, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
		var want []span
		for _, s := range all {
			if n := len(want); n > 0 && s.lo <= want[n-1].hi {
				want[n-1].hi = max(want[n-1].hi, s.hi)
				continue
			}
			want = append(want, s)
		}
		var got []span
		got, heads, heap = unionOf(sets, heads, heap, nil)
		if len(sets) == 1 {
			// One set is returned as it is (already sorted and disjoint).
			want = append([]span(nil), sets[0]...)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("sets %v: union %v, want %v", sets, got, want)
		}
		for _, need := range []int64{16, 32, 64} {
			for _, best := range []bool{false, true} {
				if a, b := gapFor(got, need, 16, best), gapFor(all, need, 16, best); a != b {
					t.Fatalf("sets %v: gapFor(%d, best=%v) %d on the union, %d on every span", sets, need, best, a, b)
				}
			}
		}
	}
}
