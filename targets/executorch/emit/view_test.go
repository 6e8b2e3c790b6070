package emit_test

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/plan"
)

// An et_view is emitted only when its out shares its base's planned
// storage: a plan that gives the view other bytes (stale, or computed
// without the alias) is refused, naming both values.
func TestEmitViewChecksSharedStorage(t *testing.T) {
	p, err := ir.Parse([]byte(`graph forward(%x: f32[4, 4]) {
  %relu: f32[4, 4] = aten.relu.default(%x)
  %v: f32[16] = aten.view.default(%relu, [16])
  %n: f32[16] = aten.neg.default(%v)
  return %n
}`), "view.fxir")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.portable")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := emit.Program(p, emit.Options{}); err != nil {
		t.Fatalf("emit: %v", err)
	}
	var view *ir.Node
	for _, n := range p.Main.Nodes() {
		if n.Op.String() == "executorch_prim.et_view.default" {
			view = n
		}
	}
	if view == nil {
		t.Fatalf("no et_view after lowering:\n%s", ir.Print(p))
	}
	base, _ := view.Graph.Nodes()[0].Meta.Get(plan.MetaMem)
	mem, _ := view.Meta.Get(plan.MetaMem)
	if mem != base || mem == "" {
		t.Fatalf("view planned at %q, its base at %q", mem, base)
	}
	other := "1:0:64"
	if mem == other {
		other = "1:64:64"
	}
	view.Meta.Set(plan.MetaMem, other)
	_, err = emit.Program(p, emit.Options{})
	if err == nil || !strings.Contains(err.Error(), "must share storage") {
		t.Fatalf("emit with a view off its base's storage: %v", err)
	}
}
