package pm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/ir"
)

func stageNames(t *testing.T, target string) []string {
	t.Helper()
	ss, err := Stages(target)
	require.NoError(t, err)
	var out []string
	for _, s := range ss {
		require.NotEmpty(t, s.Doc, s.Name)
		out = append(out, s.Qualified())
	}
	return out
}

func TestStageTable(t *testing.T) {
	dynamo := []string{"dynamo.signature", "dynamo.model-patches", "dynamo.pytree", "dynamo.dynamic-shapes", "dynamo.state-cleanup"}
	assert.Equal(t, dynamo, stageNames(t, TargetDynamo))
	assert.Equal(t, append(append([]string{}, dynamo...),
		"onnx.torch-patches", "onnx.fx-node-fixes", "onnx.onnx-patches", "onnx.onnx-translations", "onnx.onnx-ir-fixes", "onnx.emit"),
		stageNames(t, TargetONNX))
	assert.Equal(t, append(append([]string{"executorch.backend-prepare"}, dynamo...),
		"executorch.torch-patches", "executorch.executorch-patches", "executorch.fx-program-fixes",
		"executorch.fx-node-fixes", "executorch.lowering", "executorch.emit"),
		stageNames(t, TargetExecuTorch))
	_, err := Stages("tflite")
	assert.EqualError(t, err, `unknown target "tflite" (targets: dynamo, onnx, executorch)`)

	assert.Equal(t, 5, StageIndex(TargetONNX, "torch-patches"))
	assert.Equal(t, 5, StageIndex(TargetONNX, "onnx.torch-patches"))
	assert.Equal(t, -1, StageIndex(TargetONNX, "executorch.torch-patches"))
	assert.Equal(t, -1, StageIndex(TargetDynamo, "emit"))
}

func TestBackends(t *testing.T) {
	for _, tc := range []struct {
		entry, export string
		want          bool
	}{
		{"all", "onnx", true}, {"all", "executorch.cuda", true}, {"all", "all", true},
		{"onnx", "onnx", true}, {"onnx", "executorch.cuda", false}, {"onnx", "all", false},
		{"executorch", "executorch.xnnpack", true}, {"executorch", "executorch.portable", true},
		{"executorch.cuda", "executorch.xnnpack", false}, {"executorch.cuda", "executorch.cuda", true},
		{"executorch", "executorchx", false},
	} {
		assert.Equal(t, tc.want, Applies(tc.entry, tc.export), "%s in %s", tc.entry, tc.export)
	}
	assert.Equal(t, []string{"dynamo", "onnx", "executorch"}, targetsOf("all"))
	assert.Equal(t, []string{"executorch"}, targetsOf("executorch.cuda"))
	assert.Equal(t, []string{"executorch.xnnpack", "executorch.cuda", "executorch.portable", "executorch.openvino", "executorch.mlx"},
		ExportBackends(TargetExecuTorch))
	assert.Equal(t, []string{BackendAll}, stageBackends(StageModelPatches))
	assert.Equal(t, []string{"onnx", "executorch"}, stageBackends(StageTorchPatches))
	for _, tgt := range Targets() {
		for _, b := range ExportBackends(tgt) {
			assert.NotEmpty(t, header(tgt, b))
			gt, gb, err := parseHeader(header(tgt, b))
			require.NoError(t, err)
			assert.Equal(t, [2]string{tgt, b}, [2]string{gt, gb})
		}
	}
}

func TestKinds(t *testing.T) {
	for k := KindPatch; k <= KindLowering; k++ {
		back, ok := ParseKind(k.String())
		assert.True(t, ok)
		assert.Equal(t, k, back)
	}
	assert.Equal(t, "Kind(9)", Kind(9).String())
	assert.False(t, Kind(0).Valid())
	_, ok := ParseKind("optimization")
	assert.False(t, ok)
	assert.Equal(t, "onnx-ir-fix", EntryIRFix.String())
}

func TestMethodMatching(t *testing.T) {
	r, err := ResolveTarget("transformers.models.nllb_moe.modeling_nllb_moe.NllbMoeTop2Router._cast_classifier")
	require.NoError(t, err)
	const cls = "transformers.models.nllb_moe.modeling_nllb_moe.NllbMoeTop2Router"
	meta := func(kv ...string) *ir.Meta {
		var m ir.Meta
		for i := 0; i < len(kv); i += 2 {
			m.Set(kv[i], kv[i+1])
		}
		return &m
	}
	trace := "  File \"modeling_nllb_moe.py\", line 10, in forward\n    x\n  File \"modeling_nllb_moe.py\", line 20, in _cast_classifier\n    y\n"
	for name, tc := range map[string]struct {
		m    *ir.Meta
		want bool
	}{
		"stack trace":         {meta(ir.MetaNNModuleStack, "L__self___router,L['self'].router,"+cls, ir.MetaStackTrace, trace), true},
		"source_fn_stack":     {meta(ir.MetaNNModuleStack, "router,router,"+cls, ir.MetaSourceFnStack, "_cast_classifier,"+cls+"._cast_classifier"), true},
		"2.1 format":          {meta(ir.MetaNNModuleStack, "router:(router,"+cls+")", ir.MetaStackTrace, trace), true},
		"other class":         {meta(ir.MetaNNModuleStack, "router,router,"+cls+"Fast", ir.MetaStackTrace, trace), false},
		"other method":        {meta(ir.MetaNNModuleStack, "router,router,"+cls, ir.MetaStackTrace, "  File \"m.py\", line 2, in _cast_classifier_v2\n"), false},
		"no module stack":     {meta(ir.MetaStackTrace, trace), false},
		"class, no method":    {meta(ir.MetaNNModuleStack, "router,router,"+cls), false},
		"nested module stack": {meta(ir.MetaNNModuleStack, "model,model,x.Model;router,model.router,"+cls, ir.MetaStackTrace, trace), true},
	} {
		assert.Equal(t, tc.want, r.matchesMeta(tc.m), name)
	}
	assert.True(t, containsToken("a,b.C;d", "b.C"))
	assert.False(t, containsToken("a,xb.C;d", "b.C"))
	assert.False(t, containsToken("a,b.CD", "b.C"))
	assert.Equal(t, "method", TargetMethod.String())
}

func TestBuiltinPassesValid(t *testing.T) {
	for _, p := range builtinPasses() {
		require.NoError(t, ValidatePass(p), p.Name)
		assert.True(t, p.driver || p.Name == PassDCE)
	}
	assert.Equal(t, []string{"onnx-node-fixes", "onnx-node-fixes-after-decompose", "executorch-node-fixes"}, nodeFixDrivers(BackendAll))
	assert.Equal(t, []string{"executorch-node-fixes"}, nodeFixDrivers("executorch.cuda"))
	assert.Equal(t, "apply-torch-patches", PatchDriverName("onnx.torch-patches"))
}
