package pm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

func TestResolveTarget(t *testing.T) {
	for _, tc := range []struct {
		spec string
		kind pm.TargetKind
		ops  []string
	}{
		{"aten::where.self", pm.TargetOp, []string{"aten.where.self"}},
		{"aten.where.self", pm.TargetOp, []string{"aten.where.self"}},
		{"torch.ops.aten.add.Tensor", pm.TargetOp, []string{"aten.add.Tensor"}},
		{"aten::relu", pm.TargetOp, []string{"aten.relu.default"}},
		{"torch.where", pm.TargetAPI, nil},
		{"torch.Tensor.where", pm.TargetAPI, nil},
		{"torch.Tensor.detach", pm.TargetAPI, []string{"aten.detach.default"}},
		{"transformers.models.nllb_moe.modeling_nllb_moe.NllbMoeTop2Router._cast_classifier", pm.TargetMethod, nil},
	} {
		r, err := pm.ResolveTarget(tc.spec)
		require.NoError(t, err, tc.spec)
		assert.Equal(t, tc.kind, r.Kind, tc.spec)
		if tc.ops != nil {
			var got []string
			for _, o := range r.Ops {
				got = append(got, o.String())
			}
			assert.Equal(t, tc.ops, got, tc.spec)
		}
	}
	r, err := pm.ResolveTarget("torch.where")
	require.NoError(t, err)
	assert.Contains(t, r.Ops, op(t, "aten.where.self"))

	m, err := pm.ResolveTarget("transformers.models.nllb_moe.modeling_nllb_moe.NllbMoeTop2Router._cast_classifier")
	require.NoError(t, err)
	assert.Equal(t, "transformers.models.nllb_moe.modeling_nllb_moe", m.Module)
	assert.Equal(t, "NllbMoeTop2Router", m.Class)
	assert.Equal(t, "_cast_classifier", m.Method)
}

func TestResolveTargetErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"":                                     "empty target",
		"aten::nosuch.default":                 `unknown op "aten::nosuch.default"`,
		"aten.nosuch.default":                  `unknown op "aten.nosuch.default"`,
		"aten.where":                           `unknown op "aten.where"`, // no default overload
		"torch.ops.aten.nosuch.default":        "unknown op",
		"torch.nosuch":                         `unknown torch API path "torch.nosuch"`,
		"torch.Tensor.nosuch":                  "unknown torch API path",
		"transformers.models.x.modeling_x.Cls": "no method after class Cls",
		"transformers.models.x.helper":         "no class segment",
		"Router.forward":                       "no module before class Router",
		"transformers..Router.forward":         "is not an identifier",
		"transformers.models.x-y.Router.f":     "is not an identifier",
	} {
		_, err := pm.ResolveTarget(spec)
		require.Error(t, err, spec)
		assert.Contains(t, err.Error(), want, spec)
	}
}

// Every API path lists overloads (op constants: an unknown one does not
// compile).
func TestAPITableOverloads(t *testing.T) {
	for _, path := range pm.APIPaths() {
		if len(pm.APIOverloads(path)) == 0 {
			t.Errorf("%s lists no overloads", path)
		}
	}
	// The catalog's patches name these APIs; each must be in the table.
	for _, api := range []string{"where", "unsqueeze", "full", "split", "chunk", "topk", "detach", "bernoulli",
		"argsort", "bucketize", "searchsorted", "cummax", "cummin", "reshape", "roll", "randperm", "histc", "exp"} {
		assert.NotEmpty(t, pm.APIOverloads("torch."+api), api)
	}
	for _, api := range []string{"scaled_dot_product_attention", "avg_pool2d", "dropout", "pad", "conv3d",
		"adaptive_avg_pool2d", "one_hot", "rms_norm"} {
		assert.NotEmpty(t, pm.APIOverloads("torch.nn.functional."+api), api)
	}
	for _, m := range []string{"expand", "view", "masked_scatter"} {
		assert.NotEmpty(t, pm.APIOverloads("torch.Tensor."+m), m)
	}
	assert.NotEmpty(t, pm.APIOverloads("torch.fft.irfft"))
}

