package pm_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// progText is the program most tests run on: a detach, two relus (one
// from a model method, per its metadata), an add, two outputs.
const progText = `graph forward(%x: f32[4], %y: f32[4]) {
  %d: f32[4] = aten.detach.default(%x)
  %r: f32[4] = aten.relu.default(%d) {nn_module_stack = "router,router,transformers.models.nllb_moe.modeling_nllb_moe.NllbMoeTop2Router", stack_trace = "  File \"m.py\", line 3, in _cast_classifier\n    x\n"}
  %a: f32[4] = aten.add.Tensor(%r, %y)
  %s: f32[4] = aten.relu.default(%a)
  return %s, %r
}
`

func parse(t testing.TB, src string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), t.Name()+".fxir")
	require.NoError(t, err)
	require.NoError(t, ir.Verify(p))
	return p
}

func op(t testing.TB, name string) ir.Op {
	t.Helper()
	o, ok := ir.LookupOp(name)
	require.True(t, ok, "op %s missing from the op table", name)
	return o
}

// reluPatch rewrites relu(x) into neg(mul(x, x)): two built nodes.
func reluPatch(name string, backend string) *pm.Patch {
	return &pm.Patch{
		ID: "ONNX-P99", Name: name, Doc: "test patch on relu\n\nBuilds two nodes.",
		Backend: backend, Stage: pm.StageTorchPatches, Targets: []string{"aten::relu"},
		Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
			x := n.Args[0]
			m, err := b.Value(ir.MustLookupOp("aten.mul.Tensor"), x, x)
			if err != nil {
				return nil, err
			}
			neg, err := b.Value(ir.MustLookupOp("aten.neg.default"), ir.ValueArg(m))
			if err != nil {
				return nil, err
			}
			c.Debugf(n, "rewrote into %s", neg)
			return []*ir.Value{neg}, nil
		},
	}
}

// detachPatch drops detach: the replacement is the input, no node is built.
func detachPatch(name, backend string) *pm.Patch {
	return &pm.Patch{
		ID: "ET-P04", Name: name, Doc: "drop detach", Backend: backend, Stage: pm.StageTorchPatches,
		Targets: []string{"torch.Tensor.detach"},
		Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
			return []*ir.Value{n.Args[0].Value}, nil
		},
	}
}

// testPass builds a generic pass with a Run.
func testPass(name string, stage string, run func(p *ir.Program, c *pm.Ctx) (pm.Result, error)) *pm.Pass {
	return &pm.Pass{Name: name, Doc: "test pass " + name, Kind: pm.KindTransform, Stage: stage, Run: run}
}

func noop(p *ir.Program, c *pm.Ctx) (pm.Result, error) { return pm.Result{}, nil }

// firingsOf renders firings compactly for assertions.
func firingsOf(fs []pm.Firing) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s/%s@%s", f.Pass, f.Entry, f.Node))
	}
	return out
}

func mustAdd(t testing.TB, err error) {
	t.Helper()
	require.NoError(t, err)
}

// testCatalog is a catalog whose pipeline tables hold only pm's own driver
// rows of the default tables; addPass, addProgramFix and addPatch give it
// rows for test entries.
func testCatalog() *pm.Catalog {
	c := pm.NewCatalog()
	drivers := map[string]bool{}
	for _, p := range c.Passes.All() {
		if p.Stage != "" {
			drivers[p.Name] = true
		}
	}
	var tables []pm.Table
	for _, t := range pm.Tables {
		nt := pm.Table{Target: t.Target}
		for _, r := range t.Rows {
			if drivers[r.Pass] {
				nt.Rows = append(nt.Rows, r)
			}
		}
		tables = append(tables, nt)
	}
	c.Tables = tables
	c.Order, c.PatchOrder = nil, nil
	return c
}

// addRow places a row for a test pass in every table whose target has its
// stage: at the end of the stage, before the stage's node-fix drivers.
func addRow(c *pm.Catalog, stage, name string) {
	for ti := range c.Tables {
		t := &c.Tables[ti]
		si := pm.StageIndex(t.Target, stage)
		if si < 0 {
			continue
		}
		at := 0
		for i, r := range t.Rows {
			ri := pm.StageIndex(t.Target, r.Stage)
			if ri < si || ri == si && !strings.HasSuffix(r.Pass, "node-fixes") && !strings.HasSuffix(r.Pass, "node-fixes-after-decompose") {
				at = i + 1
			}
		}
		row := pm.Row{Stage: stage, Pass: name, Why: "test pass"}
		t.Rows = append(t.Rows[:at], append([]pm.Row{row}, t.Rows[at:]...)...)
	}
}

// addPass registers p and, when it has a stage, a table row for it.
func addPass(t testing.TB, c *pm.Catalog, p *pm.Pass) {
	t.Helper()
	if p.Stage != "" {
		addRow(c, p.Stage, p.Name)
	}
	mustAdd(t, c.AddPass(p))
}

// addProgramFix registers f and a table row for its pass.
func addProgramFix(t testing.TB, c *pm.Catalog, f *pm.ProgramFix) {
	t.Helper()
	addRow(c, f.Stage, f.Name)
	mustAdd(t, c.AddProgramFix(f))
}

// addPatch appends p to the catalog's PatchOrder and registers it.
func addPatch(t testing.TB, c *pm.Catalog, p *pm.Patch) {
	t.Helper()
	c.PatchOrder = append(c.PatchOrder, pm.PatchRow{Patch: p.Name})
	mustAdd(t, c.AddPatch(p))
}
