package plan_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fxport/fxport/targets/executorch/plan"
)

// Property: on random programs with while_loops, no two tensors live at one
// step of a run (the loop unrolled 0, 1 and 3 times, in the emitted order,
// each body value live once per iteration) share bytes; the carried slots,
// the body values live together and the values live across the loop are
// all kept apart; per-iteration lifetimes never raise the max-live lower
// bound over whole-loop ones; the plan is deterministic; many programs plan
// smaller than with whole-loop lifetimes.
func TestRandomWhileProgramsNeverOverlap(t *testing.T) {
	smaller := checkRandomLoopPrograms(t, rand.New(rand.NewPCG(5, 6)), "random_while.fxir", randomWhileProgram)
	if smaller < 30 {
		t.Errorf("only %d of 150 programs planned smaller with per-iteration lifetimes", smaller)
	}
}

// The while trace checker must catch an overlap (a test that can fail):
// move a body value onto the carried slot.
func TestWhileTraceCheckerCatchesBugs(t *testing.T) {
	p := parse(t, `graph forward(%n: i64[], %x: f32[16]) {
  %w: i64[], %w_1: f32[16] = higher_order.while_loop(^c, ^b, [%n, %x], [%x])
  ^c(%i: i64[], %acc: f32[16], %step: f32[16]) {
    %lt: b8[] = aten.lt.Scalar(%i, 3)
    return %lt
  }
  ^b(%i: i64[], %acc: f32[16], %step: f32[16]) {
    %inc: i64[] = aten.add.Scalar(%i, 1)
    %m: f32[16] = aten.mul.Tensor(%acc, %step)
    %s: f32[16] = aten.add.Tensor(%m, %acc)
    return %inc, %s
  }
  %out: f32[16] = aten.add.Tensor(%w_1, %x)
  return %out
}
`)
	pl := mustPlan(t, p, plan.DefaultOptions())
	for _, k := range []int{0, 2} {
		if err := checkLoopTrace(p, pl, k); err != nil {
			t.Fatalf("%d trips: %v\n%s", k, err, pl.Table())
		}
	}
	slot := alloc(t, pl, p, "w_1")
	g := p.Main.Nodes()[0].Args[1].Graph
	for i, e := range pl.Values {
		if e.Value == g.Value("m") {
			pl.Values[i].Offset = slot.Offset
		}
	}
	if checkLoopTrace(p, pl, 2) == nil {
		t.Fatal("a body value overlapping the carried slot was not reported")
	}
}

// randomWhileProgram writes a program over f32 vectors with top-level
// while_loops: a carried i64 counter and carried vectors, additional
// vector inputs, a body of relu / neg / add nodes returning computed
// values or its inputs unchanged, and main-graph nodes around the loops.
func randomWhileProgram(r *rand.Rand, views bool) string {
	var b strings.Builder
	g := &randProgram{r: r, views: views}
	vals, decl := g.vectors()
	fmt.Fprintf(&b, "graph forward(%%n: i64[], %s) {\n", strings.Join(decl, ", "))
	vals = g.steps(&b, "  ", vals, r.IntN(4))
	for loops := 1 + r.IntN(2); loops > 0; loops-- {
		var carried, extra []randVal
		for i := 0; i < 1+r.IntN(3); i++ {
			carried = append(carried, vals[r.IntN(len(vals))])
		}
		for i := 0; i < r.IntN(3); i++ {
			extra = append(extra, vals[r.IntN(len(vals))])
		}
		res := []string{"%" + g.name() + ": i64[]"}
		cargs, eargs := []string{"%n"}, []string{}
		var out []randVal
		for _, c := range carried {
			v := randVal{g.name(), c.n, false}
			out = append(out, v)
			res = append(res, fmt.Sprintf("%%%s: f32[%d]", v.name, v.n))
			cargs = append(cargs, "%"+c.name)
		}
		for _, e := range extra {
			eargs = append(eargs, "%"+e.name)
		}
		cn, bn := g.name(), g.name()
		fmt.Fprintf(&b, "  %s = higher_order.while_loop(^%s, ^%s, [%s], [%s])\n", strings.Join(res, ", "), cn, bn, strings.Join(cargs, ", "), strings.Join(eargs, ", "))
		for _, gn := range []string{cn, bn} {
			cnt := g.name()
			ins := []string{"%" + cnt + ": i64[]"}
			var rvals []randVal
			for _, v := range append(append([]randVal(nil), carried...), extra...) {
				w := randVal{g.name(), v.n, false}
				rvals = append(rvals, w)
				ins = append(ins, fmt.Sprintf("%%%s: f32[%d]", w.name, w.n))
			}
			fmt.Fprintf(&b, "  ^%s(%s) {\n", gn, strings.Join(ins, ", "))
			if gn == cn {
				lt := g.name()
				fmt.Fprintf(&b, "    %%%s: b8[] = aten.lt.Scalar(%%%s, 3)\n    return %%%s\n  }\n", lt, cnt, lt)
				continue
			}
			inc := g.name()
			fmt.Fprintf(&b, "    %%%s: i64[] = aten.add.Scalar(%%%s, 1)\n", inc, cnt)
			inner := g.steps(&b, "    ", rvals, r.IntN(5))
			outs := []string{"%" + inc}
			for _, c := range carried {
				var cands []string
				for _, v := range inner {
					if v.n == c.n {
						cands = append(cands, "%"+v.name)
					}
				}
				outs = append(outs, cands[r.IntN(len(cands))])
			}
			fmt.Fprintf(&b, "    return %s\n  }\n", strings.Join(outs, ", "))
		}
		vals = append(vals, out...)
		vals = g.steps(&b, "  ", vals, r.IntN(4))
	}
	fmt.Fprintf(&b, "  return %%%s\n}\n", vals[len(vals)-1].name)
	return b.String()
}