func TestUnresolvedPatchTargetRejected(t *testing.T) {
	for target, want := range map[string]string{
		"aten::nosuch.default":                 "unknown op",
		"torch.nosuch":                         "unknown torch API path",
		"transformers.models.x.modeling_x.Cls": "malformed method path",
	} {
		p := reluPatch("bad-target", pm.BackendONNX)
		p.Targets = []string{"aten::relu", target}
		err := pm.ValidatePatch(p)
		require.Error(t, err, target)
		assert.Contains(t, err.Error(), `patch "bad-target"`)
		assert.Contains(t, err.Error(), `target "`+target+`"`)
		assert.Contains(t, err.Error(), want)
		// Registration fails the same way and leaves no trace.
		c := testCatalog()
		require.Error(t, c.AddPatch(p))
		assert.Zero(t, c.Patches.Len())
		require.NoError(t, c.AddPatch(reluPatch("bad-target", pm.BackendONNX)), "the name stays free")
	}
}

func TestRegisterPatchPanicsOnBadTarget(t *testing.T) {
	p := reluPatch("never-registered", pm.BackendONNX)
	p.Targets = []string{"torch.nosuch"}
	assert.PanicsWithValue(t,
		`pm: patch "never-registered": target "torch.nosuch": unknown torch API path "torch.nosuch" (not in pm's API table)`,
		func() { pm.RegisterPatch(p) })
	_, ok := pm.Default.Patches.Lookup("never-registered")
	assert.False(t, ok)
}

func TestPatchDeclarationErrors(t *testing.T) {
	mod := func(f func(p *pm.Patch)) *pm.Patch {
		p := reluPatch("p", pm.BackendONNX)
		f(p)
		return p
	}
	for want, p := range map[string]*pm.Patch{
		"must be kebab-case":       mod(func(p *pm.Patch) { p.Name = "Bad_Name" }),
		"malformed catalog ID":     mod(func(p *pm.Patch) { p.ID = "onnx-p1" }),
		"empty Doc":                mod(func(p *pm.Patch) { p.Doc = "" }),
		"nil Rewrite":              mod(func(p *pm.Patch) { p.Rewrite = nil }),
		`unknown backend "tflite"`: mod(func(p *pm.Patch) { p.Backend = "tflite" }),
		`stage "onnx-patches" is not a stage of target executorch`: mod(func(p *pm.Patch) { p.Backend = "executorch"; p.Stage = pm.StageONNXPatches }),
		"stage onnx.fx-node-fixes does not hold patches":           mod(func(p *pm.Patch) { p.Stage = pm.StageFXNodeFixes }),
		"no targets": mod(func(p *pm.Patch) { p.Targets = nil }),
	} {
		err := pm.ValidatePatch(p)
		require.Error(t, err, want)
		assert.Contains(t, err.Error(), want)
	}
	// A dynamo ("all") patch must sit in a stage every target has.
	p := reluPatch("p", pm.BackendAll)
	err := pm.ValidatePatch(p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `stage "torch-patches" is not a stage of target dynamo`)
	p.Stage = pm.StageModelPatches
	assert.NoError(t, pm.ValidatePatch(p))
}

func TestNameClashAcrossRegistries(t *testing.T) {
	c := testCatalog()
	require.NoError(t, c.AddPatch(reluPatch("shared-name", pm.BackendONNX)))
	err := c.AddNodeFix(&pm.NodeFix{Name: "shared-name", Doc: "x", Backend: pm.BackendONNX,
		Targets: []ir.Op{ir.OpAtenNeg}, Fix: func(*ir.Node, *pm.Ctx) (bool, error) { return false, nil }})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `node-fix "shared-name": name already used by a patch`)
	err = c.AddPass(testPass("dce", "", noop))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `name already used by a pass`)
}

func fix(name, backend string, targets ...ir.Op) *pm.NodeFix {
	return &pm.NodeFix{Name: name, Doc: "fix " + name, Backend: backend, Targets: targets,
		Fix: func(*ir.Node, *pm.Ctx) (bool, error) { return false, nil }}
}

