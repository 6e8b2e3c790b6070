package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// searchRounds bounds the perturbation search: each round is two greedy
// placements (first and best fit), each stopped once its arena reaches the
// best found so far.
const searchRounds = 256

// search looks for a smaller arena than bound when the fixed orders leave a
// gap to the lower bound: it places classes in orders perturbed from
// size-descending (each class's key is size × lifetime^β × a jitter factor;
// β is drawn in [0, 2) per round and the jitter in [0.5, 1.5) per class, from
// a fixed seed), first fit and best fit, and keeps the
// smallest arena. The seed is constant, so plans are deterministic.
func search(classes []*class, align, bound int64) (placement, bool) {
	lb := maxLive(classes, align)
	r := rand.New(rand.NewPCG(0x6678706f7274, uint64(len(classes))))
	key := make([]float64, len(classes))
	var best placement
	found := false
	for round := 0; round < searchRounds; round++ {
		beta := 2 * r.Float64()
		for i, c := range classes {
			key[i] = float64(c.size) * math.Pow(float64(c.end-c.start+1), beta) * (0.5 + r.Float64())
		}
		less := func(a, b *class) bool { return key[a.id] > key[b.id] }
		for _, fit := range []bool{false, true} {
			pl := place(classes, align, fmt.Sprintf("perturbed greedy, round %d", round), less, fit, bound)
			if pl.arena < bound {
				best, bound, found = pl, pl.arena, true
			}
		}
		if bound <= lb {
			break
		}
	}
	// Bounded two-ended placement at arenas growing from the lower bound.
	lifes := make([]int, 0, len(classes))
	for _, c := range classes {
		lifes = append(lifes, c.end-c.start)
	}
	sort.Ints(lifes)
	for limit := alignUp(lb, align); limit < bound; limit = alignUp(limit+limit/100+1, align) {
		for _, o := range orders {
			for _, q := range []int{2, 4, 8} {
				minLife := 1 << 30
				if len(lifes) > 0 {
					minLife = lifes[len(lifes)-len(lifes)/q-1]
				}
				if pl, ok := placeBounded(classes, align, limit, o.less, minLife); ok && pl.arena < bound {
					pl.name = "bounded two-ended fit, " + o.name
					return pl, true
				}
			}
		}
	}
	return best, found
}
