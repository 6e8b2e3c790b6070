package plan_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/plan"
)

func parse(t *testing.T, src string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), "test.fxir")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// lower runs the default executorch.portable lowering stage (and plan-memory).
func lower(t *testing.T, p *ir.Program, passes ...string) {
	t.Helper()
	if len(passes) == 0 {
		passes = []string{"decompose-to-core", "to-dim-order-ops", "to-edge-views", "to-executorch-prim", "to-out-variants", "plan-memory"}
	}
	pl, err := pm.ParsePipeline("executorch.portable: executorch.lowering(" + strings.Join(passes, ", ") + ")")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
		t.Fatal(err)
	}
}

func mustPlan(t *testing.T, p *ir.Program, opt plan.Options) *plan.Plan {
	t.Helper()
	pl, err := plan.Compute(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkNoOverlap(pl); err != nil {
		t.Fatal(err)
	}
	return pl
}

func alloc(t *testing.T, pl *plan.Plan, p *ir.Program, name string) plan.Alloc {
	t.Helper()
	v := p.Main.Value(name)
	if v == nil {
		t.Fatalf("no value %%%s", name)
	}
	a, ok := pl.Lookup(v)
	if !ok {
		t.Fatalf("%%%s is not planned", name)
	}
	return a
}

// A chain x → a → b → c of 64-byte tensors: at most two are live at once,
// so the optimum is 128 bytes and x's slot is reused.
func TestChainReusesDeadSlots(t *testing.T) {
	p := parse(t, `graph forward(%x: f32[16]) {
  %a: f32[16] = aten.relu.default(%x)
  %b: f32[16] = aten.neg.default(%a)
  %c: f32[16] = aten.relu.default(%b)
  return %c
}`)
	pl := mustPlan(t, p, plan.DefaultOptions())
	if pl.Planned() != 128 || pl.MaxLiveLowerBound != 128 {
		t.Fatalf("arena %d, lower bound %d; want 128, 128\n%s", pl.Planned(), pl.MaxLiveLowerBound, pl.Table())
	}
	if pl.ArenaSize[0] != 0 || len(pl.ArenaSize) != 2 {
		t.Fatalf("ArenaSize = %v, want [0 N] (memory ids are 1-based)", pl.ArenaSize)
	}
	if alloc(t, pl, p, "x").Offset != alloc(t, pl, p, "b").Offset {
		t.Errorf("b does not reuse x's dead slot:\n%s", pl.Table())
	}
}

// Two independent adds (the ecn_portable_add_i64_f32 shape): offsets 0/16/32
// and the second output reuses a dead input slot; sizes round up to 16.
func TestAlignmentAndReuse(t *testing.T) {
	p := parse(t, `graph forward(%x: f32[1], %y: f32[1]) {
  %a: f32[1] = aten.relu.default(%x)
  %b: f32[1] = aten.relu.default(%y)
  return %a, %b
}`)
	pl := mustPlan(t, p, plan.DefaultOptions())
	if pl.Planned() != 48 {
		t.Fatalf("arena %d, want 48\n%s", pl.Planned(), pl.Table())
	}
	if a := alloc(t, pl, p, "a"); a.Size != 4 {
		t.Errorf("size of a = %d, want 4 (recorded unrounded)", a.Size)
	}
}

// ET-L03: the alloc flags leave inputs / outputs unplanned.
func TestAllocFlags(t *testing.T) {
	src := `graph forward(%x: f32[16]) {
  %a: f32[16] = aten.relu.default(%x)
  %b: f32[16] = aten.neg.default(%a)
  return %b
}`
	p := parse(t, src)
	opt := plan.DefaultOptions()
	opt.AllocGraphInput = false
	opt.AllocGraphOutput = false
	pl := mustPlan(t, p, opt)
	if _, ok := pl.Lookup(p.Main.Value("x")); ok {
		t.Error("input planned with AllocGraphInput=false")
	}
	if _, ok := pl.Lookup(p.Main.Value("b")); ok {
		t.Error("output planned with AllocGraphOutput=false")
	}
	if pl.Planned() != 64 {
		t.Errorf("arena %d, want 64 (only %%a)", pl.Planned())
	}
}

// Constants (parameters) are never planned; mutated buffers are.
func TestConstantsNotPlanned(t *testing.T) {
	p := parse(t, `input w: parameter "w"
input buf: buffer "buf" persistent
output buffer_mutation "buf"
output user_output
graph forward(%w: f32[16], %buf: f32[16], %x: f32[16]) {
  %a: f32[16] = aten.add.Tensor(%x, %w)
  %b: f32[16] = aten.add.Tensor(%buf, %a)
  return %b, %a
}`)
	pl := mustPlan(t, p, plan.DefaultOptions())
	if _, ok := pl.Lookup(p.Main.Value("w")); ok {
		t.Error("parameter planned")
	}
	if _, ok := pl.Lookup(p.Main.Value("buf")); !ok {
		t.Error("mutated buffer not planned")
	}
}

// Sizes come from upper bounds; an unbounded dim is an error naming the
// value, the symbol and the fix (ET-P10: the planner invents no bound).
func TestUpperBoundsAndUnbounded(t *testing.T) {
	p := parse(t, `symbol s0: [2, 10] hint 4
graph forward(%x: f32[s0, 4]) {
  %a: f32[s0, 4] = aten.relu.default(%x)
  return %a
}`)
	pl := mustPlan(t, p, plan.DefaultOptions())
	if a := alloc(t, pl, p, "a"); a.Size != 160 {
		t.Errorf("size %d, want 160 = 4 bytes × 10 × 4", a.Size)
	}
	p = parse(t, `symbol s0: [2, inf] hint 4
graph forward(%x: f32[s0, 4]) {
  %a: f32[s0, 4] = aten.relu.default(%x)
  return %a
}`)
	_, err := plan.Compute(p, plan.DefaultOptions())
	if err == nil {
		t.Fatal("unbounded dim planned")
	}
	for _, want := range []string{"%x", "s0", "widen-symbol-ranges", "Dim(min, max)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// Out variants share storage with their memory.alloc; a clone feeding the
// output keeps its own storage (ET-P37); expand_copy is materialized at
// its full size (ET-P09); the view_copy feeding the clone (no output reads
// it) becomes an et_view in its base's storage (ET-P35).
func TestLoweredAliasing(t *testing.T) {
	p := parse(t, `graph forward(%x: f32[1, 4]) {
  %e: f32[8, 4] = aten.expand.default(%x, [8, 4])
  %v: f32[32] = aten.view.default(%e, [32])
  %c: f32[32] = aten.clone.default(%v)
  return %c
}`)
	lower(t, p, "decompose-to-core", "to-dim-order-ops", "to-edge-views", "to-executorch-prim", "replace-view-copy-with-view", "to-out-variants", "plan-memory")
	pl, err := plan.Compute(p, plan.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := checkNoOverlap(pl); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, n := range p.Main.Nodes() {
		ops = append(ops, n.Op.String())
	}
	got := strings.Join(ops, " ")
	for _, bad := range []string{"aten.expand.default", "aten.view.default", "aten.clone.default"} {
		if strings.Contains(got, bad) {
			t.Errorf("%s survived lowering: %s", bad, got)
		}
	}
	views := 0
	for _, n := range p.Main.Nodes() {
		r := n.Result()
		if r == nil || r.Tensor() == nil {
			continue
		}
		a, _ := pl.Lookup(r)
		switch n.Op.String() {
		case "aten.expand_copy.out":
			if a.Size != 8*4*4 {
				t.Errorf("expand_copy planned at %d bytes, want 128 (materialized)", a.Size)
			}
		case "executorch_prim.et_view.default":
			views++
			if base, _ := pl.Lookup(n.Args[0].Value); base != a {
				t.Errorf("et_view planned at %v, its base at %v", a, base)
			}
		case "dim_order_ops._clone_dim_order.out":
			src, _ := pl.Lookup(n.Arg("self").Value)
			if src.Offset == a.Offset {
				t.Errorf("clone feeding the output shares storage with its input")
			}
		}
		if n.Op.Has(ir.PropOutVariant) {
			out, _ := pl.Lookup(n.Arg("out").Value)
			if out != a {
				t.Errorf("%s: result %v and out tensor %v differ", n.Short(), a, out)
			}
		}
	}
	if views != 1 {
		t.Errorf("%d et_views, want 1 (the view feeding the clone)", views)
	}
	rec, err := plan.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if rec.ArenaSize[1] != pl.Planned() {
		t.Errorf("recorded arena %v, computed %d", rec.ArenaSize, pl.Planned())
	}
}

// ET-P11: a cat input of unbacked size (maybe empty) and a statically empty
// one are both kept: nothing is pruned on a guess; the empty one needs no
// bytes and the unbacked one is planned at its upper bound.
func TestCatKeepsEmptyAndUnbackedInputs(t *testing.T) {
	p := parse(t, `symbol u0: [0, 8] unbacked
graph forward(%x: f32[0, 4], %y: f32[u0, 4], %z: f32[2, 4]) {
  %cat: f32[u0 + 2, 4] = aten.cat.default([%x, %y, %z])
  return %cat
}`)
	lower(t, p)
	var cat *ir.Node
	for _, n := range p.Main.Nodes() {
		if n.Op.String() == "aten.cat.out" {
			cat = n
		}
	}
	if cat == nil || len(cat.Arg("tensors").List) != 3 {
		t.Fatalf("cat inputs pruned or cat missing:\n%s", ir.Print(p))
	}
	pl := mustPlan(t, p, plan.DefaultOptions())
	if a := alloc(t, pl, p, "x"); a.Size != 0 {
		t.Errorf("empty input planned at %d bytes", a.Size)
	}
	if a := alloc(t, pl, p, "y"); a.Size != 8*4*4 {
		t.Errorf("unbacked input planned at %d bytes, want 128", a.Size)
	}
	if a, _ := pl.Lookup(cat.Result()); a.Size != 10*4*4 {
		t.Errorf("cat planned at %d bytes, want 160", a.Size)
	}
}

// Property: on random programs no two live values overlap, offsets are
// aligned, and the arena is at least the lower bound.
func TestRandomProgramsNeverOverlap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 200; iter++ {
		p := ir.NewProgram()
		g := p.Main
		var vals []*ir.Value
		for i := 0; i < 1+r.IntN(3); i++ {
			v, err := g.AddInput("in"+string(rune('a'+i)), ir.Tensor(ir.Float32, int64(1+r.IntN(40))))
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, v)
		}
		p.Signature = ir.DefaultSignature(g)
		b := ir.NewBuilder(g)
		relu := ir.MustLookupOp("aten.relu.default")
		cat := ir.MustLookupOp("aten.cat.default")
		for i := 0; i < 5+r.IntN(25); i++ {
			var v *ir.Value
			var err error
			if r.IntN(3) == 0 {
				v, err = b.Value(cat, ir.ValuesArg(vals[r.IntN(len(vals))], vals[r.IntN(len(vals))]))
			} else {
				v, err = b.Value(relu, ir.ValueArg(vals[r.IntN(len(vals))]))
			}
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, v)
		}
		g.SetOutputs(ir.ValueArg(vals[len(vals)-1]))
		p.Signature = ir.DefaultSignature(g)
		pl, err := plan.Compute(p, plan.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if err := checkNoOverlap(pl); err != nil {
			t.Fatalf("iteration %d: %v\n%s", iter, err, ir.Print(p))
		}
		if pl.Planned() < pl.MaxLiveLowerBound {
			t.Fatalf("iteration %d: arena %d below the lower bound %d", iter, pl.Planned(), pl.MaxLiveLowerBound)
		}
	}
}

// The overlap checker itself must catch an overlap (a test that can fail).
func TestOverlapCheckerCatchesBugs(t *testing.T) {
	p := parse(t, `graph forward(%x: f32[16]) {
  %a: f32[16] = aten.relu.default(%x)
  return %a
}`)
	pl := mustPlan(t, p, plan.DefaultOptions())
	pl.Values[1].Offset = pl.Values[0].Offset
	if checkNoOverlap(pl) == nil {
		t.Fatal("overlapping live values not reported")
	}
}

// Record reports a change only when a recorded value differs: the first
// recording, and a different plan, change the program; recording the same
// plan again does not (plan-memory's Changed flag comes from it).
func TestRecordReportsChanges(t *testing.T) {
	p := parse(t, `graph forward(%x: f32[16]) {
  %a: f32[16] = aten.relu.default(%x)
  %b: f32[16] = aten.neg.default(%a)
  return %b
}`)
	pl := mustPlan(t, p, plan.DefaultOptions())
	if !plan.Record(p, pl) {
		t.Error("first Record reported no change")
	}
	text := ir.Print(p)
	if plan.Record(p, pl) {
		t.Error("recording the same plan again reported a change")
	}
	if ir.Print(p) != text {
		t.Error("recording the same plan again changed the program text")
	}
	opt := plan.DefaultOptions()
	opt.AllocGraphInput = false
	if !plan.Record(p, mustPlan(t, p, opt)) {
		t.Error("recording a plan without the input reported no change")
	}
	if ir.Print(p) == text {
		t.Error("a different plan left the program text unchanged")
	}
}
