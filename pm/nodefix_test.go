package pm_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// Node fixes of "executorch" and "executorch.xnnpack" may share targets;
// for an xnnpack export both apply, tried in catalog-ID order, and the
// first that returns true consumes the node.
func TestNodeFixFirstMatchWins(t *testing.T) {
	var calls []string
	c := testCatalog()
	mustAdd(t, c.AddNodeFix(&pm.NodeFix{ID: "ET-NF90", Name: "claim-relu-of-add", Doc: "d", Backend: pm.BackendExecuTorch,
		Targets: []ir.Op{ir.OpAtenRelu},
		Fix: func(n *ir.Node, c *pm.Ctx) (bool, error) {
			calls = append(calls, "claim:"+n.Results[0].Name)
			if n.Args[0].Value.Def == nil || n.Args[0].Value.Def.Op.String() != "aten.add.Tensor" {
				return false, nil // not mine
			}
			c.Debugf(n, "leaving it alone")
			return true, nil
		}}))
	mustAdd(t, c.AddNodeFix(&pm.NodeFix{ID: "ET-NF91", Name: "relu-to-neg", Doc: "d", Backend: "executorch.xnnpack",
		Targets: []ir.Op{ir.OpAtenRelu},
		Fix: func(n *ir.Node, c *pm.Ctx) (bool, error) {
			calls = append(calls, "neg:"+n.Results[0].Name)
			b := ir.NewBuilder(n.Graph)
			b.SetInsertBefore(n)
			b.Pass = "relu-to-neg"
			v, err := b.Value(ir.MustLookupOp("aten.neg.default"), n.Args[0])
			if err != nil {
				return false, err
			}
			n.Result().ReplaceAllUsesWith(v)
			return true, nil // the dead relu is left to DCE
		}}))
	mustAdd(t, c.AddNodeFix(&pm.NodeFix{ID: "ET-NF92", Name: "cuda-only", Doc: "d", Backend: "executorch.cuda",
		Targets: []ir.Op{ir.OpAtenRelu}, Fix: func(n *ir.Node, c *pm.Ctx) (bool, error) {
			calls = append(calls, "cuda:"+n.Results[0].Name)
			return true, nil
		}}))

	pl, err := c.Build(pm.TargetExecuTorch, "executorch.xnnpack")
	require.NoError(t, err)
	assert.Equal(t, "executorch.xnnpack: executorch.fx-node-fixes(executorch-node-fixes)", pl.String())
	p := parse(t, progText)
	var debug strings.Builder
	rep, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true, Debug: &debug})
	require.NoError(t, err)
	assert.Equal(t, []string{"claim:r", "neg:r", "claim:s"}, calls, "the new neg is not revisited; cuda never runs")
	assert.Equal(t, "executorch-node-fixes/claim-relu-of-add: %s (aten.relu.default): leaving it alone\n", debug.String())
	assert.Equal(t, []string{
		"executorch-node-fixes/relu-to-neg@%r (aten.relu.default)",
		"executorch-node-fixes/claim-relu-of-add@%s (aten.relu.default)",
	}, firingsOf(rep.Fired))
	pr, _ := rep.Pass("executorch-node-fixes")
	assert.Equal(t, []pm.Stat{{"claim-relu-of-add", 1}, {"dce-removed", 1}, {"relu-to-neg", 1}}, pr.Stats)
	assert.True(t, pr.Changed)
	assert.Equal(t, `graph forward(%x: f32[4], %y: f32[4]) {
  %d: f32[4] = aten.detach.default(%x)
  %neg: f32[4] = aten.neg.default(%d) {provenance = "relu-to-neg"}
  %a: f32[4] = aten.add.Tensor(%neg, %y)
  %s: f32[4] = aten.relu.default(%a)
  return %s, %neg
}
`, ir.Print(p))

	// The cuda export gets the common fix, then its own.
	calls = nil
	pl, err = c.Build(pm.TargetExecuTorch, "executorch.cuda")
	require.NoError(t, err)
	_, err = pm.Run(parse(t, progText), pl, nil, pm.Config{})
	require.NoError(t, err)
	assert.Equal(t, []string{"claim:r", "cuda:r", "claim:s"}, calls)
}

