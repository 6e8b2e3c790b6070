package pm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// samePass compares passes and catalogs by identity (they hold funcs).
var samePass = cmp.Options{
	cmp.Comparer(func(a, b *pm.Pass) bool { return a == b }),
	cmp.Comparer(func(a, b *pm.Catalog) bool { return a == b }),
}

func roundTrip(t *testing.T, c *pm.Catalog, pl *pm.Pipeline) {
	t.Helper()
	text := pl.String()
	back, err := c.ParsePipeline(text)
	require.NoError(t, err, text)
	if d := cmp.Diff(pl, back, samePass); d != "" {
		t.Errorf("Parse(String(p)) != p for %q (-want +got):\n%s", text, d)
	}
	assert.Equal(t, text, back.String())
}

// pm's own tests link no workaround package: the tables name passes
// nothing registered, and CheckBuiltins says so (the fxport package's tests
// link every target and check the tables in full).
func TestBuiltinPipelinesNeedTheirPasses(t *testing.T) {
	err := pm.CheckBuiltins()
	require.ErrorContains(t, err, `pass "check-capture-steps" of the dynamo pipeline table is not registered`)
}

// Every table row's pass, registered as a stub of the row's stage and
// backends, builds into valid pipelines that print back exactly.
func TestTablesBuildWithStubs(t *testing.T) {
	c := pm.NewCatalog()
	seen := map[string]bool{}
	for _, p := range c.Passes.All() {
		seen[p.Name] = true
	}
	for _, tb := range pm.Tables {
		for _, r := range tb.Rows {
			if seen[r.Pass] {
				continue
			}
			seen[r.Pass] = true
			p := testPass(r.Pass, r.Stage, noop)
			p.Backends = r.Backends
			if tb.Target == pm.TargetExecuTorch && len(p.Backends) == 0 && pm.StageIndex(pm.TargetONNX, r.Stage) < 0 && pm.StageIndex(pm.TargetDynamo, r.Stage) < 0 {
				p.Backends = []string{pm.BackendExecuTorch}
			}
			mustAdd(t, c.AddPass(p))
		}
	}
	pls, err := c.BuildAll()
	require.NoError(t, err)
	require.Len(t, pls, 2+len(pm.ExportBackends(pm.TargetExecuTorch)))
	for _, pl := range pls {
		require.NoError(t, pl.Validate())
		roundTrip(t, c, pl)
	}
}

// withEverything is a catalog with entries of every kind and generic passes
// in several stages, so Build has something to assemble.
func withEverything(t *testing.T) *pm.Catalog {
	c := allKinds(t)
	addPatch(t, c, detachPatch("drop-detach-et", pm.BackendExecuTorch))
	addPatch(t, c, &pm.Patch{Name: "cuda-only", Doc: "d", Backend: "executorch.cuda", Stage: pm.StageTorchPatches,
		Targets: []string{"torch.topk"}, Rewrite: func(*ir.Node, *ir.Builder, *pm.Ctx) ([]*ir.Value, error) { return nil, nil }})
	mustAdd(t, c.AddNodeFix(fix("fix-relu-et", pm.BackendExecuTorch, ir.OpAtenRelu)))
	addProgramFix(t, c, &pm.ProgramFix{ID: "ET-PF01", Name: "widen-ranges", Doc: "d", Backend: pm.BackendExecuTorch,
		Stage: pm.StageFXProgramFixes, Fix: func(*ir.Program, *pm.Ctx) (bool, error) { return false, nil }})
	mustAdd(t, c.AddBackendPrepare(&pm.BackendPrepare{ID: "ET-B05", Name: "make-contiguous", Doc: "d", Backend: pm.BackendExecuTorch,
		Prepare: func(*ir.Program, *pm.Ctx) error { return nil }}))
	decompose := testPass("decompose", pm.StageONNXPatches, noop)
	decompose.Backends = []string{pm.BackendONNX}
	decompose.Requires = []pm.Requirement{{Before: "onnx-node-fixes-after-decompose", Why: "decomposition re-creates fixed patterns"}}
	addPass(t, c, decompose)
	emit := testPass("emit-onnx", pm.StageEmit, noop)
	emit.Backends = []string{pm.BackendONNX}
	emit.Kind = pm.KindLowering
	emit.Options = []pm.OptionSpec{pm.BoolOption("external-data", true, "write weights beside the model"), {Name: "path", Doc: "output"}}
	addPass(t, c, emit)
	return c
}

