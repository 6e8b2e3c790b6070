package passes

import (
	"os"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// Each condition of replace-view-copy-with-view keeps its view_copy and
// counts it under its reason; the others become et_view.
func TestReplaceViewCopyWithViewReasons(t *testing.T) {
	src := `input x: user_input
input p_w: parameter "w"
input z: user_input
output user_output
output user_output
output user_output
output user_output
output user_output
weight "w": f32[2, 2] = inline("0000803f000000400000404000008040")
graph forward(%x: f32[4, 4], %p_w: f32[2, 2], %z: f32[1, 2, 2, 2]{0,2,3,1}) {
  %relu: f32[4, 4] = aten.relu.default(%x)
  %ok: f32[16] = aten.view_copy.default(%relu, [16])
  %n: f32[16] = aten.neg.default(%ok)
  %out: f32[2, 8] = aten.view_copy.default(%relu, [2, 8])
  %vw: f32[4] = aten.view_copy.default(%p_w, [4])
  %nw: f32[4] = aten.neg.default(%vw)
  %vz: f32[8] = aten.view_copy.default(%z, [8])
  %nz: f32[8] = aten.neg.default(%vz)
  %e: f32[4, 4] = aten.exp.default(%x)
  %ve: f32[16] = aten.view_copy.default(%e, [16])
  %add_: f32[4, 4] = aten.add_.Scalar(%e, 1)
  %ne: f32[16] = aten.neg.default(%ve)
  return %n, %out, %nw, %nz, %ne
}
`
	p, err := ir.Parse([]byte(src), "views.fxir")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pm.ParsePipeline("executorch.portable: executorch.lowering(replace-view-copy-with-view, to-out-variants)")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true})
	if err != nil {
		t.Fatal(err)
	}
	pr, ok := rep.Pass(etlMemoryViewName)
	if !ok {
		t.Fatal("no report for the pass")
	}
	for stat, want := range map[string]int64{"views-aliased": 1, "kept-output": 1, "kept-constant": 1, "kept-layout": 1, "kept-mutated": 1} {
		if got := pr.Stat(stat); got != want {
			t.Errorf("%s = %d, want %d", stat, got, want)
		}
	}
	if v := p.Main.Value("ok"); v == nil || v.Def.Op != OpETView {
		t.Errorf("%%ok is not an et_view:\n%s", ir.Print(p))
	}
}

// Disabled (exir's remove_view_copy=False), no view_copy becomes an
// et_view; the pass is not required.
func TestReplaceViewCopyWithViewDisable(t *testing.T) {
	src, err := os.ReadFile("../tests/testdata/lowering/et_lower_memory_view.fxir")
	if err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(string(src), "# -----", 2)[0]
	p, err := ir.Parse([]byte(first), "views.fxir")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.portable")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pm.Run(p, pl, nil, pm.Config{Disable: []string{etlMemoryViewName}})
	if err != nil {
		t.Fatal(err)
	}
	if pr, ok := rep.Pass(etlMemoryViewName); !ok || !pr.Disabled {
		t.Errorf("pass not reported as disabled")
	}
	if out := ir.Print(p); strings.Contains(out, "et_view") || !strings.Contains(out, "view_copy.out") {
		t.Errorf("views not kept as copies:\n%s", out)
	}
}

// The default pipelines run the pass where exir does: after the views are
// copies and constants folded, right before to-out-variants (the
// order comes from registration, so this pins it).
func TestReplaceViewCopyWithViewPosition(t *testing.T) {
	for _, backend := range []string{"executorch.portable", "executorch.xnnpack"} {
		pl, err := pm.Build(pm.TargetExecuTorch, backend)
		if err != nil {
			t.Fatal(err)
		}
		text := pl.String()
		want := "fold-constant-views, constant-propagation, scalar-to-tensor, replace-view-copy-with-view, to-out-variants"
		if !strings.Contains(text, want) {
			t.Errorf("%s pipeline lacks %q:\n%s", backend, want, text)
		}
	}
}
