package plan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The search stops once its budget is spent, and a budget it does not reach
// changes nothing: on block-shaped random programs where the search runs, a
// zero budget runs no placement, a smaller budget runs a prefix of the
// unlimited search's placements (stopping early only once the budget is
// spent), and one at or above what the unlimited search spends gives the
// same placement.
func TestSearchBudget(t *testing.T) {
	defer func(w int64) { searchWorkPerClass = w }(searchWorkPerClass)
	rng := rand.New(rand.NewPCG(5, 6))
	stopped, same := 0, 0
	for iter := range 12 {
		horizon := 60 + rng.IntN(200)
		classes := randomClasses(rng, 40+rng.IntN(80), horizon)
		for _, c := range classes {
			if rng.IntN(6) == 0 && len(c.segs) == 1 {
				c.segs[0].End = horizon - 1
				c.end = horizon - 1
			}
		}
		align := int64(16)
		// A loose bound, so that the search has a gap to close.
		bound := place(classes, align, "first fit by definition", orders[2].less, false, 0).arena + 1
		if bound <= maxLive(classes, align)+1 {
			continue
		}
		searchWorkPerClass = 1 << 40
		full, fullOK, fullSpent := search(classes, align, bound)
		n := int64(len(classes))

		searchWorkPerClass = 0
		if _, ok, spent := search(classes, align, bound); ok || spent != 0 {
			t.Fatalf("iteration %d: a zero budget found %v after %d spans", iter, ok, spent)
		}
		for _, per := range []int64{1, fullSpent / n / 3, fullSpent / n / 2, (fullSpent + n - 1) / n, 2 * fullSpent / n} {
			searchWorkPerClass = per
			got, ok, spent := search(classes, align, bound)
			what := fmt.Sprintf("iteration %d, budget %d per class (unlimited spends %d)", iter, per, fullSpent)
			switch {
			case spent > fullSpent:
				t.Fatalf("%s: spent %d, more than unlimited", what, spent)
			case spent == fullSpent:
				// The budget ran out, if at all, in the last placement the
				// unlimited search ran: the same search.
				same++
				if ok != fullOK || ok && (got.arena != full.arena || got.name != full.name || !slices.Equal(got.offset, full.offset)) {
					t.Fatalf("%s: the same placements gave found %v arena %d (%s), unlimited %v %d (%s)", what, ok, got.arena, got.name, fullOK, full.arena, full.name)
				}
			default:
				stopped++
				if spent < per*n {
					t.Fatalf("%s: stopped after %d, before the budget %d was spent", what, spent, per*n)
				}
				if ok && got.arena >= bound {
					t.Fatalf("%s: kept arena %d, not below the bound %d", what, got.arena, bound)
				}
			}
			if per*n >= fullSpent && spent != fullSpent {
				t.Fatalf("%s: a budget the search does not reach stopped it after %d", what, spent)
			}
		}
	}
	if stopped == 0 || same == 0 {
		t.Fatalf("budgets that stopped the search: %d, that did not: %d; want both", stopped, same)
	}
}