func TestOverlappingNodeFixTargetsRejected(t *testing.T) {
	c := testCatalog()
	require.NoError(t, c.AddNodeFix(fix("fix-a", pm.BackendONNX, ir.OpAtenDetach_, ir.OpAtenRelu)))
	err := c.AddNodeFix(fix("fix-b", pm.BackendONNX, ir.OpAtenNeg, ir.OpAtenRelu))
	require.Error(t, err)
	assert.Equal(t, `node-fix "fix-b": target aten.relu.default overlaps node-fix "fix-a" of backend onnx`, err.Error())
	// Another backend may target the same op; so may a disjoint fix.
	require.NoError(t, c.AddNodeFix(fix("fix-c", pm.BackendExecuTorch, ir.OpAtenRelu)))
	require.NoError(t, c.AddNodeFix(fix("fix-d", pm.BackendONNX, ir.OpAtenNeg)))
	// An invalid op (a zero Op) and an empty target list are rejected.
	err = pm.ValidateNodeFix(fix("fix-e", pm.BackendONNX, ir.OpInvalid))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `node-fix "fix-e": target 0 is not an op of the table`)
	require.ErrorContains(t, pm.ValidateNodeFix(fix("fix-g", pm.BackendONNX)), `node-fix "fix-g": no targets`)
	// Dynamo has no node-fix stage, but "all" fixes run in ONNX and ExecuTorch.
	assert.NoError(t, pm.ValidateNodeFix(fix("fix-f", pm.BackendAll, ir.OpAtenNeg)))
	assert.Panics(t, func() { pm.RegisterNodeFix(fix("Bad", pm.BackendONNX, ir.OpAtenNeg)) })
}

type fakeTranslator struct{}

func (fakeTranslator) Translate(*ir.Node, any) error { return nil }

type fakeRewriter struct{}

func (fakeRewriter) Rewrite(any) (bool, error) { return false, nil }

// allKinds fills a catalog with one entry of every kind.
func allKinds(t *testing.T) *pm.Catalog {
	c := testCatalog()
	mustAdd(t, c.AddCaptureStep(&pm.CaptureStep{ID: "DYN-P03", Name: "skip-classifier-cast", Backend: pm.BackendAll,
		Stage: pm.StageModelPatches, Target: "transformers.models.nllb_moe.modeling_nllb_moe.NllbMoeTop2Router._cast_classifier",
		Reason: "untraceable dtype cast of the classifier weights\n\nCapture replaces it with a no-op."}))
	mustAdd(t, c.AddBackendPrepare(&pm.BackendPrepare{ID: "ET-B02", Name: "xnnpack-partitioner", Doc: "select the XNNPACK partitioner",
		Backend: "executorch.xnnpack", Partitioners: []string{"XnnpackPartitioner"}}))
	addPatch(t, c, reluPatch("relu-as-neg-mul", pm.BackendONNX))
	addProgramFix(t, c, &pm.ProgramFix{ID: "DYN-S10", Name: "drop-unused-weights", Doc: "erase unused weight placeholders",
		Backend: pm.BackendAll, Stage: pm.StageStateCleanup, Fix: func(*ir.Program, *pm.Ctx) (bool, error) { return false, nil }})
	mustAdd(t, c.AddNodeFix(&pm.NodeFix{ID: "ONNX-FX03", Name: "fix-detach-inplace", Doc: "detach_ → detach",
		Backend: pm.BackendONNX, Targets: []ir.Op{ir.OpAtenDetach_}, Fix: func(*ir.Node, *pm.Ctx) (bool, error) { return false, nil }}))
	mustAdd(t, c.AddTranslation(&pm.Translation{ID: "ONNX-TR05", Name: "translate-mul", Doc: "mul with a cast",
		Targets: []ir.Op{ir.OpAtenMulTensor}, Impl: fakeTranslator{}}))
	mustAdd(t, c.AddIRFix(&pm.IRFix{ID: "ONNX-IR01", Name: "topk-sorted", Doc: "TopK gets sorted=1",
		Targets: []string{"TopK"}, Impl: fakeRewriter{}}))
	return c
}

