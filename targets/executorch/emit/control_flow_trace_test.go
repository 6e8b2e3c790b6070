package emit_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/run"
)

// whileChain carries a counter and a vector; the body's five temporaries
// have disjoint in-body lifetimes, so the planner puts them in two buffers
// (per-iteration lifetimes) and the emitted loop must still never read a
// byte some other value overwrote.
const whileChain = `graph forward(%start: i64[], %n: i64[], %x: f32[64]) {
  %w: i64[], %w_1: f32[64] = higher_order.while_loop(^c, ^b, [%start, %x], [%n])
  ^c(%i: i64[], %acc: f32[64], %lim: i64[]) {
    %le: b8[] = aten.le.Tensor(%i, %lim)
    return %le
  }
  ^b(%i: i64[], %acc: f32[64], %lim: i64[]) {
    %inc: i64[] = aten.add.Scalar(%i, 1)
    %t1: f32[64] = aten.relu.default(%acc)
    %t2: f32[64] = aten.neg.default(%t1)
    %t3: f32[64] = aten.relu.default(%t2)
    %t4: f32[64] = aten.add.Tensor(%t3, %acc)
    %t5: f32[64] = aten.mul.Tensor(%t4, %t1)
    return %inc, %t5
  }
  return %w_1
}
`

// condInLoop has a cond inside a scan body whose false branch returns its
// input (a MoveCall that may alias) and whose true branch computes.
const condInLoop = `graph forward(%xs: f32[4, 8], %h0: f32[8], %p: b8[]) {
  %scan: f32[8], %scan_1: f32[4, 8] = higher_order.scan(^cell, [%h0], [%xs], [%p])
  ^cell(%h: f32[8], %x: f32[8], %q: b8[]) {
    %a: f32[8] = aten.add.Tensor(%h, %x)
    %cond: f32[8] = higher_order.cond(%q, ^t, ^f, [%a, %h])
    ^t(%u: f32[8], %v: f32[8]) {
      %m: f32[8] = aten.mul.Tensor(%u, %v)
      %r: f32[8] = aten.relu.default(%m)
      return %r
    }
    ^f(%u: f32[8], %v: f32[8]) {
      return %u
    }
    %e: f32[8] = aten.neg.default(%cond)
    return %e, %a
  }
  return %scan, %scan_1
}
`

// whileInScan nests a while_loop (its trip count an additional input) in a
// scan body: the inner loop's slots live within one outer iteration.
const whileInScan = `graph forward(%xs: f32[3, 8], %h0: f32[8], %k: i64[]) {
  %scan: f32[8], %scan_1: f32[3, 8] = higher_order.scan(^cell, [%h0], [%xs], [%k])
  ^cell(%h: f32[8], %x: f32[8], %kk: i64[]) {
    %a: f32[8] = aten.add.Tensor(%h, %x)
    %zero: i64[] = aten.mul.Scalar(%kk, 0)
    %w: i64[], %w_1: f32[8] = higher_order.while_loop(^c, ^b, [%zero, %a], [%kk, %x])
    ^c(%i: i64[], %acc: f32[8], %lim: i64[], %y: f32[8]) {
      %lt: b8[] = aten.le.Tensor(%i, %lim)
      return %lt
    }
    ^b(%i: i64[], %acc: f32[8], %lim: i64[], %y: f32[8]) {
      %inc: i64[] = aten.add.Scalar(%i, 1)
      %m: f32[8] = aten.mul.Tensor(%acc, %y)
      %r: f32[8] = aten.relu.default(%m)
      %s: f32[8] = aten.add.Tensor(%r, %acc)
      return %inc, %s
    }
    %e: f32[8] = aten.neg.default(%w_1)
    return %e, %a
  }
  return %scan, %scan_1
}
`

