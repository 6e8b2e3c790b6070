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

const condProgram = `graph forward(%p: b8[], %x: f32[16], %y: f32[16]) {
  %k: f32[16] = aten.relu.default(%y)
  %cond: f32[16] = higher_order.cond(%p, ^true_graph_0, ^false_graph_0, [%x, %y])
  ^true_graph_0(%a: f32[16], %b: f32[16]) {
    %m: f32[16] = aten.mul.Tensor(%a, %b)
    %s: f32[16] = aten.add.Tensor(%m, %a)
    return %s
  }
  ^false_graph_0(%a: f32[16], %b: f32[16]) {
    %n: f32[16] = aten.neg.default(%b)
    %q: f32[16] = aten.relu.default(%n)
    return %q
  }
  %out: f32[16] = aten.add.Tensor(%cond, %k)
  return %out
}
`

// Values inside cond regions are planned in the arena: the branches share
// bytes, each branch's returned value shares its result's storage, and
// nothing in a branch overlaps a value live across the cond (%x, %y, %k).
func TestCondRegionsPlanned(t *testing.T) {
	p := parse(t, condProgram)
	pl := mustPlan(t, p, plan.DefaultOptions())
	if err := checkTraces(p, pl); err != nil {
		t.Fatalf("%v\n%s", err, pl.Table())
	}
	region := func(branch int, name string) plan.Alloc {
		t.Helper()
		g := p.Main.Nodes()[1].Args[1+branch].Graph
		a, ok := pl.Lookup(g.Value(name))
		if !ok {
			t.Fatalf("%%%s of branch %d is not planned\n%s", name, branch, pl.Table())
		}
		return a
	}
	cond := alloc(t, pl, p, "cond")
	if s, q := region(0, "s"), region(1, "q"); s.Offset != cond.Offset || q.Offset != cond.Offset {
		t.Errorf("returned values %v, %v do not share the result's storage %v", s, q, cond)
	}
	m, n := region(0, "m"), region(1, "n")
	if m.Offset != n.Offset {
		t.Errorf("%%m at %v and %%n at %v: the exclusive branches do not share bytes\n%s", m, n, pl.Table())
	}
	// %p (1 byte, 16 aligned), %x, %y, %k live across the cond; %m / %n
	// and the shared %s / %q / %cond: 16 + 5 × 64.
	if pl.Planned() != 336 || pl.MaxLiveLowerBound != 336 {
		t.Errorf("arena %d, lower bound %d; want 336, 336\n%s", pl.Planned(), pl.MaxLiveLowerBound, pl.Table())
	}
	// Recorded on the region nodes and read back.
	plan.Record(p, pl)
	rec, err := plan.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Allocs) != len(pl.Values) {
		t.Fatalf("read back %d allocations, planned %d", len(rec.Allocs), len(pl.Values))
	}
	if !strings.Contains(ir.Print(p), `%m: f32[16] = aten.mul.Tensor(%a, %b) {mem = "1:`) {
		t.Errorf("region node has no mem metadata:\n%s", ir.Print(p))
	}
}

// A branch returning its input (or one value twice) cannot share the
// result's storage; the returned value stays live as long as the result
// (MoveCall may alias rather than copy).
func TestCondPassThroughKeepsSourceLive(t *testing.T) {
	p := parse(t, `graph forward(%p: b8[], %x: f32[16]) {
  %cond: f32[16], %cond_1: f32[16] = higher_order.cond(%p, ^true_graph_0, ^false_graph_0, [%x])
  ^true_graph_0(%a: f32[16]) {
    return %a, %a
  }
  ^false_graph_0(%a: f32[16]) {
    %n: f32[16] = aten.neg.default(%a)
    return %n, %n
  }
  %r: f32[16] = aten.relu.default(%cond)
  %out: f32[16] = aten.add.Tensor(%r, %cond_1)
  return %out
}
`)
	pl := mustPlan(t, p, plan.DefaultOptions())
	if err := checkTraces(p, pl); err != nil {
		t.Fatalf("%v\n%s", err, pl.Table())
	}
}

// The trace checker must catch an overlap (a test that can fail): move a
// branch value onto a value live across the cond.
func TestTraceCheckerCatchesBugs(t *testing.T) {
	p := parse(t, condProgram)
	pl := mustPlan(t, p, plan.DefaultOptions())
	y := alloc(t, pl, p, "y")
	g := p.Main.Nodes()[1].Args[1].Graph
	for i, e := range pl.Values {
		if e.Value == g.Value("m") {
			pl.Values[i].Offset = y.Offset
		}
	}
	if checkTraces(p, pl) == nil {
		t.Fatal("a branch value overlapping a live operand was not reported")
	}
}

