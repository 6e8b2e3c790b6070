package pm_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

const methodTarget = "transformers.models.nllb_moe.modeling_nllb_moe.NllbMoeTop2Router._cast_classifier"

// patchCatalog registers, in this order: a relu rewrite, an identity
// patch on detach (torch API path) and a model-method patch.
func patchCatalog(t *testing.T) *pm.Catalog {
	c := testCatalog()
	addPatch(t, c, reluPatch("relu-as-neg-mul", pm.BackendONNX))
	addPatch(t, c, detachPatch("drop-detach", pm.BackendONNX))
	addPatch(t, c, &pm.Patch{ID: "DYN-P03", Name: "skip-cast-classifier", Doc: "neg the classifier cast",
		Backend: pm.BackendAll, Stage: pm.StageModelPatches, Targets: []string{methodTarget},
		Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
			v, err := b.Value(ir.MustLookupOp("aten.sin.default"), n.Args[0])
			return []*ir.Value{v}, err
		}})
	return c
}

func runONNX(t *testing.T, c *pm.Catalog, p *ir.Program, exp *pm.Export) *pm.Report {
	t.Helper()
	pl, err := c.Build(pm.TargetONNX, "")
	require.NoError(t, err)
	rep, err := pm.Run(p, pl, exp, pm.Config{VerifyEach: true})
	require.NoError(t, err)
	return rep
}

func TestPatchesApplyAndRevertExactly(t *testing.T) {
	c := patchCatalog(t)
	p := parse(t, progText)
	exp, err := pm.NewExport(pm.TargetONNX, "", pm.WithCatalog(c))
	require.NoError(t, err)
	assert.Equal(t, []string{"relu-as-neg-mul", "drop-detach", "skip-cast-classifier"}, exp.PatchNames())

	rep := runONNX(t, c, p, exp)
	assert.Equal(t, []string{
		"apply-model-patches/skip-cast-classifier@%r (aten.relu.default)",
		"apply-torch-patches/relu-as-neg-mul@%s (aten.relu.default)",
		"apply-torch-patches/drop-detach@%d (aten.detach.default)",
	}, firingsOf(rep.Fired))
	torch, ok := rep.Pass("apply-torch-patches")
	require.True(t, ok)
	assert.True(t, torch.Changed)
	assert.Equal(t, int64(1), torch.Stat("relu-as-neg-mul"))
	assert.Equal(t, rep.Fired, exp.Fired())

	want := `graph forward(%x: f32[4], %y: f32[4]) {
  %sin: f32[4] = aten.sin.default(%x) {nn_module_stack = "router,router,transformers.models.nllb_moe.modeling_nllb_moe.NllbMoeTop2Router", provenance = "skip-cast-classifier", stack_trace = "  File \"m.py\", line 3, in _cast_classifier\n    x\n"}
  %a: f32[4] = aten.add.Tensor(%sin, %y)
  %mul: f32[4] = aten.mul.Tensor(%a, %a) {provenance = "relu-as-neg-mul"}
  %neg: f32[4] = aten.neg.default(%mul) {provenance = "relu-as-neg-mul"}
  return %neg, %sin
}
`
	require.Equal(t, want, ir.Print(p))
	apps := exp.Applications()
	require.Len(t, apps, 3)
	assert.Equal(t, pm.Application{Patch: "skip-cast-classifier", ID: "DYN-P03", Graph: "forward",
		Node: "%r (aten.relu.default)", Created: []string{"%sin (aten.sin.default)"}}, apps[0])
	assert.Equal(t, []string{"%mul (aten.mul.Tensor)", "%neg (aten.neg.default)"}, apps[1].Created)
	assert.Empty(t, apps[2].Created)

	// The method patch's original read %d, which drop-detach removed:
	// reverting it first is refused, naming the patch to revert before.
	err = exp.Revert("skip-cast-classifier")
	require.ErrorContains(t, err, `application on %r (aten.relu.default) in graph forward: operand %d was replaced by patch "drop-detach"; revert that first`)
	require.Equal(t, want, ir.Print(p), "a refused revert changes nothing")

	// Revert in an order other than application order: each restores
	// exactly its own nodes.
	require.NoError(t, exp.Revert("relu-as-neg-mul"))
	require.NoError(t, ir.Verify(p))
	require.NoError(t, exp.Revert("drop-detach"))
	require.NoError(t, ir.Verify(p))
	require.NoError(t, exp.Revert("skip-cast-classifier"))
	require.NoError(t, ir.Verify(p))
	assert.Equal(t, progText, ir.Print(p))
	for _, a := range exp.Applications() {
		assert.True(t, a.Reverted, a.Patch)
	}
	// Reverting again does nothing; an unknown patch is an error.
	require.NoError(t, exp.Revert("relu-as-neg-mul"))
	require.ErrorContains(t, exp.Revert("no-such-patch"), `patch "no-such-patch" is not installed in this export`)

	// Applying again after a revert works and reverts again.
	exp2, err := pm.NewExport(pm.TargetONNX, "", pm.WithCatalog(c))
	require.NoError(t, err)
	runONNX(t, c, p, exp2)
	for _, name := range []string{"drop-detach", "skip-cast-classifier", "relu-as-neg-mul"} {
		require.NoError(t, exp2.Revert(name))
	}
	assert.Equal(t, progText, ir.Print(p))
}