func TestListing(t *testing.T) {
	c := allKinds(t)
	var got []string
	for _, e := range c.List() {
		if e.Kind == pm.EntryPass {
			continue
		}
		got = append(got, e.Kind.String()+" "+e.PassKind.String()+" "+e.Backend+" "+e.Stage+" "+e.ID+" "+e.Name+" | "+e.Title+" | "+joinTargets(e.Targets))
	}
	assert.Equal(t, []string{
		"capture-step Kind(0) all model-patches DYN-P03 skip-classifier-cast | untraceable dtype cast of the classifier weights | transformers.models.nllb_moe.modeling_nllb_moe.NllbMoeTop2Router._cast_classifier",
		"backend-prepare transform executorch.xnnpack backend-prepare ET-B02 xnnpack-partitioner | select the XNNPACK partitioner | XnnpackPartitioner",
		"patch patch onnx torch-patches ONNX-P99 relu-as-neg-mul | test patch on relu | aten::relu",
		"program-fix fix all state-cleanup DYN-S10 drop-unused-weights | erase unused weight placeholders | ",
		"node-fix fix onnx fx-node-fixes ONNX-FX03 fix-detach-inplace | detach_ → detach | aten.detach_.default",
		"onnx-translation lowering onnx onnx-translations ONNX-TR05 translate-mul | mul with a cast | aten.mul.Tensor",
		"onnx-ir-fix fix onnx onnx-ir-fixes ONNX-IR01 topk-sorted | TopK gets sorted=1 | TopK",
	}, got)
	// Passes are listed too, the program fix's pass only once (as a fix).
	var passes []string
	for _, e := range c.List() {
		if e.Kind == pm.EntryPass {
			passes = append(passes, e.Name)
		}
	}
	// In the order of their first table row, then the passes no table names.
	assert.Equal(t, []string{"apply-model-patches", "apply-torch-patches", "onnx-node-fixes", "apply-onnx-patches",
		"onnx-node-fixes-after-decompose", "backend-prepare", "apply-executorch-patches", "executorch-node-fixes", "dce"}, passes)
	// Lookups.
	_, ok := c.Passes.Lookup("drop-unused-weights")
	assert.True(t, ok, "a program fix is runnable as a pass")
	assert.Len(t, c.NodeFixes.ByID("ONNX-FX03"), 1)
	tr, _ := c.Translations.Lookup("translate-mul")
	assert.Equal(t, []ir.Op{op(t, "aten.mul.Tensor")}, tr.Ops())
}

func joinTargets(ts []string) string {
	s := ""
	for i, x := range ts {
		if i > 0 {
			s += ","
		}
		s += x
	}
	return s
}

func TestOtherRegistriesValidate(t *testing.T) {
	c := testCatalog()
	err := c.AddTranslation(&pm.Translation{Name: "tr", Doc: "d", Targets: []ir.Op{ir.OpInvalid}, Impl: fakeTranslator{}})
	require.ErrorContains(t, err, `onnx-translation "tr": target 0 is not an op of the table`)
	mustAdd(t, c.AddTranslation(&pm.Translation{Name: "tr1", Doc: "d", Targets: []ir.Op{ir.OpAtenMm}, Impl: fakeTranslator{}}))
	err = c.AddTranslation(&pm.Translation{Name: "tr2", Doc: "d", Targets: []ir.Op{ir.OpAtenMm}, Impl: fakeTranslator{}})
	require.ErrorContains(t, err, `target aten.mm.default is already translated by "tr1"`)
	require.ErrorContains(t, pm.ValidateTranslation(&pm.Translation{Name: "tr", Doc: "d", Targets: []ir.Op{ir.OpAtenMm}}), "nil Impl")

	require.ErrorContains(t, pm.ValidateIRFix(&pm.IRFix{Name: "f", Doc: "d", Targets: []string{"topk"}, Impl: fakeRewriter{}}), `target "topk" is not an ONNX op type`)
	require.NoError(t, pm.ValidateIRFix(&pm.IRFix{Name: "f", Doc: "d", Targets: []string{"com.microsoft.Attention"}, Impl: fakeRewriter{}}))

	require.ErrorContains(t, pm.ValidateBackendPrepare(&pm.BackendPrepare{Name: "b", Doc: "d", Backend: "onnx", Partitioners: []string{"x"}}), "not an ExecuTorch backend")
	require.ErrorContains(t, pm.ValidateBackendPrepare(&pm.BackendPrepare{Name: "b", Doc: "d", Backend: "executorch.cuda"}), "neither Prepare nor Partitioners")

	require.ErrorContains(t, pm.ValidateCaptureStep(&pm.CaptureStep{Name: "s", Backend: "all", Stage: "signature", Target: "a.b", Reason: "r"}), "need a catalog ID")
	require.ErrorContains(t, pm.ValidateCaptureStep(&pm.CaptureStep{ID: "DYN-S08", Name: "s", Backend: "all", Stage: "emit", Target: "a.b", Reason: "r"}), `stage "emit" is not a stage of target dynamo`)
	require.ErrorContains(t, pm.ValidateCaptureStep(&pm.CaptureStep{ID: "DYN-S08", Name: "s", Backend: "all", Stage: "signature", Target: "a..b", Reason: "r"}), "malformed target path")

	require.ErrorContains(t, pm.ValidateProgramFix(&pm.ProgramFix{Name: "pf", Doc: "d", Backend: "onnx", Stage: pm.StageFXProgramFixes,
		Fix: func(*ir.Program, *pm.Ctx) (bool, error) { return false, nil }}), `stage "fx-program-fixes" is not a stage of target onnx`)
	require.ErrorContains(t, pm.ValidateProgramFix(&pm.ProgramFix{Name: "pf", Doc: "d", Backend: "executorch", Stage: pm.StageFXProgramFixes}), "nil Fix")
}

