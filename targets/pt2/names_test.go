package pt2

import (
	"fmt"
	"math/rand"
	"testing"
)

// fresh names what the plain search from base, base_1, … names, whatever
// other names are taken between calls.
func TestFreshNamesMatchPlainSearch(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	bases := []string{"topk", "max_pool2d_with_indices", "node"}
	fast, plain := newNames(), map[string]bool{}
	for i := 0; i < 3000; i++ {
		if rng.Intn(3) == 0 { // a value name that may collide with a later candidate
			v := fmt.Sprintf("%s_%d", bases[rng.Intn(len(bases))], rng.Intn(400))
			if rng.Intn(5) == 0 {
				v = bases[rng.Intn(len(bases))]
			}
			fast.add(v)
			plain[v] = true
			continue
		}
		base := bases[rng.Intn(len(bases))]
		want := base
		for k := 1; plain[want]; k++ {
			want = fmt.Sprintf("%s_%d", base, k)
		}
		plain[want] = true
		if got := fast.fresh(base); got != want {
			t.Fatalf("call %d: fresh(%q) = %q, want %q", i, base, got, want)
		}
	}
}
