package plan_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/plan"
)

// Property: on random programs with scans and maps (random small bodies:
// carries, one or two xs, additional inputs, body values returned as
// carries and step outputs or passed through), no two tensors live at one
// step of a run (each loop taking 0, 1 and 3 iterations, in the emitted
// order) share bytes; per-iteration lifetimes never raise the max-live
// lower bound over whole-loop ones; the plan is deterministic.
func TestRandomScanProgramsNeverOverlap(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	smaller := 0
	for iter := 0; iter < 150; iter++ {
		src := randomScanProgram(r, false)
		p, err := ir.Parse([]byte(src), "random_scan.fxir")
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
		whole, err := plan.Compute(p, plan.WholeLoopOptions(plan.DefaultOptions()))
		if err != nil {
			t.Fatal(err)
		}
		if pl.MaxLiveLowerBound > whole.MaxLiveLowerBound {
			t.Fatalf("iteration %d: per-iteration lower bound %d above the whole-loop one %d", iter, pl.MaxLiveLowerBound, whole.MaxLiveLowerBound)
		}
		if pl.Planned() < whole.Planned() {
			smaller++
		}
		again, err := plan.Compute(p, plan.DefaultOptions())
		if err != nil || again.Table() != pl.Table() {
			t.Fatalf("iteration %d: plan not deterministic", iter)
		}
	}
	// The property is about reuse: enough programs must actually reuse
	// bytes inside their loops for it to say anything.
	if smaller < 50 {
		t.Errorf("only %d of 150 programs planned smaller with per-iteration lifetimes", smaller)
	}
	t.Logf("%d of 150 programs planned smaller than with whole-loop lifetimes", smaller)
}

// randomScanProgram writes a program over f32 vectors with one or two
// top-level higher_order.scan (or map_impl) nodes over xs of 3 rows:
// carries of the main graph's vector sizes, additional inputs, a body of
// relu / neg / add nodes, carries and step outputs chosen among the body's
// values (computed ones, its inputs unchanged, a slice passed through).
func randomScanProgram(r *rand.Rand, views bool) string {
	var b strings.Builder
	fresh := 0
	name := func() string { fresh++; return fmt.Sprintf("v%d", fresh) }
	type val struct {
		name string
		n    int
		view bool // an et_view alias (never returned by a region)
	}
	ops := func(w *strings.Builder, indent string, vals []val, steps int) []val {
		for i := 0; i < steps; i++ {
			a := vals[r.IntN(len(vals))]
			if views && r.IntN(4) == 0 {
				v := val{name(), a.n, true}
				fmt.Fprintf(w, "%s%%%s: f32[%d] = executorch_prim.et_view.default(%%%s, [%d])\n", indent, v.name, v.n, a.name, v.n)
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
				fmt.Fprintf(w, "%s%%%s: f32[%d] = aten.add.Tensor(%%%s, %%%s)\n", indent, v.name, v.n, a.name, c.name)
			} else {
				op := []string{"aten.relu.default", "aten.neg.default"}[r.IntN(2)]
				fmt.Fprintf(w, "%s%%%s: f32[%d] = %s(%%%s)\n", indent, v.name, v.n, op, a.name)
			}
			vals = append(vals, v)
		}
		return vals
	}
	const rows = 3
	var decl []string
	var vals, xsPool []val
	for i := 0; i < 1+r.IntN(3); i++ {
		v := val{name(), 1 + r.IntN(40), false}
		vals = append(vals, v)
		decl = append(decl, fmt.Sprintf("%%%s: f32[%d]", v.name, v.n))
	}
	for i := 0; i < 1+r.IntN(2); i++ {
		v := val{name(), 1 + r.IntN(40), false}
		xsPool = append(xsPool, v)
		decl = append(decl, fmt.Sprintf("%%%s: f32[%d, %d]", v.name, rows, v.n))
	}
	fmt.Fprintf(&b, "graph forward(%s) {\n", strings.Join(decl, ", "))
	vals = ops(&b, "  ", vals, r.IntN(4))
	var outs []string
	for loops := 1 + r.IntN(2); loops > 0; loops-- {
		isMap := r.IntN(4) == 0
		var carried, xs, extra []val
		if !isMap {
			for i := 0; i < r.IntN(3); i++ {
				carried = append(carried, vals[r.IntN(len(vals))])
			}
		}
		for i := 0; i < 1+r.IntN(2); i++ {
			xs = append(xs, xsPool[r.IntN(len(xsPool))])
		}
		for i := 0; i < r.IntN(3); i++ {
			extra = append(extra, vals[r.IntN(len(vals))])
		}
		fn := name()
		// The body, written after the node line; its outputs decide the node's results.
		var body strings.Builder
		var ins []string
		var rvals []val
		for _, group := range [][]val{carried, xs, extra} {
			for _, v := range group {
				w := val{name(), v.n, false}
				rvals = append(rvals, w)
				ins = append(ins, fmt.Sprintf("%%%s: f32[%d]", w.name, w.n))
			}
		}
		fmt.Fprintf(&body, "  ^%s(%s) {\n", fn, strings.Join(ins, ", "))
		inner := ops(&body, "    ", rvals, r.IntN(5))
		var bouts []string
		var res []string
		var resVals []val
		for _, c := range carried {
			var cands []string
			for _, v := range inner {
				if v.n == c.n && !v.view {
					cands = append(cands, "%"+v.name)
				}
			}
			bouts = append(bouts, cands[r.IntN(len(cands))])
			v := val{name(), c.n, false}
			res = append(res, fmt.Sprintf("%%%s: f32[%d]", v.name, v.n))
			resVals = append(resVals, v)
		}
		for k := 0; k < 1+r.IntN(2); k++ {
			var plain []val
			for _, v := range inner {
				if !v.view {
					plain = append(plain, v)
				}
			}
			y := plain[r.IntN(len(plain))]
			bouts = append(bouts, "%"+y.name)
			res = append(res, fmt.Sprintf("%%%s: f32[%d, %d]", name(), rows, y.n))
		}
		fmt.Fprintf(&body, "    return %s\n  }\n", strings.Join(bouts, ", "))
		args := func(vs []val) string {
			var s []string
			for _, v := range vs {
				s = append(s, "%"+v.name)
			}
			return strings.Join(s, ", ")
		}
		if isMap {
			fmt.Fprintf(&b, "  %s = higher_order.map_impl(^%s, [%s], [%s])\n", strings.Join(res, ", "), fn, args(xs), args(extra))
		} else {
			fmt.Fprintf(&b, "  %s = higher_order.scan(^%s, [%s], [%s], [%s])\n", strings.Join(res, ", "), fn, args(carried), args(xs), args(extra))
		}
		b.WriteString(body.String())
		for _, rs := range res[len(carried):] {
			outs = append(outs, strings.TrimSuffix(strings.Fields(rs)[0], ":"))
		}
		vals = append(vals, resVals...)
		vals = ops(&b, "  ", vals, r.IntN(4))
	}
	outs = append(outs, "%"+vals[len(vals)-1].name)
	fmt.Fprintf(&b, "  return %s\n}\n", strings.Join(outs, ", "))
	return b.String()
}