// The emitted loops, simulated instruction by instruction for 0 to 3
// iterations, several branch choices and both MoveCall semantics, never
// read bytes another value overwrote (checkEmittedTrace); they also run
// to the interpreter's results. The programs: a while_loop, a cond inside
// a scan body, a while_loop inside a scan body. In whileChain the body's temporaries
// really share bytes (%t2 with %t4, %t3 with %t5: five values in three
// windows; %t1 is read by the last one).
func TestEmittedLoopTracesNeverOverlap(t *testing.T) {
	x8 := vec(8, 1)
	cases := []struct {
		name, src string
		inputs    [][]interp.Value
	}{
		{"while_chain", whileChain, [][]interp.Value{
			{i64(1), i64(0), vec(64, 2)}, {i64(1), i64(3), vec(64, 3)},
		}},
		{"cond_in_scan", condInLoop, [][]interp.Value{
			{mat(4, 8), x8, boolT(true)}, {mat(4, 8), x8, boolT(false)},
		}},
		{"while_in_scan", whileInScan, [][]interp.Value{
			{mat(3, 8), x8, i64(0)}, {mat(3, 8), x8, i64(2)},
		}},
	}
	for _, c := range cases {
		ref, f := exportRun(t, c.name, c.src)
		for _, trips := range []int{0, 1, 2, 3} {
			for _, alias := range []bool{false, true} {
				for seed := uint64(0); seed < 3; seed++ {
					if err := checkEmittedTrace(f, traceOptions{Trips: trips, Aliasing: alias, Seed: seed}); err != nil {
						t.Fatalf("%s, %d trips, aliasing %v, seed %d: %v", c.name, trips, alias, seed, err)
					}
				}
			}
		}
		for i, in := range c.inputs {
			for _, alias := range []bool{false, true} {
				compareRunOpts(t, fmt.Sprintf("%s inputs %d aliasing %v", c.name, i, alias), ref, f, in, run.Options{AliasingMoves: alias})
			}
		}
	}
	_, f := exportRun(t, "while_chain", whileChain)
	ep := f.Program.ExecutionPlan[0]
	windows := map[int64]bool{}
	temps := 0
	for _, in := range ep.Chains[0].Instructions {
		k, ok := in.InstrArgs.Value.(*etfb.KernelCallT)
		if !ok {
			continue
		}
		switch o := ep.Operators[k.OpIndex]; o.Name + "." + o.Overload {
		case "aten::relu.out", "aten::neg.out", "aten::add.out", "aten::mul.out":
			tt := ep.Values[k.Args[len(k.Args)-1]].Val.Value.(*etfb.TensorT)
			windows[int64(tt.AllocationInfo.MemoryOffsetLow)] = true
			temps++
		}
	}
	if temps != 5 || len(windows) != 3 {
		t.Errorf("body temporaries: %d in %d windows, want 5 in 3 (%%t2/%%t4 and %%t3/%%t5 share)", temps, len(windows))
	}
}

// The trace checker must catch an overlap (a test that can fail): a body
// temporary moved onto the carried slot overwrites the carried value
// while the body still reads it.
func TestEmittedTraceCheckerCatchesBugs(t *testing.T) {
	_, f := exportRun(t, "while_chain", whileChain)
	if err := checkEmittedTrace(f, traceOptions{Trips: 2}); err != nil {
		t.Fatal(err)
	}
	ep := f.Program.ExecutionPlan[0]
	slot := ep.Values[ep.Outputs[0]].Val.Value.(*etfb.TensorT).AllocationInfo
	for _, in := range ep.Chains[0].Instructions {
		k, ok := in.InstrArgs.Value.(*etfb.KernelCallT)
		if !ok || ep.Operators[k.OpIndex].Name != "aten::relu" {
			continue
		}
		out := ep.Values[k.Args[len(k.Args)-1]].Val.Value.(*etfb.TensorT)
		saved := *out.AllocationInfo
		*out.AllocationInfo = *slot
		if err := checkEmittedTrace(f, traceOptions{Trips: 1}); err == nil {
			t.Error("a body temporary on the carried slot's bytes was not reported")
		}
		if err := checkEmittedTrace(f, traceOptions{Trips: 0}); err != nil {
			t.Errorf("with no iteration the body never runs, yet: %v", err)
		}
		*out.AllocationInfo = saved
		return
	}
	t.Fatal("no relu kernel call in the emitted loop")
}

// Property: random programs with a while_loop or a scan (random small
// bodies of relu / neg / add / mul, carried values returned computed or
// unchanged, additional inputs, step outputs that are body values, slices
// or carries) lower, plan, emit, never read overwritten bytes in the
// simulated chain (0, 1 and 3 iterations, both MoveCall semantics) and run
// to the interpreter's results. Seeded, deterministic.
func TestRandomEmittedLoopsNeverOverlap(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	dir := t.TempDir()
	for iter := 0; iter < 40; iter++ {
		src, inputs := randomLoopProgram(r, iter%2 == 0)
		path := filepath.Join(dir, fmt.Sprintf("loop%d.fxir", iter))
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		ref, err := ir.Parse([]byte(src), path)
		if err != nil {
			t.Fatalf("iteration %d: %v\n%s", iter, err, src)
		}
		ef, err := emit.Program(lower(t, path), emit.Options{NoMetadataMethod: true})
		if err != nil {
			t.Fatalf("iteration %d: emit: %v\n%s", iter, err, src)
		}
		b, err := pte.Encode(ef)
		if err != nil {
			t.Fatal(err)
		}
		f, err := pte.Decode("loop.pte", b)
		if err != nil {
			t.Fatal(err)
		}
		for _, trips := range []int{0, 1, 3} {
			for _, alias := range []bool{false, true} {
				if err := checkEmittedTrace(f, traceOptions{Trips: trips, Aliasing: alias}); err != nil {
					t.Fatalf("iteration %d, %d trips, aliasing %v: %v\n%s", iter, trips, alias, err, src)
				}
			}
		}
		for _, alias := range []bool{false, true} {
			compareRunOpts(t, fmt.Sprintf("iteration %d aliasing %v\n%s", iter, alias, src), ref, f, inputs, run.Options{AliasingMoves: alias})
		}
	}
}