// Property: on random programs with (nested) conds, no two values live at
// one point of any run (every combination of branches) share bytes, except
// values joined by moves (a branch's returned value and its result) at the
// same offset; the plan is deterministic.
func TestRandomCondProgramsNeverOverlap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 150; iter++ {
		src := randomCondProgram(r, false)
		p, pl := planRandom(t, fmt.Sprintf("iteration %d", iter), src, "random.fxir")
		if err := checkTraces(p, pl); err != nil {
			t.Fatalf("iteration %d: %v\n%s\n%s", iter, err, src, pl.Table())
		}
		if pl.Planned() < pl.MaxLiveLowerBound {
			t.Fatalf("iteration %d: arena %d below the lower bound %d", iter, pl.Planned(), pl.MaxLiveLowerBound)
		}
		again, err := plan.Compute(p, plan.DefaultOptions())
		if err != nil || again.Table() != pl.Table() {
			t.Fatalf("iteration %d: plan not deterministic", iter)
		}
	}
}

// randomCondProgram writes a program over f32 vectors: relu / neg / cat
// nodes and conds (nested at most once) whose branches compute from their
// inputs and return values of the operands' sizes, sometimes an input
// itself or one value twice. With views, some steps are et_view aliases
// (never returned by a branch, as replace-view-copy-with-view keeps those).
func randomCondProgram(r *rand.Rand, views bool) string {
	var b strings.Builder
	fresh := 0
	name := func() string { fresh++; return fmt.Sprintf("v%d", fresh) }
	type val struct {
		name string
		n    int
		view bool
	}
	var body func(indent, pred string, vals []val, depth, steps int) []val
	body = func(indent, pred string, vals []val, depth, steps int) []val {
		for i := 0; i < steps; i++ {
			a := vals[r.IntN(len(vals))]
			if views && r.IntN(4) == 0 {
				v := val{name(), a.n, true}
				fmt.Fprintf(&b, "%s%%%s: f32[%d] = executorch_prim.et_view.default(%%%s, [%d])\n", indent, v.name, v.n, a.name, v.n)
				vals = append(vals, v)
				continue
			}
			switch k := r.IntN(8); {
			case k < 3:
				v := val{name(), a.n, false}
				op := []string{"aten.relu.default", "aten.neg.default"}[r.IntN(2)]
				fmt.Fprintf(&b, "%s%%%s: f32[%d] = %s(%%%s)\n", indent, v.name, v.n, op, a.name)
				vals = append(vals, v)
			case k < 5:
				c := vals[r.IntN(len(vals))]
				v := val{name(), a.n + c.n, false}
				fmt.Fprintf(&b, "%s%%%s: f32[%d] = aten.cat.default([%%%s, %%%s])\n", indent, v.name, v.n, a.name, c.name)
				vals = append(vals, v)
			case depth < 2:
				ops := []val{a}
				if r.IntN(2) == 0 {
					ops = append(ops, vals[r.IntN(len(vals))])
				}
				nres := 1 + r.IntN(2)
				resOf := make([]int, nres) // operand each result's type comes from
				var res, decls []string
				opnames := []string{"%" + pred}
				for j := range resOf {
					resOf[j] = r.IntN(len(ops))
					res = append(res, "%"+name())
					decls = append(decls, fmt.Sprintf("%s: f32[%d]", res[j], ops[resOf[j]].n))
				}
				for _, o := range ops {
					opnames = append(opnames, "%"+o.name)
				}
				tn, fn := name(), name()
				fmt.Fprintf(&b, "%s%s = higher_order.cond(%%%s, ^%s, ^%s, [%s])\n", indent, strings.Join(decls, ", "), pred, tn, fn, strings.Join(opnames, ", "))
				for _, gn := range []string{tn, fn} {
					var ins []val
					pin := name()
					decl := []string{"%" + pin + ": b8[]"}
					for _, o := range ops {
						v := val{name(), o.n, false}
						ins = append(ins, v)
						decl = append(decl, fmt.Sprintf("%%%s: f32[%d]", v.name, v.n))
					}
					fmt.Fprintf(&b, "%s^%s(%s) {\n", indent, gn, strings.Join(decl, ", "))
					inner := body(indent+"  ", pin, append([]val(nil), ins...), depth+1, r.IntN(4))
					var outs []string
					for j := range resOf {
						want := ops[resOf[j]].n
						var cands []string
						for _, v := range inner {
							if v.n == want && !v.view {
								cands = append(cands, "%"+v.name)
							}
						}
						outs = append(outs, cands[r.IntN(len(cands))])
					}
					fmt.Fprintf(&b, "%s  return %s\n%s}\n", indent, strings.Join(outs, ", "), indent)
				}
				for j := range resOf {
					vals = append(vals, val{strings.TrimPrefix(res[j], "%"), ops[resOf[j]].n, false})
				}
			}
		}
		return vals
	}
	var ins []val
	decl := []string{"%p: b8[]"}
	for i := 0; i < 1+r.IntN(3); i++ {
		v := val{name(), 1 + r.IntN(40), false}
		ins = append(ins, v)
		decl = append(decl, fmt.Sprintf("%%%s: f32[%d]", v.name, v.n))
	}
	var main strings.Builder
	b, main = main, b
	vals := body("  ", "p", ins, 0, 4+r.IntN(12))
	b, main = main, b
	fmt.Fprintf(&b, "graph forward(%s) {\n%s  return %%%s\n}\n", strings.Join(decl, ", "), main.String(), vals[len(vals)-1].name)
	return b.String()
}

