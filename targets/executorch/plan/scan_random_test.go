package plan_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// Property: on random programs with scans and maps (random small bodies:
// carries, one or two xs, additional inputs, body values returned as
// carries and step outputs or passed through), no two tensors live at one
// step of a run (each loop taking 0, 1 and 3 iterations, in the emitted
// order) share bytes; per-iteration lifetimes never raise the max-live
// lower bound over whole-loop ones; the plan is deterministic.
func TestRandomScanProgramsNeverOverlap(t *testing.T) {
	smaller := checkRandomLoopPrograms(t, rand.New(rand.NewPCG(7, 8)), "random_scan.fxir", randomScanProgram)
	// The property is about reuse: enough programs must actually reuse
	// bytes inside their loops for it to say anything.
	if smaller < 50 {
		t.Errorf("only %d of 150 programs planned smaller with per-iteration lifetimes", smaller)
	}
}

// randomScanProgram writes a program over f32 vectors with one or two
// top-level higher_order.scan (or map_impl) nodes over xs of 3 rows:
// carries of the main graph's vector sizes, additional inputs, a body of
// relu / neg / add nodes, carries and step outputs chosen among the body's
// values (computed ones, its inputs unchanged, a slice passed through).
func randomScanProgram(r *rand.Rand, views bool) string {
	var b strings.Builder
	g := &randProgram{r: r, views: views}
	const rows = 3
	vals, decl := g.vectors()
	var xsPool []randVal
	for i := 0; i < 1+r.IntN(2); i++ {
		v := randVal{g.name(), 1 + r.IntN(40), false}
		xsPool = append(xsPool, v)
		decl = append(decl, fmt.Sprintf("%%%s: f32[%d, %d]", v.name, rows, v.n))
	}
	fmt.Fprintf(&b, "graph forward(%s) {\n", strings.Join(decl, ", "))
	vals = g.steps(&b, "  ", vals, r.IntN(4))
	var outs []string
	for loops := 1 + r.IntN(2); loops > 0; loops-- {
		isMap := r.IntN(4) == 0
		var carried, xs, extra []randVal
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
		fn := g.name()
		// The body, written after the node line; its outputs decide the node's results.
		var body strings.Builder
		var ins []string
		var rvals []randVal
		for _, group := range [][]randVal{carried, xs, extra} {
			for _, v := range group {
				w := randVal{g.name(), v.n, false}
				rvals = append(rvals, w)
				ins = append(ins, fmt.Sprintf("%%%s: f32[%d]", w.name, w.n))
			}
		}
		fmt.Fprintf(&body, "  ^%s(%s) {\n", fn, strings.Join(ins, ", "))
		inner := g.steps(&body, "    ", rvals, r.IntN(5))
		var bouts []string
		var res []string
		var resVals []randVal
		for _, c := range carried {
			var cands []string
			for _, v := range inner {
				if v.n == c.n && !v.view {
					cands = append(cands, "%"+v.name)
				}
			}
			bouts = append(bouts, cands[r.IntN(len(cands))])
			v := randVal{g.name(), c.n, false}
			res = append(res, fmt.Sprintf("%%%s: f32[%d]", v.name, v.n))
			resVals = append(resVals, v)
		}
		for k := 0; k < 1+r.IntN(2); k++ {
			var plain []randVal
			for _, v := range inner {
				if !v.view {
					plain = append(plain, v)
				}
			}
			y := plain[r.IntN(len(plain))]
			bouts = append(bouts, "%"+y.name)
			res = append(res, fmt.Sprintf("%%%s: f32[%d, %d]", g.name(), rows, y.n))
		}
		fmt.Fprintf(&body, "    return %s\n  }\n", strings.Join(bouts, ", "))
		args := func(vs []randVal) string {
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
		vals = g.steps(&b, "  ", vals, r.IntN(4))
	}
	outs = append(outs, "%"+vals[len(vals)-1].name)
	fmt.Fprintf(&b, "  return %s\n}\n", strings.Join(outs, ", "))
	return b.String()
}