func TestBuild(t *testing.T) {
	c := withEverything(t)
	want := map[string]string{
		"dynamo": "dynamo: dynamo.state-cleanup(drop-unused-weights)",
		"onnx": "onnx: dynamo.state-cleanup(drop-unused-weights), onnx.torch-patches(apply-torch-patches), " +
			"onnx.fx-node-fixes(onnx-node-fixes), onnx.onnx-patches(decompose, onnx-node-fixes-after-decompose), onnx.emit(emit-onnx)",
		"executorch.xnnpack": "executorch.xnnpack: executorch.backend-prepare(backend-prepare), dynamo.state-cleanup(drop-unused-weights), " +
			"executorch.torch-patches(apply-torch-patches), executorch.fx-program-fixes(widen-ranges), executorch.fx-node-fixes(executorch-node-fixes)",
	}
	pls, err := c.BuildAll()
	require.NoError(t, err)
	for _, pl := range pls {
		roundTrip(t, c, pl)
		key := strings.SplitN(pl.String(), ":", 2)[0]
		if w, ok := want[key]; ok {
			assert.Equal(t, w, pl.String())
		}
	}
	// Options round-trip too, quoted when they must be.
	pl, err := c.ParsePipeline(`onnx: onnx.emit(emit-onnx{path="out dir/m.onnx" external-data=false})`)
	require.NoError(t, err)
	assert.Equal(t, `onnx: onnx.emit(emit-onnx{external-data=false path="out dir/m.onnx"})`, pl.String())
	roundTrip(t, c, pl)
	pl, err = c.ParsePipeline(" onnx :onnx.fx-node-fixes( onnx-node-fixes ,dce{} ) , onnx.emit ( ) ")
	require.NoError(t, err)
	assert.Equal(t, "onnx: onnx.fx-node-fixes(onnx-node-fixes, dce), onnx.emit()", pl.String())
	roundTrip(t, c, pl)
	// A local stage name is accepted and printed qualified.
	pl, err = c.ParsePipeline("dynamo: state-cleanup(dce, dce)")
	require.NoError(t, err)
	assert.Equal(t, "dynamo: dynamo.state-cleanup(dce, dce)", pl.String())
	// The empty pipeline.
	pl, err = c.ParsePipeline("executorch.cuda:")
	require.NoError(t, err)
	assert.Equal(t, "executorch.cuda:", pl.String())
	roundTrip(t, c, pl)
}

func TestParseSyntaxErrors(t *testing.T) {
	c := withEverything(t)
	for text, want := range map[string]string{
		"":                                          "offset 0: expected pipeline target",
		"tflite: x()":                               `offset 0: unknown pipeline target "tflite"`,
		"executorch: x()":                           "names its backend",
		"executorch.tpu:":                           `target executorch has no backend "executorch.tpu"`,
		"onnx onnx.emit()":                          `expected ':'`,
		"onnx: onnx.emit(":                          "expected pass name, found end of text",
		"onnx: onnx.emit(emit-onnx":                 `expected ','`,
		"onnx: onnx.emit() onnx.emit()":             `expected ','`,
		"onnx: onnx.emit(emit-onnx{path})":          `expected '='`,
		"onnx: onnx.emit(emit-onnx{path=\"x})":      "unterminated string",
		"onnx: onnx.emit(emit-onnx{path=a path=b})": `option "path" given twice`,
		"onnx: onnx.emit(Emit)":                     "expected pass name",
	} {
		_, err := c.ParsePipeline(text)
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want, text)
		var se *pm.SyntaxError
		assert.True(t, errors.As(err, &se), "%q: %T", text, err)
	}
}

// problems parses text and returns the validation problems.
func problems(t *testing.T, c *pm.Catalog, text string) []string {
	t.Helper()
	_, err := c.ParsePipeline(text)
	require.Error(t, err, text)
	var pe *pm.PipelineError
	require.True(t, errors.As(err, &pe), "%T: %v", err, err)
	var out []string
	for _, p := range pe.Problems {
		out = append(out, p.Error())
	}
	return out
}

func orderingCatalog(t *testing.T) *pm.Catalog {
	c := withEverything(t)
	add := func(name, stage string, reqs ...pm.Requirement) {
		p := testPass(name, stage, noop)
		p.Requires = reqs
		addPass(t, c, p)
	}
	add("first", pm.StageStateCleanup)
	add("second", pm.StageStateCleanup, pm.Requirement{After: "first", Why: "second reads what first writes"})
	add("cyc-a", pm.StageStateCleanup, pm.Requirement{After: "cyc-c", Why: "a after c"})
	add("cyc-b", pm.StageStateCleanup, pm.Requirement{After: "cyc-a", Why: "b after a"})
	add("cyc-c", pm.StageStateCleanup, pm.Requirement{Before: "cyc-a", Why: "c before a"}, pm.Requirement{After: "cyc-b", Why: "c after b"})
	add("dangling", pm.StageStateCleanup, pm.Requirement{After: "no-such-pass", Why: "w"})
	return c
}