func TestPassDeclarationErrors(t *testing.T) {
	base := func() *pm.Pass { return testPass("p", pm.StageStateCleanup, noop) }
	for want, f := range map[string]func(p *pm.Pass){
		"kebab-case":                      func(p *pm.Pass) { p.Name = "p_1" },
		"invalid Kind":                    func(p *pm.Pass) { p.Kind = 0 },
		"nil Run":                         func(p *pm.Pass) { p.Run = nil },
		`unknown backend "x"`:             func(p *pm.Pass) { p.Backends = []string{"x"} },
		"exactly one of After and Before": func(p *pm.Pass) { p.Requires = []pm.Requirement{{After: "a", Before: "b", Why: "w"}} },
		"names the pass itself":           func(p *pm.Pass) { p.Requires = []pm.Requirement{{After: "p", Why: "w"}} },
		"has no Why":                      func(p *pm.Pass) { p.Requires = []pm.Requirement{{After: "a"}} },
		"bad or duplicate option name":    func(p *pm.Pass) { p.Options = []pm.OptionSpec{{Name: "o"}, {Name: "o"}} },
		"default: want true or false": func(p *pm.Pass) {
			p.Options = []pm.OptionSpec{pm.BoolOption("o", false, "")}
			p.Options[0].Default = "maybe"
		},
		`stage "lowering" is not a stage of target dynamo, onnx`: func(p *pm.Pass) { p.Stage = pm.StageLowering },
	} {
		p := base()
		f(p)
		err := pm.ValidatePass(p)
		require.Error(t, err, want)
		assert.Contains(t, err.Error(), want)
	}
	assert.NoError(t, pm.ValidatePass(base()))
	assert.Equal(t, "first paragraph on one line", pm.Title("first paragraph\non one line\n\nmore"))
}

