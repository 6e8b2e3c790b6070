package plan_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/plan"
)

// Property: on random programs with while_loops, no two tensors live at one
// step of a run (the loop unrolled 0, 1 and 3 times) share bytes; the
// carried slots, the values inside the loop and the values live across it
// are all kept apart; the plan is deterministic.
func TestRandomWhileProgramsNeverOverlap(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 150; iter++ {
		src := randomWhileProgram(r)
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
			if err := checkWhileTrace(p, pl, k); err != nil {
				t.Fatalf("iteration %d, %d trips: %v\n%s\n%s", iter, k, err, src, pl.Table())
			}
		}
		again, err := plan.Compute(p, plan.DefaultOptions())
		if err != nil || again.Table() != pl.Table() {
			t.Fatalf("iteration %d: plan not deterministic", iter)
		}
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
		if err := checkWhileTrace(p, pl, k); err != nil {
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
	if checkWhileTrace(p, pl, 2) == nil {
		t.Fatal("a body value overlapping the carried slot was not reported")
	}
}

// randomWhileProgram writes a program over f32 vectors with top-level
// while_loops: a carried i64 counter and carried vectors, additional
// vector inputs, a body of relu / neg / add nodes returning computed
// values or its inputs unchanged, and main-graph nodes around the loops.
func randomWhileProgram(r *rand.Rand) string {
	var b strings.Builder
	fresh := 0
	name := func() string { fresh++; return fmt.Sprintf("v%d", fresh) }
	type val struct {
		name string
		n    int
	}
	ops := func(indent string, vals []val, steps int) []val {
		for i := 0; i < steps; i++ {
			a := vals[r.IntN(len(vals))]
			v := val{name(), a.n}
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
		v := val{name(), 1 + r.IntN(40)}
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
			v := val{name(), c.n}
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
				w := val{name(), v.n}
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

// checkWhileTrace runs p's main graph symbolically with every while_loop
// taking trips iterations and checks, independently of the planner's own
// lifetimes, that no two tensors live at one step share bytes. A value is
// live from the first step that writes it to the last step that reads it
// (over all iterations); a region input is the carried slot (the loop's
// result) or the additional operand it stands for; the slots are written
// by the initial moves and by the moves at the end of each iteration.
func checkWhileTrace(p *ir.Program, pl *plan.Plan, trips int) error {
	def, last := map[*ir.Value]int{}, map[*ir.Value]int{}
	bind := map[*ir.Value]*ir.Value{}
	res := func(v *ir.Value) *ir.Value {
		for bind[v] != nil {
			v = bind[v]
		}
		return v
	}
	step := 0
	read := func(a ir.Arg) {
		vs := []ir.Arg{a}
		if a.Kind == ir.ArgList {
			vs = a.List
		}
		for _, e := range vs {
			if e.Kind == ir.ArgValue && e.Value.Tensor() != nil {
				last[res(e.Value)] = step
			}
		}
	}
	write := func(v *ir.Value) {
		if _, ok := def[v]; !ok {
			def[v] = step
		}
		last[v] = max(last[v], step)
	}
	for _, v := range p.Main.Inputs {
		def[v], last[v] = -1, -1
	}
	var run func(g *ir.Graph)
	run = func(g *ir.Graph) {
		for _, n := range g.Nodes() {
			if n.Op.String() != "higher_order.while_loop" {
				for _, a := range n.Args {
					read(a)
				}
				for _, r := range n.Results {
					write(r)
				}
				step++
				continue
			}
			cg, bg := n.Args[0].Graph, n.Args[1].Graph
			carried, extra := n.Args[2].List, n.Args[3].List
			read(n.Args[2])
			read(n.Args[3])
			for _, r := range n.Results {
				write(r)
			}
			step++
			for _, rg := range []*ir.Graph{cg, bg} {
				for i, in := range rg.Inputs {
					if i < len(carried) {
						bind[in] = n.Results[i]
					} else {
						bind[in] = extra[i-len(carried)].Value
					}
				}
			}
			for it := 0; ; it++ {
				run(cg)
				read(cg.Outputs()[0])
				step++
				if it == trips {
					break
				}
				run(bg)
				for _, o := range bg.Outputs() {
					read(o)
				}
				for _, r := range n.Results {
					write(r)
				}
				step++
			}
		}
	}
	run(p.Main)
	for _, o := range p.Main.Outputs() {
		read(o)
	}
	var vals []*ir.Value
	for v := range def {
		if v.Tensor() != nil {
			vals = append(vals, v)
		}
	}
	sort.Slice(vals, func(i, j int) bool {
		return vals[i].ID < vals[j].ID || vals[i].ID == vals[j].ID && vals[i].Name < vals[j].Name
	})
	for i, a := range vals {
		pa, ok := pl.Lookup(a)
		if !ok {
			return fmt.Errorf("%s is not planned", a)
		}
		for _, b := range vals[i+1:] {
			pb, _ := pl.Lookup(b)
			if pa.Size == 0 || pb.Size == 0 || def[a] > last[b] || def[b] > last[a] {
				continue
			}
			if pa.Offset < pb.Offset+pb.Size && pb.Offset < pa.Offset+pa.Size {
				return fmt.Errorf("%s %v live [%d, %d] overlaps %s %v live [%d, %d]", a, pa, def[a], last[a], b, pb, def[b], last[b])
			}
		}
	}
	return nil
}