func TestRevertReportsChangedApplications(t *testing.T) {
	c := patchCatalog(t)
	p := parse(t, progText)
	exp, err := pm.NewExport(pm.TargetONNX, "", pm.WithCatalog(c), pm.ExcludePatches("DYN-P03", "drop-detach"))
	require.NoError(t, err)
	assert.Equal(t, []string{"relu-as-neg-mul"}, exp.PatchNames())
	runONNX(t, c, p, exp)
	// relu(%d) → neg(mul(%d, %d)) as %neg, relu(%a) → %neg_1. Now a later
	// pass replaces %neg by a sin of the same input.
	neg := p.Main.Value("neg").Def
	b := ir.NewBuilder(p.Main)
	b.SetInsertBefore(neg)
	s, err := b.Value(ir.MustLookupOp("aten.sin.default"), neg.Args[0])
	require.NoError(t, err)
	neg.Results[0].ReplaceAllUsesWith(s)
	require.NoError(t, neg.Erase())

	err = exp.Revert("relu-as-neg-mul")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `pm: revert patch "relu-as-neg-mul": application on %r (aten.relu.default) in graph forward: built node %neg (aten.neg.default) was removed`)
	// The intact application (on %s) was reverted; the other stays.
	apps := exp.Applications()
	assert.False(t, apps[0].Reverted)
	assert.True(t, apps[1].Reverted)
	require.NoError(t, ir.Verify(p))
	assert.Contains(t, ir.Print(p), "%s: f32[4] = aten.relu.default(%a)")
	assert.NotContains(t, ir.Print(p), "%r: f32[4]")
}

func TestRevertRefusesTakenNamesAndMovedUsers(t *testing.T) {
	c := patchCatalog(t)
	p := parse(t, progText)
	exp, err := pm.NewExport(pm.TargetONNX, "", pm.WithCatalog(c), pm.ExcludePatches("relu-as-neg-mul", "skip-cast-classifier"))
	require.NoError(t, err)
	runONNX(t, c, p, exp)
	// %d is gone; something else takes its name.
	require.NoError(t, p.Main.Value("r").Rename("d"))
	err = exp.Revert("drop-detach")
	require.ErrorContains(t, err, "result name %d is taken by another value")
	require.NoError(t, p.Main.Value("d").Rename("r"))
	// Its user moves above the place the detach goes back to: still fine,
	// the original goes before its first user.
	require.NoError(t, exp.Revert("drop-detach"))
	assert.Equal(t, progText, ir.Print(p))
}

func TestPatchContract(t *testing.T) {
	mk := func(rw func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error)) *pm.Catalog {
		c := testCatalog()
		addPatch(t, c, &pm.Patch{Name: "bad", Doc: "d", Backend: "onnx", Stage: pm.StageTorchPatches,
			Targets: []string{"aten::add.Tensor"}, Rewrite: rw})
		return c
	}
	run := func(c *pm.Catalog) error {
		pl, err := c.Build(pm.TargetONNX, "")
		require.NoError(t, err)
		_, err = pm.Run(parse(t, progText), pl, nil, pm.Config{})
		return err
	}
	neg := ir.MustLookupOp("aten.neg.default")
	for want, rw := range map[string]func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error){
		"Rewrite returned 2 values for 1 results": func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
			v, _ := b.Value(neg, n.Args[0])
			return []*ir.Value{v, v}, nil
		},
		"Rewrite returned the node's own result %a": func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
			return n.Results, nil
		},
		"Rewrite returned no value for used result %a": func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
			return []*ir.Value{nil}, nil
		},
		"replacement %t has type f32[4, 4], result %a has f32[4]": func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
			t, err := b.Raw(neg, []ir.Arg{n.Args[0]}, []ir.Type{ir.Tensor(ir.Float32, 4, 4)}, []string{"t"})
			return []*ir.Value{t.Results[0]}, err
		},
	} {
		err := run(mk(rw))
		require.Error(t, err, want)
		assert.Contains(t, err.Error(), `pass "apply-torch-patches": node %a (aten.add.Tensor) in graph forward: patch "bad": `+want)
	}
	// A patch that declines after building leaves nothing behind.
	c := mk(func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
		_, err := b.Value(neg, n.Args[0])
		return nil, err
	})
	pl, _ := c.Build(pm.TargetONNX, "")
	p := parse(t, progText)
	rep, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true})
	require.NoError(t, err)
	assert.Equal(t, progText, ir.Print(p))
	assert.Empty(t, rep.Fired)
}