func TestBuiltinDriversRun(t *testing.T) {
	c := testCatalog()
	var order []string
	mustAdd(t, c.AddBackendPrepare(&pm.BackendPrepare{ID: "ET-B05", Name: "make-contiguous", Doc: "d", Backend: pm.BackendExecuTorch,
		Prepare: func(p *ir.Program, c *pm.Ctx) error {
			order = append(order, "prepare:"+c.Export().Backend())
			c.MarkChanged()
			return nil
		}}))
	mustAdd(t, c.AddBackendPrepare(&pm.BackendPrepare{ID: "ET-B02", Name: "xnnpack-partitioner", Doc: "d", Backend: "executorch.xnnpack",
		Partitioners: []string{"XnnpackPartitioner"}}))
	mustAdd(t, c.AddBackendPrepare(&pm.BackendPrepare{ID: "ET-B04", Name: "cuda-partitioner", Doc: "d", Backend: "executorch.cuda",
		Partitioners: []string{"CudaPartitioner"}, Prepare: func(*ir.Program, *pm.Ctx) error { order = append(order, "cuda"); return nil }}))
	addProgramFix(t, c, &pm.ProgramFix{ID: "ET-PF01", Name: "widen-ranges", Doc: "d", Backend: pm.BackendExecuTorch,
		Stage: pm.StageFXProgramFixes, Fix: func(p *ir.Program, c *pm.Ctx) (bool, error) {
			order = append(order, "fix:"+c.Pass().Name)
			return true, nil
		}})
	addProgramFix(t, c, &pm.ProgramFix{ID: "ET-PF02", Name: "fill-placeholders", Doc: "d", Backend: pm.BackendExecuTorch,
		Stage: pm.StageFXProgramFixes, Requires: []pm.Requirement{{After: "widen-ranges", Why: "test"}},
		Fix: func(p *ir.Program, c *pm.Ctx) (bool, error) { order = append(order, "fix2"); return false, nil }})

	pl, err := c.Build(pm.TargetExecuTorch, "")
	require.NoError(t, err)
	assert.Equal(t, "executorch.xnnpack: executorch.backend-prepare(backend-prepare), executorch.fx-program-fixes(widen-ranges, fill-placeholders)", pl.String())
	exp, err := pm.NewExport(pm.TargetExecuTorch, "", pm.WithCatalog(c))
	require.NoError(t, err)
	assert.Equal(t, []string{"XnnpackPartitioner"}, exp.Partitioners())
	p := parse(t, progText)
	rep, err := pm.Run(p, pl, exp, pm.Config{VerifyEach: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"prepare:executorch.xnnpack", "fix:widen-ranges", "fix2"}, order)
	assert.Equal(t, []string{"backend-prepare/make-contiguous@", "widen-ranges/widen-ranges@"}, firingsOf(rep.Fired))
	assert.Equal(t, pm.EntryPrepare, rep.Fired[0].Kind)
	assert.Equal(t, pm.EntryProgramFix, rep.Fired[1].Kind)
	assert.Equal(t, "ET-PF01", rep.Fired[1].ID)
	assert.True(t, rep.Passes[0].Changed, "MarkChanged")
	assert.True(t, rep.Passes[1].Changed)
	assert.False(t, rep.Passes[2].Changed)

	// A program fix's requirement is checked like any pass's.
	_, err = c.ParsePipeline("executorch.cuda: executorch.fx-program-fixes(fill-placeholders, widen-ranges)")
	require.ErrorContains(t, err, `pass "fill-placeholders" must run after "widen-ranges" (test), but runs before it`)

	// dce is stage-less and repeatable.
	pl, err = c.ParsePipeline("executorch.cuda: dynamo.state-cleanup(dce), executorch.fx-node-fixes(dce)")
	require.NoError(t, err)
	q := parse(t, `graph forward(%x: f32[4]) {
  %a: f32[4] = aten.neg.default(%x)
  %b: f32[4] = aten.neg.default(%a)
  return %x
}
`)
	rep, err = pm.Run(q, pl, nil, pm.Config{VerifyEach: true})
	require.NoError(t, err)
	assert.Equal(t, int64(2), rep.Passes[0].Stat("removed"))
	assert.True(t, rep.Passes[0].Changed)
	assert.False(t, rep.Passes[1].Changed)
	assert.Equal(t, 0, q.Main.Len())
}

func TestRegisterFunctionsPanic(t *testing.T) {
	assert.Panics(t, func() { pm.RegisterPass(&pm.Pass{Name: "x"}) })
	assert.Panics(t, func() { pm.RegisterProgramFix(&pm.ProgramFix{Name: "x"}) })
	assert.Panics(t, func() { pm.RegisterTranslation(&pm.Translation{Name: "x"}) })
	assert.Panics(t, func() { pm.RegisterIRFix(&pm.IRFix{Name: "x"}) })
	assert.Panics(t, func() { pm.RegisterBackendPrepare(&pm.BackendPrepare{Name: "x"}) })
	assert.Panics(t, func() { pm.RegisterCaptureStep(&pm.CaptureStep{Name: "x"}) })
	assert.Equal(t, pm.EntryPass, pm.Default.Passes.Kind())
}

// Every API path of the table resolves against the op table as it is.
func TestAPIPathsResolve(t *testing.T) {
	for _, path := range pm.APIPaths() {
		r, err := pm.ResolveTarget(path)
		if assert.NoError(t, err, path) {
			assert.Equal(t, pm.TargetAPI, r.Kind)
		}
	}
}
