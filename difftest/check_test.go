package difftest_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fxport/fxport/difftest"
	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// rewritePass builds a test pass that replaces every node of op `from` by
// what build returns for it.
func rewritePass(name, from string, build func(b *ir.Builder, n *ir.Node) (*ir.Value, error)) *pm.Pass {
	op := ir.MustLookupOp(from)
	return &pm.Pass{
		Name:  name,
		Doc:   "test pass " + name,
		Kind:  pm.KindTransform,
		Stage: pm.StageStateCleanup,
		Run: func(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
			changed := false
			for _, n := range p.Main.Nodes() {
				if n.Op != op {
					continue
				}
				b := ir.NewBuilder(n.Graph)
				b.SetInsertBefore(n)
				b.Pass = name
				v, err := build(b, n)
				if err != nil {
					return pm.Result{}, err
				}
				n.Result().ReplaceAllUsesWith(v)
				if err := n.Erase(); err != nil {
					return pm.Result{}, err
				}
				changed = true
			}
			return pm.Result{Changed: changed}, nil
		},
	}
}

// Test passes: one exact rewrite, one wrong rewrite, one approximation.
var (
	negAsMul = rewritePass("neg-as-mul", "aten.neg.default", func(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
		return b.Value(ir.MustLookupOp("aten.mul.Scalar"), n.Args[0], ir.FloatArg(-1))
	})
	negAsRelu = rewritePass("neg-as-relu", "aten.neg.default", func(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
		return b.Value(ir.MustLookupOp("aten.relu.default"), n.Args[0])
	})
	geluTanh = rewritePass("gelu-tanh", "aten.gelu.default", func(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
		g, err := b.CallKw(ir.MustLookupOp("aten.gelu.default"), []ir.Arg{n.Args[0]}, map[string]ir.Arg{"approximate": ir.StringArg("tanh")})
		if err != nil {
			return nil, err
		}
		return g.Result(), nil
	})
)

func testCatalog(t *testing.T, passes ...*pm.Pass) *pm.Catalog {
	t.Helper()
	cat := pm.NewCatalog()
	for _, p := range passes {
		if err := cat.AddPass(p); err != nil {
			t.Fatal(err)
		}
	}
	return cat
}

func pipeline(t *testing.T, cat *pm.Catalog, names ...string) *pm.Pipeline {
	t.Helper()
	pl, err := cat.ParsePipeline("dynamo: dynamo.state-cleanup(" + strings.Join(names, ", ") + ")")
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

const negProgram = `symbol s0: [2, 64] hint 4
graph forward(%x: f32[s0, 3], %y: f32[3]) {
  %neg: f32[s0, 3] = aten.neg.default(%x)
  %add: f32[s0, 3] = aten.add.Tensor(%neg, %y)
  %gelu: f32[s0, 3] = aten.gelu.default(%add)
  return %gelu, %neg
}
`

func parse(t *testing.T, src string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), "test")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExactPassPasses(t *testing.T) {
	cat := testCatalog(t, negAsMul, negAsRelu, geluTanh)
	p := parse(t, negProgram)
	before := ir.Print(p)
	if err := difftest.Check(p, pipeline(t, cat, "neg-as-mul")); err != nil {
		t.Fatal(err)
	}
	if ir.Print(p) != before {
		t.Fatal("Check modified its input program")
	}
}

func TestWrongPassIsCaught(t *testing.T) {
	cat := testCatalog(t, negAsMul, negAsRelu, geluTanh)
	// neg-as-mul runs first and removes every neg: neg-as-relu finds nothing.
	if err := difftest.Check(parse(t, negProgram), pipeline(t, cat, "neg-as-mul", "neg-as-relu")); err != nil {
		t.Fatal(err)
	}
	var m *difftest.Mismatch
	err := difftest.Check(parse(t, negProgram), pipeline(t, cat, "neg-as-relu"))
	if !errors.As(err, &m) || m.Pass != "neg-as-relu" || m.Index != 1 {
		t.Fatalf("want a mismatch naming neg-as-relu, got %v", err)
	}
	if !strings.Contains(err.Error(), `pass "neg-as-relu"`) || !strings.Contains(err.Error(), "output") {
		t.Fatalf("message does not name the pass and output: %v", err)
	}
}

func TestWrongPassIsCaughtInWholePipelineMode(t *testing.T) {
	cat := testCatalog(t, negAsMul, negAsRelu, geluTanh)
	err := difftest.Check(parse(t, negProgram), pipeline(t, cat, "neg-as-relu"), difftest.WholePipeline())
	if !difftest.IsMismatch(err) {
		t.Fatalf("want a mismatch, got %v", err)
	}
}