func TestExportPatchSelection(t *testing.T) {
	c := patchCatalog(t)
	optin := reluPatch("opt-in-relu", pm.BackendONNX)
	optin.ID, optin.OptIn, optin.Stage = "ONNX-P98", true, pm.StageONNXPatches
	addPatch(t, c, optin)
	addPatch(t, c, detachPatch("et-detach", pm.BackendExecuTorch))

	exp, err := pm.NewExport(pm.TargetONNX, "", pm.WithCatalog(c))
	require.NoError(t, err)
	assert.Equal(t, []string{"relu-as-neg-mul", "drop-detach", "skip-cast-classifier"}, exp.PatchNames())
	exp, err = pm.NewExport(pm.TargetONNX, "onnx", pm.WithCatalog(c), pm.IncludePatches("ONNX-P98"), pm.ExcludePatches("ONNX-P99"))
	require.NoError(t, err)
	assert.Equal(t, []string{"drop-detach", "skip-cast-classifier", "opt-in-relu"}, exp.PatchNames())
	exp, err = pm.NewExport(pm.TargetExecuTorch, "", pm.WithCatalog(c))
	require.NoError(t, err)
	assert.Equal(t, "executorch.xnnpack", exp.Backend())
	assert.Equal(t, []string{"skip-cast-classifier", "et-detach"}, exp.PatchNames())

	for want, opts := range map[string][]pm.ExportOption{
		`no patch named or tagged "nope"`:                       {pm.ExcludePatches("nope")},
		`patch "et-detach" is for backend executorch, not onnx`: {pm.IncludePatches("et-detach")},
		`patch "drop-detach" is both included and excluded`:     {pm.ExcludePatches("drop-detach"), pm.IncludePatches("drop-detach")},
	} {
		_, err := pm.NewExport(pm.TargetONNX, "", append(opts, pm.WithCatalog(c))...)
		require.ErrorContains(t, err, want)
	}
	_, err = pm.NewExport(pm.TargetExecuTorch, "executorch")
	require.ErrorContains(t, err, `target executorch has no backend "executorch"`)

	// The opt-in patch is installed, but a pipeline without its driver
	// does not run it: the report says so.
	exp, err = pm.NewExport(pm.TargetONNX, "", pm.WithCatalog(c), pm.IncludePatches("opt-in-relu"))
	require.NoError(t, err)
	pl, err := c.ParsePipeline("onnx: onnx.torch-patches(apply-torch-patches)")
	require.NoError(t, err)
	rep, err := pm.Run(parse(t, progText), pl, exp, pm.Config{})
	require.NoError(t, err)
	assert.Equal(t, []pm.UnrunPatch{{Patch: "skip-cast-classifier", Stage: "model-patches"}, {Patch: "opt-in-relu", Stage: "onnx-patches"}}, rep.Unrun)
	assert.Contains(t, rep.String(), `unrun patch "opt-in-relu": the pipeline has no apply-onnx-patches`)
}

// Two exports with different patch sets run concurrently on two programs;
// neither sees the other's patches or records. Run under -race.
func TestConcurrentExportsAreScoped(t *testing.T) {
	c := patchCatalog(t)
	pl, err := c.Build(pm.TargetONNX, "")
	require.NoError(t, err)
	const rounds = 20
	type result struct {
		text  string
		apps  int
		fired []string
		err   error
	}
	run := func(exclude []string) result {
		p, err := ir.Parse([]byte(progText), "concurrent.fxir")
		if err != nil {
			return result{err: err}
		}
		exp, err := pm.NewExport(pm.TargetONNX, "", pm.WithCatalog(c), pm.ExcludePatches(exclude...))
		if err != nil {
			return result{err: err}
		}
		rep, err := pm.Run(p, pl, exp, pm.Config{VerifyEach: true, Shuffle: 7})
		if err != nil {
			return result{err: err}
		}
		text := ir.Print(p)
		for _, name := range exp.PatchNames() {
			if err := exp.Revert(name); err != nil {
				return result{err: err}
			}
		}
		if err := ir.Verify(p); err != nil {
			return result{err: err}
		}
		return result{text: text, apps: len(exp.Applications()), fired: firingsOf(rep.Fired)}
	}
	var wg sync.WaitGroup
	results := make([][2]result, rounds)
	for i := range rounds {
		wg.Add(2)
		go func() { defer wg.Done(); results[i][0] = run(nil) }()
		go func() { defer wg.Done(); results[i][1] = run([]string{"relu-as-neg-mul", "skip-cast-classifier"}) }()
	}
	wg.Wait()
	for i, r := range results {
		all, onlyDetach := r[0], r[1]
		require.NoError(t, all.err, "round %d", i)
		require.NoError(t, onlyDetach.err, "round %d", i)
		assert.Equal(t, 3, all.apps)
		assert.Equal(t, 1, onlyDetach.apps)
		assert.Contains(t, all.text, "aten.neg.default")
		assert.NotContains(t, onlyDetach.text, "aten.neg.default")
		assert.NotContains(t, onlyDetach.text, "aten.detach.default")
		assert.Equal(t, []string{"apply-torch-patches/drop-detach@%d (aten.detach.default)"}, onlyDetach.fired, fmt.Sprint(i))
		assert.Equal(t, results[0][0].text, all.text, "deterministic under the same shuffle seed")
	}
}