// randomLoopProgram writes a program with one while_loop (carried i64
// counter from %start up to %n, 1 to 2 carried vectors) or one scan over
// xs of 3 rows (0 to 2 carries), additional inputs, and a random body;
// it returns the source and inputs (the while runs 2 iterations).
func randomLoopProgram(r *rand.Rand, isWhile bool) (string, []interp.Value) {
	var b strings.Builder
	fresh := 0
	name := func() string { fresh++; return fmt.Sprintf("v%d", fresh) }
	type val = loopVal
	sizes := []int{4, 8}
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
			switch r.IntN(4) {
			case 0, 1:
				op := []string{"aten.relu.default", "aten.neg.default"}[r.IntN(2)]
				fmt.Fprintf(&b, "%s%%%s: f32[%d] = %s(%%%s)\n", indent, v.name, v.n, op, a.name)
			default:
				op := []string{"aten.add.Tensor", "aten.mul.Tensor"}[r.IntN(2)]
				c := same[r.IntN(len(same))]
				fmt.Fprintf(&b, "%s%%%s: f32[%d] = %s(%%%s, %%%s)\n", indent, v.name, v.n, op, a.name, c.name)
			}
			vals = append(vals, v)
		}
		return vals
	}
	var decl []string
	var inputs []interp.Value
	var vals []val
	if isWhile {
		decl = append(decl, "%start: i64[]", "%n: i64[]")
		inputs = append(inputs, i64(1), i64(2))
	}
	for i := 0; i < 2+r.IntN(2); i++ {
		v := val{name(), sizes[r.IntN(len(sizes))]}
		vals = append(vals, v)
		decl = append(decl, fmt.Sprintf("%%%s: f32[%d]", v.name, v.n))
		inputs = append(inputs, vec(v.n, float64(i+1)))
	}
	xs := val{name(), sizes[r.IntN(len(sizes))]}
	if !isWhile {
		decl = append(decl, fmt.Sprintf("%%%s: f32[3, %d]", xs.name, xs.n))
		inputs = append(inputs, mat(3, xs.n))
	}
	fmt.Fprintf(&b, "graph forward(%s) {\n", strings.Join(decl, ", "))
	vals = ops("  ", vals, r.IntN(3))
	var carried, extra []val
	for i := 0; i < r.IntN(3); i++ {
		carried = append(carried, vals[r.IntN(len(vals))])
	}
	if isWhile && len(carried) == 0 {
		carried = append(carried, vals[0])
	}
	for i := 0; i < r.IntN(3); i++ {
		extra = append(extra, vals[r.IntN(len(vals))])
	}
	names := func(vs []val) []string {
		var s []string
		for _, v := range vs {
			s = append(s, "%"+v.name)
		}
		return s
	}
	var regionIns []string
	var rvals []val
	bindIns := func() {
		regionIns, rvals = nil, nil
		if isWhile {
			regionIns = append(regionIns, "%"+name()+": i64[]")
		}
		groups := [][]val{carried}
		if !isWhile {
			groups = append(groups, []val{xs})
		}
		groups = append(groups, extra)
		for _, g := range groups {
			for _, v := range g {
				w := val{name(), v.n}
				rvals = append(rvals, w)
				regionIns = append(regionIns, fmt.Sprintf("%%%s: f32[%d]", w.name, w.n))
			}
		}
		if isWhile {
			regionIns = append(regionIns, "%"+name()+": i64[]")
		}
	}
	var res []string
	var out []val
	if isWhile {
		res = append(res, "%"+name()+": i64[]")
	}
	for _, c := range carried {
		v := val{name(), c.n}
		out = append(out, v)
		res = append(res, fmt.Sprintf("%%%s: f32[%d]", v.name, v.n))
	}
	nys := 0
	var body strings.Builder
	saved := b.String()
	b.Reset()
	if isWhile {
		cn, bn := name(), name()
		bindIns()
		cnt, lim := strings.Fields(regionIns[0])[0], strings.Fields(regionIns[len(regionIns)-1])[0]
		fmt.Fprintf(&b, "  ^%s(%s) {\n    %%le: b8[] = aten.le.Tensor(%s, %s)\n    return %%le\n  }\n", cn, strings.Join(regionIns, ", "), strings.TrimSuffix(cnt, ":"), strings.TrimSuffix(lim, ":"))
		bindIns()
		cnt = strings.TrimSuffix(strings.Fields(regionIns[0])[0], ":")
		fmt.Fprintf(&b, "  ^%s(%s) {\n", bn, strings.Join(regionIns, ", "))
		inc := name()
		fmt.Fprintf(&b, "    %%%s: i64[] = aten.add.Scalar(%s, 1)\n", inc, cnt)
		inner := ops("    ", rvals, 1+r.IntN(5))
		outs := []string{"%" + inc}
		for _, c := range carried {
			outs = append(outs, pick(r, inner, c.n))
		}
		fmt.Fprintf(&b, "    return %s\n  }\n", strings.Join(outs, ", "))
		body.WriteString(b.String())
		b.Reset()
		b.WriteString(saved)
		fmt.Fprintf(&b, "  %s = higher_order.while_loop(^%s, ^%s, [%s], [%s])\n", strings.Join(res, ", "), cn, bn,
			strings.Join(append([]string{"%start"}, names(carried)...), ", "), strings.Join(append(names(extra), "%n"), ", "))
	} else {
		fn := name()
		bindIns()
		fmt.Fprintf(&b, "  ^%s(%s) {\n", fn, strings.Join(regionIns, ", "))
		inner := ops("    ", rvals, 1+r.IntN(5))
		var outs []string
		for _, c := range carried {
			outs = append(outs, pick(r, inner, c.n))
		}
		for nys = 0; nys < 1+r.IntN(2); nys++ {
			y := inner[r.IntN(len(inner))]
			outs = append(outs, "%"+y.name)
			res = append(res, fmt.Sprintf("%%%s: f32[3, %d]", name(), y.n))
		}
		fmt.Fprintf(&b, "    return %s\n  }\n", strings.Join(outs, ", "))
		body.WriteString(b.String())
		b.Reset()
		b.WriteString(saved)
		fmt.Fprintf(&b, "  %s = higher_order.scan(^%s, [%s], [%%%s], [%s])\n", strings.Join(res, ", "), fn, strings.Join(names(carried), ", "), xs.name, strings.Join(names(extra), ", "))
	}
	b.WriteString(body.String())
	vals = append(vals, out...)
	vals = ops("  ", vals, r.IntN(3))
	// Return the last value, every carried result and every stacked output,
	// so that nothing of the loop is dead.
	rets := []string{"%" + vals[len(vals)-1].name}
	for _, v := range out {
		if v.name != vals[len(vals)-1].name {
			rets = append(rets, "%"+v.name)
		}
	}
	for _, rs := range res[len(res)-nys:] {
		if nys > 0 {
			rets = append(rets, strings.TrimSuffix(strings.Fields(rs)[0], ":"))
		}
	}
	fmt.Fprintf(&b, "  return %s\n}\n", strings.Join(rets, ", "))
	return b.String(), inputs
}