func TestDeclaredApproximation(t *testing.T) {
	cat := testCatalog(t, negAsMul, negAsRelu, geluTanh)
	pl := pipeline(t, cat, "gelu-tanh", "neg-as-mul")
	// Undeclared: the approximation is a mismatch.
	if err := difftest.Check(parse(t, negProgram), pl); !difftest.IsMismatch(err) {
		t.Fatalf("undeclared approximation: want a mismatch, got %v", err)
	}
	within := func(tol float64) func(before, after []interp.Value) error {
		return func(before, after []interp.Value) error {
			for i := range before {
				if err := difftest.Compare(after[i], before[i], map[ir.DType]difftest.Tolerance{ir.Float32: {Abs: tol}}); err != nil {
					return fmt.Errorf("output %d: %w", i, err)
				}
			}
			return nil
		}
	}
	allow := difftest.Allowance{Pass: "gelu-tanh", Reason: "tanh approximation of gelu, within 1e-3", Check: within(1e-3)}
	if err := difftest.Check(parse(t, negProgram), pl, difftest.WithAllowance(allow)); err != nil {
		t.Fatalf("declared approximation: %v", err)
	}
	// The declared difference is checked: a too-tight bound fails.
	tight := difftest.Allowance{Pass: "gelu-tanh", Reason: "claims an impossible bound", Check: within(1e-9)}
	err := difftest.Check(parse(t, negProgram), pl, difftest.WithAllowance(tight))
	var m *difftest.Mismatch
	if !errors.As(err, &m) || !m.Allowed || m.Pass != "gelu-tanh" {
		t.Fatalf("want a failed allowance for gelu-tanh, got %v", err)
	}
	// Passes after the approximation are compared with its output: a wrong
	// one is still caught.
	pl2 := pipeline(t, cat, "gelu-tanh", "neg-as-relu")
	err = difftest.Check(parse(t, negProgram), pl2, difftest.WithAllowance(allow))
	if !errors.As(err, &m) || m.Pass != "neg-as-relu" {
		t.Fatalf("want a mismatch naming neg-as-relu after the allowed pass, got %v", err)
	}
}

func TestRandomOutputsAreNotCompared(t *testing.T) {
	cat := testCatalog(t, negAsMul, negAsRelu)
	src := `graph forward(%x: f32[4]) {
  %rand: f32[4] = aten.rand.default([4])
  %neg: f32[4] = aten.neg.default(%x)
  %add: f32[4] = aten.add.Tensor(%rand, %neg)
  return %add, %neg
}
`
	// The wrong pass changes %neg (compared) and %add (random, not compared).
	err := difftest.Check(parse(t, src), pipeline(t, cat, "neg-as-relu"))
	var m *difftest.Mismatch
	if !errors.As(err, &m) || !strings.Contains(m.Output, "output 1") {
		t.Fatalf("want a mismatch on output 1 only, got %v", err)
	}
}

func TestInputsMatchSymbolRanges(t *testing.T) {
	p := parse(t, `symbol s0: [3, 5] hint 4
symbol s1: [1, 1]
graph forward(%x: f32[s0, 2*s1], %n: Sym(s0 + 1), %m: b8[s0]) {
  return %x, %n, %m
}
`)
	seen := map[int64]bool{}
	for k := 0; k < 4; k++ {
		in, bind, err := difftest.GenerateInputs(p, 7, k, 0)
		if err != nil {
			t.Fatal(err)
		}
		s0 := bind["s0"]
		if s0 < 3 || s0 > 5 || bind["s1"] != 1 {
			t.Fatalf("sample %d: bindings %v outside the ranges", k, bind)
		}
		seen[s0] = true
		x := in[0].(*interp.Tensor)
		if x.Shape[0] != s0 || x.Shape[1] != 2 || x.DType != ir.Float32 {
			t.Fatalf("sample %d: x is %s", k, x)
		}
		if in[1].(int64) != s0+1 {
			t.Fatalf("sample %d: n = %v, want %d", k, in[1], s0+1)
		}
		again, _, _ := difftest.GenerateInputs(p, 7, k, 0)
		if difftest.Compare(again[0], in[0], nil) != nil {
			t.Fatalf("sample %d is not reproducible", k)
		}
	}
	if !seen[4] || len(seen) < 2 {
		t.Fatalf("samples should start at the hint and vary: %v", seen)
	}
}
