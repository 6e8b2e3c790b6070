package plan_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/plan"
)

// Property: on random programs with while_loops, no two tensors live at one
// step of a run (the loop unrolled 0, 1 and 3 times, in the emitted order,
// each body value live once per iteration) share bytes; the carried slots,
// the body values live together and the values live across the loop are
// all kept apart; the plan is deterministic; many programs plan smaller
// than with whole-loop lifetimes.
func TestRandomWhileProgramsNeverOverlap(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	smaller := 0
	for iter := 0; iter < 150; iter++ {
		src := randomWhileProgram(r, false)
		p, err := ir.Parse([]byte(src), "random_while.fxir")
		if err != nil {
			t.Fatalf("iteration %d: %v\n%s", iter, err, src)
		}
		pl, err := plan.Compute(p, plan.DefaultOptions())
		if err != nil {
			t.Fatalf("iteration %d: %v\n%s", iter, err, src)
		}
		if err := checkNoOverlap(pl); err != nil {
			t.Fatalf("iteration %d: %v\n%s\n%s", iter, err, src, pl.Table())
		}
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
			t.Fatal(err)
		}
		if pl.Planned() < whole.Planned() {
			smaller++
		}
	}
	if smaller < 30 {
		t.Errorf("only %d of 150 programs planned smaller with per-iteration lifetimes", smaller)
	}
	t.Logf("%d of 150 programs planned smaller than with whole-loop lifetimes", smaller)
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
	fresh := 0
	name := func() string { fresh++; return fmt.Sprintf("v%d", fresh) }
	type val struct {
		name string
		n    int
		view bool // an et_view alias (never returned by a region)
	}
	ops := func(indent string, vals []val, steps int) []val {
		for i := 0; i < steps; i++ {
			a := vals[r.IntN(len(vals))]
			if views && r.IntN(4) == 0 {
				v := val{name(), a.n, true}
				fmt.Fprintf(&b, "%s%%%s: f32[%d] = executorch_prim.et_view.default(%%%s, [%d])\n", indent, v.name, v.n, a.name, v.n)
				vals = append(vals, v)
				continue
			}
			v := val{name(), a.n, false}
			var same []val
			for _, c := range vals {
				if c.n == a.n {
					same = append(same, c)
				}
			}
			if r.IntN(3) == 0 {
				c := same[r.IntN(len(same))]
				fmt.Fprintf(&b, "%s%%%s: f32[%d] = aten.add.Tensor(%%%s, %%%s)\n", indent, v.name, v.n, a.name, c.name)
			} else {
				op := []string{"aten.relu.default", "aten.neg.default"}[r.IntN(2)]
				fmt.Fprintf(&b, "%s%%%s: f32[%d] = %s(%%%s)\n", indent, v.name, v.n, op, a.name)
			}
			vals = append(vals, v)
		}
		return vals
	}
	var decl []string
	var vals []val
	for i := 0; i < 1+r.IntN(3); i++ {
		v := val{name(), 1 + r.IntN(40), false}
		vals = append(vals, v)
		decl = append(decl, fmt.Sprintf("%%%s: f32[%d]", v.name, v.n))
	}
	fmt.Fprintf(&b, "graph forward(%%n: i64[], %s) {\n", strings.Join(decl, ", "))
	vals = ops("  ", vals, r.IntN(4))
	for loops := 1 + r.IntN(2); loops > 0; loops-- {
		var carried, extra []val
		for i := 0; i < 1+r.IntN(3); i++ {
			carried = append(carried, vals[r.IntN(len(vals))])
		}
		for i := 0; i < r.IntN(3); i++ {
			extra = append(extra, vals[r.IntN(len(vals))])
		}
		res := []string{"%" + name() + ": i64[]"}
		cargs, eargs := []string{"%n"}, []string{}
		var out []val
		for _, c := range carried {
			v := val{name(), c.n, false}
			out = append(out, v)
			res = append(res, fmt.Sprintf("%%%s: f32[%d]", v.name, v.n))
			cargs = append(cargs, "%"+c.name)
		}
		for _, e := range extra {
			eargs = append(eargs, "%"+e.name)
		}
		cn, bn := name(), name()
		fmt.Fprintf(&b, "  %s = higher_order.while_loop(^%s, ^%s, [%s], [%s])\n", strings.Join(res, ", "), cn, bn, strings.Join(cargs, ", "), strings.Join(eargs, ", "))
		for _, gn := range []string{cn, bn} {
			cnt := name()
			ins := []string{"%" + cnt + ": i64[]"}
			var rvals []val
			for _, v := range append(append([]val(nil), carried...), extra...) {
				w := val{name(), v.n, false}
				rvals = append(rvals, w)
				ins = append(ins, fmt.Sprintf("%%%s: f32[%d]", w.name, w.n))
			}
			fmt.Fprintf(&b, "  ^%s(%s) {\n", gn, strings.Join(ins, ", "))
			if gn == cn {
				lt := name()
				fmt.Fprintf(&b, "    %%%s: b8[] = aten.lt.Scalar(%%%s, 3)\n    return %%%s\n  }\n", lt, cnt, lt)
				continue
			}
			inc := name()
			fmt.Fprintf(&b, "    %%%s: i64[] = aten.add.Scalar(%%%s, 1)\n", inc, cnt)
			inner := ops("    ", rvals, r.IntN(5))
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
		vals = ops("  ", vals, r.IntN(4))
	}
	fmt.Fprintf(&b, "  return %%%s\n}\n", vals[len(vals)-1].name)
	return b.String()
}