// checkTraces runs p's main graph symbolically for every combination of
// cond branches and checks, independently of the planner's own lifetimes,
// that no two tensors live at one step of the run share bytes. A value is
// live from the step that writes it to the last step that reads it; a
// region input is its operand; a cond's result is written by the move at
// the end of the branch taken, and the moved value stays live as long as
// the result (ExecuTorch's MoveCall may alias). The only sharing allowed
// is between values joined by moves (same content) at the same offset.
func checkTraces(p *ir.Program, pl *plan.Plan) error {
	var conds []*ir.Node
	var find func(g *ir.Graph)
	find = func(g *ir.Graph) {
		for _, n := range g.Nodes() {
			if n.Op.String() == "higher_order.cond" {
				conds = append(conds, n)
				find(n.Args[1].Graph)
				find(n.Args[2].Graph)
			}
		}
	}
	find(p.Main)
	if len(conds) > 6 {
		conds = conds[:6] // the others take the true branch
	}
	for mask := 0; mask < 1<<len(conds); mask++ {
		takeFalse := map[*ir.Node]bool{}
		for i, c := range conds {
			takeFalse[c] = mask>>i&1 == 1
		}
		if err := checkTrace(p, pl, takeFalse); err != nil {
			return fmt.Errorf("run with false branches %v: %w", falseNames(conds, takeFalse), err)
		}
	}
	return nil
}

func falseNames(conds []*ir.Node, f map[*ir.Node]bool) []string {
	var out []string
	for _, c := range conds {
		if f[c] {
			out = append(out, c.Short())
		}
	}
	return out
}

func checkTrace(p *ir.Program, pl *plan.Plan, takeFalse map[*ir.Node]bool) error {
	def, last := map[*ir.Value]int{}, map[*ir.Value]int{}
	type move struct{ from, to *ir.Value }
	var moves []move
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
	for _, v := range p.Main.Inputs {
		def[v], last[v] = -1, -1
	}
	var run func(g *ir.Graph)
	run = func(g *ir.Graph) {
		for _, n := range g.Nodes() {
			if n.Op.String() == "higher_order.cond" {
				read(n.Args[0])
				step++
				br := n.Args[1].Graph
				if takeFalse[n] {
					br = n.Args[2].Graph
				}
				for i, in := range br.Inputs {
					bind[in] = n.Args[3].List[i].Value
				}
				run(br)
				for i, o := range br.Outputs() {
					read(o)
					r := n.Results[i]
					def[r], last[r] = step, step
					moves = append(moves, move{res(o.Value), r})
				}
				step++
				continue
			}
			if n.Op.String() == "executorch_prim.et_view.default" {
				// An alias: its reads are its base's (the base lives on).
				read(n.Args[0])
				bind[n.Results[0]] = res(n.Args[0].Value)
				step++
				continue
			}
			for _, a := range n.Args {
				read(a)
			}
			for _, r := range n.Results {
				def[r], last[r] = step, step
			}
			step++
		}
	}
	run(p.Main)
	if err := checkViewsShareBase(p, pl, res); err != nil {
		return err
	}
	for _, o := range p.Main.Outputs() {
		read(o)
	}
	for i := len(moves) - 1; i >= 0; i-- {
		m := moves[i]
		last[m.from] = max(last[m.from], last[m.to])
	}
	// Values joined by moves (a chain of them: an inner result moved on
	// into an outer one) hold the same bytes.
	same := map[*ir.Value]*ir.Value{}
	root := func(v *ir.Value) *ir.Value {
		for same[v] != nil {
			v = same[v]
		}
		return v
	}
	for _, m := range moves {
		if a, b := root(m.from), root(m.to); a != b {
			same[b] = a
		}
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
				if root(a) == root(b) && pa.Offset == pb.Offset {
					continue
				}
				return fmt.Errorf("%s %v live [%d, %d] overlaps %s %v live [%d, %d]", a, pa, def[a], last[a], b, pb, def[b], last[b])
			}
		}
	}
	return nil
}