// loopVal is a vector value of randomLoopProgram: its name and length.
type loopVal struct {
	name string
	n    int
}

// pick returns the name of a value of length n among vs.
func pick(r *rand.Rand, vs []loopVal, n int) string {
	var c []string
	for _, v := range vs {
		if v.n == n {
			c = append(c, "%"+v.name)
		}
	}
	return c[r.IntN(len(c))]
}

func i64(v int64) interp.Value {
	return interp.FromFloat64(ir.Int64, []int64{}, []float64{float64(v)})
}

func boolT(v bool) interp.Value {
	f := 0.0
	if v {
		f = 1
	}
	return interp.FromFloat64(ir.Bool, []int64{}, []float64{f})
}

// vec is a deterministic f32 vector of n elements (varied signs).
func vec(n int, k float64) interp.Value {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64((i*7+int(k*3))%11)/4 - 1.25
	}
	return interp.FromFloat64(ir.Float32, []int64{int64(n)}, xs)
}

// mat is a deterministic f32 [rows, n] matrix.
func mat(rows, n int) interp.Value {
	xs := make([]float64, rows*n)
	for i := range xs {
		xs[i] = float64((i*5)%13)/4 - 1.5
	}
	return interp.FromFloat64(ir.Float32, []int64{int64(rows), int64(n)}, xs)
}
