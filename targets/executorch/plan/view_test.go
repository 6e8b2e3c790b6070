package plan_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/plan"
)

// An et_view (exir's memory.view) joins its base's storage class: same
// offset, and the base stays live until the view's last use, so a value
// defined after the base's own last use but before the view's cannot take
// the base's bytes.
func TestETViewSharesBaseStorage(t *testing.T) {
	p := parse(t, `graph forward(%x: f32[4, 4]) {
  %relu: f32[4, 4] = aten.relu.default(%x)
  %v: f32[16] = aten.view_copy.default(%relu, [16])
  %neg: f32[4, 4] = aten.neg.default(%x)
  %a: f32[16] = aten.neg.default(%v)
  %b: f32[4, 4] = aten.view_copy.default(%neg, [4, 4])
  %c: f32[4, 4] = aten.add.Tensor(%b, %neg)
  %d: f32[16] = aten.view_copy.default(%c, [16])
  %e: f32[16] = aten.add.Tensor(%a, %d)
  return %e
}`)
	lower(t, p, "to-edge-views", "replace-view-copy-with-view", "to-out-variants", "plan-memory")
	pl := mustPlan(t, p, plan.DefaultOptions())
	views := 0
	for _, n := range p.Main.Nodes() {
		if n.Op.String() != "executorch_prim.et_view.default" {
			continue
		}
		views++
		v, base := n.Results[0], n.Args[0].Value
		if alloc(t, pl, p, v.Name) != alloc(t, pl, p, base.Name) {
			t.Errorf("%s planned at %v, its base %s at %v", v, alloc(t, pl, p, v.Name), base, alloc(t, pl, p, base.Name))
		}
	}
	if views != 3 {
		t.Fatalf("%d et_views, want 3:\n%s", views, ir.Print(p))
	}
	// %relu's last direct use is the view; %a reads the view after %neg is
	// defined: %neg must not share %relu's bytes.
	if r, n := alloc(t, pl, p, "relu"), alloc(t, pl, p, "neg"); r.Offset == n.Offset {
		t.Errorf("%%neg reuses %%relu's bytes (%v) while the view %%v still reads them", r)
	}
	var lifetime plan.Entry
	for _, e := range pl.Values {
		if e.Value.Name == "relu" {
			lifetime = e
		}
	}
	var aPos int
	for i, n := range p.Main.Nodes() {
		if n.Result() != nil && n.Result().Name == "a" {
			aPos = i
		}
	}
	if lifetime.End < aPos {
		t.Errorf("%%relu's class ends at %d, before the view's use at %d", lifetime.End, aPos)
	}
}

// Disabling replace-view-copy-with-view (exir's remove_view_copy=False)
// keeps every view a copy with storage of its own; with it the arena and
// the max-live lower bound shrink.
func TestETViewShrinksArena(t *testing.T) {
	src := `graph forward(%x: f32[8, 8]) {
  %relu: f32[8, 8] = aten.relu.default(%x)
  %v: f32[64] = aten.view.default(%relu, [64])
  %w: f32[8, 8] = aten.view.default(%v, [8, 8])
  %o: f32[8, 8] = aten.add.Tensor(%w, %relu)
  return %o
}`
	with, without := parse(t, src), parse(t, src)
	lower(t, with, "to-edge-views", "replace-view-copy-with-view", "to-out-variants", "plan-memory")
	lower(t, without, "to-edge-views", "to-out-variants", "plan-memory")
	a, b := mustPlan(t, with, plan.DefaultOptions()), mustPlan(t, without, plan.DefaultOptions())
	if a.Planned() >= b.Planned() || a.MaxLiveLowerBound >= b.MaxLiveLowerBound {
		t.Errorf("with views: %d bytes (lower bound %d); with copies: %d (%d): want smaller", a.Planned(), a.MaxLiveLowerBound, b.Planned(), b.MaxLiveLowerBound)
	}
	t.Logf("arena %d → %d bytes, lower bound %d → %d", b.Planned(), a.Planned(), b.MaxLiveLowerBound, a.MaxLiveLowerBound)
	if strings.Contains(ir.Print(without), "et_view") || !strings.Contains(ir.Print(with), "et_view") {
		t.Errorf("et_view where not expected:\nwith:\n%s\nwithout:\n%s", ir.Print(with), ir.Print(without))
	}
}

// Random programs with et_view aliases in the main graph and in cond,
// while_loop, scan and map_impl regions: no two storages live at one step
// of a run share bytes (the trace checkers count a view's reads as its
// base's and check that each view is planned at its base's offset).
func TestRandomProgramsWithViewsNeverOverlap(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	gens := []struct {
		name string
		gen  func(*rand.Rand, bool) string
		loop bool
	}{{"cond", randomCondProgram, false}, {"while", randomWhileProgram, true}, {"scan", randomScanProgram, true}}
	for _, g := range gens {
		views := 0
		for iter := 0; iter < 100; iter++ {
			src := g.gen(r, true)
			views += strings.Count(src, "et_view")
			p, pl := planRandom(t, fmt.Sprintf("%s %d", g.name, iter), src, "random_views.fxir")
			if g.loop {
				for _, k := range []int{0, 1, 3} {
					if err := checkLoopTrace(p, pl, k); err != nil {
						t.Fatalf("%s %d, %d trips: %v\n%s\n%s", g.name, iter, k, err, src, pl.Table())
					}
				}
			} else if err := checkTraces(p, pl); err != nil {
				t.Fatalf("%s %d: %v\n%s\n%s", g.name, iter, err, src, pl.Table())
			}
			if pl.Planned() < pl.MaxLiveLowerBound {
				t.Fatalf("%s %d: arena %d below the lower bound %d", g.name, iter, pl.Planned(), pl.MaxLiveLowerBound)
			}
		}
		if views < 100 {
			t.Errorf("%s: only %d views in 100 programs", g.name, views)
		}
	}
}

// The view-aware trace checkers fail when a view does not extend its
// base's lifetime (a test that can fail): a value placed over the base
// while the view is still read is caught.
func TestViewTraceCheckerCatchesBugs(t *testing.T) {
	p := parse(t, `graph forward(%x: f32[4]) {
  %a: f32[4] = aten.relu.default(%x)
  %v: f32[4] = executorch_prim.et_view.default(%a, [4])
  %b: f32[4] = aten.neg.default(%x)
  %c: f32[4] = aten.add.Tensor(%v, %b)
  return %c
}`)
	pl := mustPlan(t, p, plan.DefaultOptions())
	if err := checkTraces(p, pl); err != nil {
		t.Fatalf("a correct plan fails the checker: %v", err)
	}
	// Pretend the view had storage of its own: move %b onto %a's bytes.
	a := alloc(t, pl, p, "a")
	for i, e := range pl.Values {
		if e.Value.Name == "b" {
			pl.Values[i].Offset = a.Offset
		}
	}
	if checkTraces(p, pl) == nil {
		t.Fatal("the checker accepts b over a while the view of a is read")
	}
}
