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

// searchWorkPerClass is the search's budget in busy spans read
// (placement.work) per class: the search stops at the first round, or
// bounded limit, that starts with the budget spent, and keeps the best
// placement found. A step reads the spans of the placed classes live
// alongside its class, so a program whose long-lived values pile up (every
// block's KV-cache write-back lives to the end) pays more per step as it
// grows: without a budget the search's time grew with classes × those
// spans (the genuine decoder stack: 5.3 s at 10k nodes, 150 s at 100k).
// The budget is what the search's 2 × searchRounds placements read at
// spansPerStep spans a step, so it is linear in the classes: a program
// whose steps read fewer runs every round, one whose steps read more runs
// fewer. (The whole search on the 10k-node decoder stack reads 15,400 spans
// per class and reaches the lower bound in round 170: under the budget.)
var searchWorkPerClass int64 = 2 * searchRounds * spansPerStep

// spansPerStep is the busy spans per placement step the budget allows for.
const spansPerStep = 32

// search looks for a smaller arena than bound when the fixed orders leave a
// gap to the lower bound: it places classes in orders perturbed from
// size-descending (each class's key is size × lifetime^β × a jitter factor;
// β is drawn in [0, 2) per round and the jitter in [0.5, 1.5) per class, from
// a fixed seed), first fit and best fit, and keeps the
// smallest arena, until the budget (searchWorkPerClass) is spent. The seed
// is constant and the work counted, not timed, so plans are deterministic.
//
// spent is the work of the placements it ran.
func search(classes []*class, align, bound int64) (best placement, found bool, spent int64) {
	lb := maxLive(classes, align)
	r := rand.New(rand.NewPCG(0x6678706f7274, uint64(len(classes))))
	key := make([]float64, len(classes))
	budget := searchWorkPerClass * int64(len(classes))
	for round := 0; round < searchRounds && spent < budget; round++ {
		beta := 2 * r.Float64()
		for i, c := range classes {
			key[i] = float64(c.size) * math.Pow(float64(c.end-c.start+1), beta) * (0.5 + r.Float64())
		}
		less := func(a, b *class) bool { return key[a.id] > key[b.id] }
		for _, fit := range []bool{false, true} {
			pl := place(classes, align, fmt.Sprintf("perturbed greedy, round %d", round), less, fit, bound)
			spent += pl.work
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
	for limit := alignUp(lb, align); limit < bound && spent < budget; limit = alignUp(limit+limit/100+1, align) {
		for _, o := range orders {
			for _, q := range []int{2, 4, 8} {
				minLife := 1 << 30
				if len(lifes) > 0 {
					minLife = lifes[len(lifes)-len(lifes)/q-1]
				}
				pl, ok := placeBounded(classes, align, limit, o.less, minLife)
				spent += pl.work
				if ok && pl.arena < bound {
					pl.name = "bounded two-ended fit, " + o.name
					return pl, true, spent
				}
			}
		}
	}
	return best, found, spent
}