func TestNodeFixDriverInstances(t *testing.T) {
	c := testCatalog()
	n := 0
	mustAdd(t, c.AddNodeFix(&pm.NodeFix{ID: "ONNX-FX03", Name: "count-detach", Doc: "d", Backend: pm.BackendAll,
		Targets: []ir.Op{ir.OpAtenDetach}, Fix: func(*ir.Node, *pm.Ctx) (bool, error) { n++; return false, nil }}))
	pl, err := c.ParsePipeline("onnx: onnx.fx-node-fixes(onnx-node-fixes), onnx.onnx-patches(onnx-node-fixes-after-decompose)")
	require.NoError(t, err)
	rep, err := pm.Run(parse(t, progText), pl, nil, pm.Config{})
	require.NoError(t, err)
	assert.Equal(t, 2, n, "the same fixes run under both instances")
	assert.Len(t, rep.Passes, 2)
	assert.Empty(t, rep.Fired, "a fix that returns false does not fire")
	built, err := c.Build(pm.TargetONNX, "")
	require.NoError(t, err)
	assert.Equal(t, "onnx: onnx.fx-node-fixes(onnx-node-fixes), onnx.onnx-patches(onnx-node-fixes-after-decompose)", built.String())
}

const regionText = `graph forward(%pred: b8[], %x: f32[4]) {
  %cond: f32[4] = higher_order.cond(%pred, ^true_graph_0, ^false_graph_0, [%x])
  ^true_graph_0(%a: f32[4]) {
    %sin: f32[4] = aten.sin.default(%a)
    return %sin
  }
  ^false_graph_0(%a: f32[4]) {
    %relu: f32[4] = aten.relu.default(%a)
    return %relu
  }
  %sin: f32[4] = aten.sin.default(%cond)
  return %sin
}
`

// Drivers walk regions too; patches applied inside a region revert exactly.
func TestDriversWalkRegions(t *testing.T) {
	c := testCatalog()
	addPatch(t, c, reluPatch("relu-as-neg-mul", pm.BackendONNX))
	var seen []string
	mustAdd(t, c.AddNodeFix(&pm.NodeFix{Name: "sin-to-neg", Doc: "d", Backend: pm.BackendONNX, Targets: []ir.Op{ir.OpAtenSin},
		Fix: func(n *ir.Node, c *pm.Ctx) (bool, error) {
			seen = append(seen, n.Graph.Name+"/"+n.Results[0].Name)
			b := ir.NewBuilder(n.Graph)
			b.SetInsertBefore(n)
			v, err := b.Value(ir.MustLookupOp("aten.neg.default"), n.Args[0])
			if err != nil {
				return false, err
			}
			n.Result().ReplaceAllUsesWith(v)
			return true, nil
		}}))
	pl, err := c.Build(pm.TargetONNX, "")
	require.NoError(t, err)
	p := parse(t, regionText)
	exp, err := pm.NewExport(pm.TargetONNX, "", pm.WithCatalog(c))
	require.NoError(t, err)
	rep, err := pm.Run(p, pl, exp, pm.Config{VerifyEach: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"forward/sin", "true_graph_0/sin"}, seen)
	pr, _ := rep.Pass("onnx-node-fixes")
	assert.Equal(t, int64(2), pr.Stat("dce-removed"), "DCE reaches into regions")
	assert.Equal(t, []string{
		"apply-torch-patches/relu-as-neg-mul@%relu (aten.relu.default)",
		"onnx-node-fixes/sin-to-neg@%sin (aten.sin.default)",
		"onnx-node-fixes/sin-to-neg@%sin (aten.sin.default)",
	}, firingsOf(rep.Fired))
	assert.Equal(t, "false_graph_0", rep.Fired[0].Graph)
	assert.NotContains(t, ir.Print(p), "aten.sin.default")
	assert.NotContains(t, ir.Print(p), "aten.relu.default")

	require.NoError(t, exp.Revert("relu-as-neg-mul"))
	require.NoError(t, ir.Verify(p))
	assert.Contains(t, ir.Print(p), "    %relu: f32[4] = aten.relu.default(%a)\n    return %relu\n")
}
