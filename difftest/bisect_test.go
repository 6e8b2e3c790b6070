package difftest_test

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/difftest"
	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

func TestBisectFindsPlantedBug(t *testing.T) {
	cat := testCatalog(t, negAsMul, negAsRelu, geluTanh)
	// The exact pass first, then the planted bug on a program that still
	// has a neg for it to break.
	src := `symbol s0: [2, 64] hint 4
graph forward(%x: f32[s0, 3], %y: f32[3]) {
  %add: f32[s0, 3] = aten.add.Tensor(%x, %y)
  %neg: f32[s0, 3] = aten.neg.default(%add)
  %mul: f32[s0, 3] = aten.mul.Tensor(%neg, %y)
  return %mul
}
`
	pl := pipeline(t, cat, "gelu-tanh", "neg-as-relu")
	rep, err := difftest.Bisect(parse(t, src), pl, difftest.BisectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pass == nil || rep.Pass.Pass != "neg-as-relu" || rep.Pass.Index != 2 {
		t.Fatalf("want pass #2 neg-as-relu, got\n%s", rep)
	}
	if !strings.Contains(rep.Node, "aten.relu.default") && !strings.Contains(rep.Node, "%mul") {
		t.Fatalf("diverging node %q should be the new relu or its user %%mul", rep.Node)
	}
	text := rep.String()
	for _, want := range []string{`"neg-as-relu"`, "first disagreeing pass", "diverging node"} {
		if !strings.Contains(text, want) {
			t.Fatalf("report lacks %q:\n%s", want, text)
		}
	}
	// A clean pipeline reports no disagreement.
	rep, err = difftest.Bisect(parse(t, src), pipeline(t, cat, "neg-as-mul"), difftest.BisectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pass != nil || !strings.Contains(rep.String(), "no disagreement") {
		t.Fatalf("want no disagreement, got\n%s", rep)
	}
}

func TestBisectAgainstReferenceOutputs(t *testing.T) {
	cat := testCatalog(t, negAsMul, negAsRelu)
	src := `graph forward(%x: f32[2]) {
  %neg: f32[2] = aten.neg.default(%x)
  return %neg
}
`
	x := interp.FromFloat64(ir.Float32, []int64{2}, []float64{1, -2})
	good := interp.FromFloat64(ir.Float32, []int64{2}, []float64{-1, 2})
	opts := difftest.BisectOptions{Inputs: [][]interp.Value{{x}}, Reference: [][]interp.Value{{good}}, ReferenceName: "torch"}
	rep, err := difftest.Bisect(parse(t, src), pipeline(t, cat, "neg-as-mul", "neg-as-relu"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pass != nil {
		t.Fatalf("neg-as-mul is exact and leaves nothing for neg-as-relu; got\n%s", rep)
	}
	// A reference the input program does not meet is reported as such.
	bad := interp.FromFloat64(ir.Float32, []int64{2}, []float64{5, 5})
	opts.Reference = [][]interp.Value{{bad}}
	rep, err = difftest.Bisect(parse(t, src), pipeline(t, cat, "neg-as-relu"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.InputDisagrees == "" || !strings.Contains(rep.String(), "already disagrees") {
		t.Fatalf("want the input program to disagree, got\n%s", rep)
	}
}

func TestBisectNamesPatchToRevert(t *testing.T) {
	cat := testCatalog(t)
	bad := &pm.Patch{
		Name:    "neg-relu-patch",
		Doc:     "a wrong patch: neg becomes relu",
		Backend: pm.BackendAll,
		Stage:   pm.StageModelPatches,
		Targets: []string{"aten.neg.default"},
		Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
			v, err := b.Value(ir.MustLookupOp("aten.relu.default"), n.Args[0])
			return []*ir.Value{v}, err
		},
	}
	// The catalog's own pipeline: just the patch driver.
	cat.Tables = []pm.Table{{Target: pm.TargetDynamo, Rows: []pm.Row{
		{Stage: pm.StageModelPatches, Pass: pm.PatchDriverName(pm.StageModelPatches), Why: "runs the planted patch"}}}}
	cat.Order, cat.PatchOrder = nil, []pm.PatchRow{{Patch: bad.Name}}
	if err := cat.AddPatch(bad); err != nil {
		t.Fatal(err)
	}
	pl, err := cat.Build(pm.TargetDynamo, "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := difftest.Bisect(parse(t, negProgram), pl, difftest.BisectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pass == nil || rep.Pass.Pass != pm.PatchDriverName(pm.StageModelPatches) {
		t.Fatalf("want the patch driver to disagree, got\n%s", rep)
	}
	if len(rep.Patches) != 1 || rep.Patches[0].Name != "neg-relu-patch" || !rep.Patches[0].Restores {
		t.Fatalf("want reverting neg-relu-patch to restore agreement, got\n%s", rep)
	}
	if !strings.Contains(rep.String(), "neg-relu-patch: reverting it restores agreement") {
		t.Fatalf("report:\n%s", rep)
	}
}