func TestValidateOrderingErrors(t *testing.T) {
	c := orderingCatalog(t)
	for text, want := range map[string][]string{
		"dynamo: dynamo.state-cleanup(first, nosuch)": {`unknown pass "nosuch" in stage dynamo.state-cleanup`},
		"dynamo: dynamo.state-cleanup(first, first)":  {`pass "first" appears 2 times and is not Repeatable`},
		"dynamo: dynamo.state-cleanup(second)":        {`pass "second" must run after "first" (second reads what first writes), but "first" is not in the pipeline`},
		"dynamo: dynamo.state-cleanup(second, first)": {`pass "second" must run after "first" (second reads what first writes), but runs before it`},
		"onnx: onnx.onnx-patches(onnx-node-fixes-after-decompose, decompose)": {
			`pass "decompose" must run before "onnx-node-fixes-after-decompose" (decomposition re-creates fixed patterns), but runs after it`},
		"dynamo: dynamo.state-cleanup(cyc-a, cyc-b, cyc-c)": {"requirement cycle among passes cyc-a, cyc-b, cyc-c"},
		"dynamo: dynamo.state-cleanup(dangling)":            {`pass "dangling": requirement names unknown pass "no-such-pass"`},
		"onnx: onnx.fx-node-fixes(onnx-node-fixes), onnx.torch-patches(apply-torch-patches)": {
			`stage order: pass "apply-torch-patches" (stage onnx.torch-patches) comes after pass "onnx-node-fixes" (stage onnx.fx-node-fixes)`},
		"onnx: onnx.emit(emit-onnx), onnx.fx-node-fixes(), onnx.torch-patches(dce)": {
			`stage order: pass "(none)" (stage onnx.fx-node-fixes) comes after pass "emit-onnx" (stage onnx.emit)`,
			`stage order: pass "dce" (stage onnx.torch-patches) comes after pass "emit-onnx" (stage onnx.emit)`},
		"onnx: onnx.fx-node-fixes(apply-torch-patches)": {`pass "apply-torch-patches" belongs to stage torch-patches, not onnx.fx-node-fixes`},
		"onnx: onnx.lowering(dce)":                      {`stage "onnx.lowering" is not a stage of target onnx`},
		"onnx: executorch.fx-node-fixes(dce)":           {`stage "executorch.fx-node-fixes" is not a stage of target onnx`},
		"onnx: onnx.fx-node-fixes(executorch-node-fixes)": {
			`pass "executorch-node-fixes" runs for backends executorch, not onnx`},
		"onnx: onnx.emit(emit-onnx{external-data=yes})": {`pass "emit-onnx": option external-data: want true or false, got "yes"`},
		"onnx: onnx.emit(emit-onnx{colour=red})":        {`pass "emit-onnx" has no option "colour"`},
	} {
		assert.Equal(t, want, problems(t, c, text), text)
	}
	// Problems accumulate, each naming its passes.
	got := problems(t, c, "dynamo: dynamo.state-cleanup(second, nosuch, second)")
	assert.Equal(t, []string{
		`unknown pass "nosuch" in stage dynamo.state-cleanup`,
		`pass "second" appears 2 times and is not Repeatable`,
		`pass "second" must run after "first" (second reads what first writes), but "first" is not in the pipeline`,
		`pass "second" must run after "first" (second reads what first writes), but "first" is not in the pipeline`,
	}, got)
	// The cycle is a typed error.
	_, err := c.ParsePipeline("dynamo: dynamo.state-cleanup(cyc-a, cyc-b, cyc-c)")
	var ce *pm.CycleError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, []string{"cyc-a", "cyc-b", "cyc-c"}, ce.Members)
	// And the catalog check finds both the cycle and the dangling edge.
	err = c.Check()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `pass "dangling": requirement names unknown pass "no-such-pass"`)
	assert.Contains(t, err.Error(), "requirement cycle among passes cyc-a, cyc-b, cyc-c")
	// A valid order passes.
	_, err = c.ParsePipeline("dynamo: dynamo.state-cleanup(first, second)")
	assert.NoError(t, err)
}

func TestBuildRejectsBrokenRequirement(t *testing.T) {
	c := withEverything(t)
	p := testPass("needs-emit", pm.StageStateCleanup, noop)
	p.Requires = []pm.Requirement{{After: "emit-onnx", Why: "reads the emitted model"}}
	addPass(t, c, p)
	_, err := c.Build(pm.TargetONNX, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `pm: build onnx: pm: invalid pipeline: pass "needs-emit" must run after "emit-onnx" (reads the emitted model), but runs before it`)
	_, err = c.Build(pm.TargetDynamo, "")
	require.ErrorContains(t, err, `"emit-onnx" is not in the pipeline`)
	_, err = c.Build("tflite", "")
	require.ErrorContains(t, err, `unknown target "tflite"`)
	_, err = c.Build(pm.TargetONNX, "executorch.cuda")
	require.ErrorContains(t, err, `target onnx has no backend "executorch.cuda"`)
}

func TestPipelineOnlyAndInstances(t *testing.T) {
	c := withEverything(t)
	pl, err := c.Build(pm.TargetONNX, "")
	require.NoError(t, err)
	only := pl.Only("onnx-node-fixes", "emit-onnx")
	assert.Equal(t, "onnx: onnx.fx-node-fixes(onnx-node-fixes), onnx.emit(emit-onnx)", only.String())
	require.NoError(t, only.Validate())
	var names []string
	for _, in := range pl.Instances() {
		names = append(names, in.Stage+"/"+in.Name)
	}
	assert.Equal(t, pl.Len(), len(names))
	assert.Equal(t, "dynamo.state-cleanup/drop-unused-weights", names[0])
}
