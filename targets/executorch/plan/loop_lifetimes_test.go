package plan_test

import (
	"testing"

	"github.com/fxport/fxport/targets/executorch/plan"
)

const whileChainSrc = `graph forward(%n: i64[], %x: f32[256]) {
  %w: i64[], %w_1: f32[256] = higher_order.while_loop(^c, ^b, [%n, %x], [])
  ^c(%i: i64[], %acc: f32[256]) {
    %lt: b8[] = aten.lt.Scalar(%i, 3)
    return %lt
  }
  ^b(%i: i64[], %acc: f32[256]) {
    %inc: i64[] = aten.add.Scalar(%i, 1)
    %t1: f32[256] = aten.relu.default(%acc)
    %t2: f32[256] = aten.neg.default(%t1)
    %t3: f32[256] = aten.relu.default(%t2)
    %t4: f32[256] = aten.neg.default(%t3)
    %t5: f32[256] = aten.add.Tensor(%t4, %acc)
    return %inc, %t5
  }
  return %w_1
}
`

const scanCellSrc = `graph forward(%xs: f32[8, 256], %h0: f32[256], %u: f32[256]) {
  %scan: f32[256], %scan_1: f32[8, 256] = higher_order.scan(^cell, [%h0], [%xs], [%u])
  ^cell(%h: f32[256], %x: f32[256], %uu: f32[256]) {
    %a: f32[256] = aten.mul.Tensor(%h, %uu)
    %b: f32[256] = aten.add.Tensor(%a, %x)
    %c: f32[256] = aten.relu.default(%b)
    %d: f32[256] = aten.neg.default(%c)
    %e: f32[256] = aten.add.Tensor(%d, %h)
    return %e, %c
  }
  return %scan, %scan_1
}
`

// Values defined and dead within one iteration get lifetimes local to the
// body, so a chain of body temporaries reuses two buffers instead of
// holding one per value for the whole loop, and a carried input's initial
// value is dead after the initial copy. The arenas (exact, so a
// regression shows): while_loop 3104 bytes (the carried counter and
// vector, the counter increment and two 1 KiB temporaries) where
// whole-loop lifetimes need 7232 (five temporaries, the predicate and the
// initial values next to the slots); scan 21504 bytes (xs and the stacked
// output, 8 KiB each, the carry, the additional input and three 1 KiB
// body values) where whole-loop lifetimes need 25600 (the slice and all
// five body values, plus the initial carry). Both plans meet their lower
// bound and pass the instruction-order trace.
func TestPerIterationLifetimesShrinkArena(t *testing.T) {
	for _, c := range []struct {
		name, src   string
		want, whole int64
	}{
		{"while_loop", whileChainSrc, 3104, 7232},
		{"scan", scanCellSrc, 21504, 25600},
	} {
		p := parse(t, c.src)
		pl := mustPlan(t, p, plan.DefaultOptions())
		whole := mustPlan(t, p, plan.WholeLoopOptions(plan.DefaultOptions()))
		t.Logf("%s: per-iteration %d bytes (lower bound %d), whole-loop %d bytes", c.name, pl.Planned(), pl.MaxLiveLowerBound, whole.Planned())
		if pl.Planned() != c.want || whole.Planned() != c.whole {
			t.Errorf("%s: arena %d (whole-loop lifetimes %d), want %d (%d)\n%s", c.name, pl.Planned(), whole.Planned(), c.want, c.whole, pl.Table())
		}
		if pl.Planned() != pl.MaxLiveLowerBound {
			t.Errorf("%s: arena %d above the lower bound %d", c.name, pl.Planned(), pl.MaxLiveLowerBound)
		}
		for _, k := range []int{0, 1, 2, 4} {
			if err := checkLoopTrace(p, pl, k); err != nil {
				t.Errorf("%s, %d trips: %v\n%s", c.name, k, err, pl.Table())
			}
			if err := checkLoopTrace(p, whole, k); err != nil {
				t.Errorf("%s (whole-loop), %d trips: %v\n%s", c.name, k, err, whole.Table())
			}
		}
	}
}

// The loop trace checker must catch what per-iteration lifetimes must not
// allow: a body value sharing bytes with the carry slot (read by the next
// iteration), with the scan's xs slice while it is live, or with the
// stacked output (its earlier rows are read after the loop); and two body
// values live at once. With one trip each of these still fails (all are
// live together within an iteration) except the carry case, which needs
// the backward jump: it is checked at two trips.
func TestLoopTraceCheckerCatchesBugs(t *testing.T) {
	p := parse(t, scanCellSrc)
	pl := mustPlan(t, p, plan.DefaultOptions())
	if err := checkLoopTrace(p, pl, 2); err != nil {
		t.Fatalf("%v\n%s", err, pl.Table())
	}
	n := p.Main.Nodes()[0]
	g := n.Args[0].Graph
	moveOnto := func(victim, onto string) *plan.Plan {
		t.Helper()
		cp := *pl
		cp.Values = append([]plan.Entry(nil), pl.Values...)
		var target plan.Alloc
		found := false
		for _, e := range cp.Values {
			if e.Value.Name == onto {
				target, found = e.Alloc, true
			}
		}
		if !found {
			t.Fatalf("no value %%%s", onto)
		}
		for i, e := range cp.Values {
			if e.Value == g.Value(victim) {
				cp.Values[i].Offset = target.Offset
			}
		}
		return &cp // same index: Lookup reads the copied entries
	}
	for _, c := range []struct{ victim, onto string }{
		{"d", "scan"},   // the carry slot
		{"a", "x"},      // the slice, read again by %b
		{"d", "scan_1"}, // the stacked output
		{"d", "e"},      // %d is read by %e's kernel
	} {
		if checkLoopTrace(p, moveOnto(c.victim, c.onto), 2) == nil {
			t.Errorf("%%%s moved onto %%%s was not reported", c.victim, c.onto)
		}
	}
}
