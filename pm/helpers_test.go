package pm_test

import (
	"fmt"
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
