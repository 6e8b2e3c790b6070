package plan_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/plan"
)

// Shared by the random while_loop and scan programs (while_test.go,
// scan_random_test.go): the property check and the pieces of the
// generators.

// checkRandomLoopPrograms checks, on 150 programs gen writes from r (views
// off), that no two tensors live at one step of a run (each loop taking 0,
// 1 and 3 iterations, in the emitted order) share bytes, that
// per-iteration lifetimes never raise the max-live lower bound over
// whole-loop ones, and that the plan is deterministic. It returns how many
// programs planned smaller than with whole-loop lifetimes; file names the
// programs in errors.
func checkRandomLoopPrograms(t *testing.T, r *rand.Rand, file string, gen func(*rand.Rand, bool) string) (smaller int) {
	t.Helper()
	for iter := 0; iter < 150; iter++ {
		src := gen(r, false)
		p, pl := planRandom(t, fmt.Sprintf("iteration %d", iter), src, file)
		for _, k := range []int{0, 1, 3} {
			if err := checkLoopTrace(p, pl, k); err != nil {
				t.Fatalf("iteration %d, %d trips: %v\n%s\n%s", iter, k, err, src, pl.Table())
			}
		}
		again, err := plan.Compute(p, plan.DefaultOptions())
		if err != nil || again.Table() != pl.Table() {
			t.Fatalf("iteration %d: plan not deterministic", iter)
		}
		whole, err := plan.Compute(p, plan.WholeLoopOptions(plan.DefaultOptions()))
		if err != nil {
			t.Fatalf("iteration %d: whole-loop plan: %v\n%s", iter, err, src)
		}
		if pl.MaxLiveLowerBound > whole.MaxLiveLowerBound {
			t.Fatalf("iteration %d: per-iteration lower bound %d above the whole-loop one %d\n%s", iter, pl.MaxLiveLowerBound, whole.MaxLiveLowerBound, src)
		}
		if pl.Planned() < whole.Planned() {
			smaller++
		}
	}
	t.Logf("%d of 150 programs planned smaller than with whole-loop lifetimes", smaller)
	return smaller
}

// planRandom parses src (file), plans it with the default options and
// checks that no two values live together share bytes (checkNoOverlap);
// what names the program in failures ("iteration 3").
func planRandom(t *testing.T, what, src, file string) (*ir.Program, *plan.Plan) {
	t.Helper()
	p, err := ir.Parse([]byte(src), file)
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, src)
	}
	pl, err := plan.Compute(p, plan.DefaultOptions())
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, src)
	}
	if err := checkNoOverlap(pl); err != nil {
		t.Fatalf("%s: %v\n%s\n%s", what, err, src, pl.Table())
	}
	return p, pl
}

// randVal is a value of a random program: an f32 vector of n elements.
type randVal struct {
	name string
	n    int
	view bool // an et_view alias (never returned by a region)
}

// randProgram hands out the value names of one random program and writes
// its element-wise steps.
type randProgram struct {
	r     *rand.Rand
	views bool // some steps are et_view aliases
	fresh int
}

func (g *randProgram) name() string {
	g.fresh++
	return fmt.Sprintf("v%d", g.fresh)
}

// vectors makes one to three vectors of 1 to 40 elements and their
// declarations ("%v1: f32[7]").
func (g *randProgram) vectors() (vals []randVal, decl []string) {
	for i := 0; i < 1+g.r.IntN(3); i++ {
		v := randVal{g.name(), 1 + g.r.IntN(40), false}
		vals = append(vals, v)
		decl = append(decl, fmt.Sprintf("%%%s: f32[%d]", v.name, v.n))
	}
	return vals, decl
}

// steps writes n nodes to w, each line starting with indent: a relu or
// neg of one of vals, an add of two of the same size, or (with views) an
// et_view alias of one. It returns vals with the new values appended.
func (g *randProgram) steps(w *strings.Builder, indent string, vals []randVal, n int) []randVal {
	r := g.r
	for i := 0; i < n; i++ {
		a := vals[r.IntN(len(vals))]
		if g.views && r.IntN(4) == 0 {
			v := randVal{g.name(), a.n, true}
			fmt.Fprintf(w, "%s%%%s: f32[%d] = executorch_prim.et_view.default(%%%s, [%d])\n", indent, v.name, v.n, a.name, v.n)
			vals = append(vals, v)
			continue
		}
		v := randVal{g.name(), a.n, false}
		var same []randVal
		for _, c := range vals {
			if c.n == a.n {
				same = append(same, c)
			}
		}
		if r.IntN(3) == 0 {
			c := same[r.IntN(len(same))]
			fmt.Fprintf(w, "%s%%%s: f32[%d] = aten.add.Tensor(%%%s, %%%s)\n", indent, v.name, v.n, a.name, c.name)
		} else {
			op := []string{"aten.relu.default", "aten.neg.default"}[r.IntN(2)]
			fmt.Fprintf(w, "%s%%%s: f32[%d] = %s(%%%s)\n", indent, v.name, v.n, op, a.name)
		}
		vals = append(vals, v)
	}
	return vals
}
