package passes

import (
	"errors"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// A parameter_mutation output stops the whole ExecuTorch pipeline at
// insert-write-back, with an error naming the parameter and the node that
// computes its new value; no copy_ is added.
func TestInsertWriteBackRefusesParameterMutation(t *testing.T) {
	p := mustParse(t, `input p_weight: parameter "weight"
input x: user_input
output parameter_mutation "weight"
output user_output
weight "weight": f32[4] = inline("00000000000000000000000000000000")
graph forward(%p_weight: f32[4], %x: f32[4]) {
  %add: f32[4] = aten.add.Tensor(%p_weight, %x)
  %mul: f32[4] = aten.mul.Tensor(%add, %x)
  return %add, %mul
}`)
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.portable")
	if err != nil {
		t.Fatal(err)
	}
	_, err = pm.Run(p, pl, nil, pm.Config{VerifyEach: true})
	if err == nil {
		t.Fatal("parameter mutation lowered")
	}
	var pe *pm.PassError
	if !errors.As(err, &pe) || pe.Pass != etlWriteBackName {
		t.Errorf("error %v is not insert-write-back's", err)
	}
	for _, want := range []string{`parameter "weight"`, "%add", "register_buffer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if strings.Contains(ir.Print(p), "copy_") {
		t.Errorf("a copy_ was added:\n%s", ir.Print(p))
	}
}

// A user_input_mutation target is the placeholder's name; a user input
// whose signature target differs (a flattened name) is found by that
// target too. The copy_ writes that input, and the pass is idempotent.
func TestInsertWriteBackUserInputByTarget(t *testing.T) {
	p := mustParse(t, `input a: user_input "args.0"
input b: user_input "args.1"
output user_input_mutation "args.1"
output user_output
graph forward(%a: f32[3], %b: f32[3]) {
  %neg: f32[3] = aten.neg.default(%a)
  %add: f32[3] = aten.add.Tensor(%b, %neg)
  return %add, %neg
}`)
	pl, err := pm.ParsePipeline("executorch.portable: executorch.lowering(insert-write-back)")
	if err != nil {
		t.Fatal(err)
	}
	for run := 0; run < 2; run++ {
		if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
			t.Fatal(err)
		}
	}
	out := p.Main.Outputs()[0].Value
	if out.Def == nil || out.Def.Op != etlOpCopy_ || out.Def.Args[0].Value != p.Main.Inputs[1] || out.Def.Args[1].Value != p.Main.Value("add") {
		t.Fatalf("output 0 is not copy_(%%b, %%add):\n%s", ir.Print(p))
	}
	if n := strings.Count(ir.Print(p), "aten.copy_.default"); n != 1 {
		t.Errorf("%d copy_ nodes after two runs, want 1", n)
	}
}

// etlInPlaceLineage follows in-place ops' first operand back to the
// input; a functional op or another tensor's in-place op breaks the chain.
func TestInPlaceLineage(t *testing.T) {
	p := mustParse(t, `graph forward(%x: f32[4], %y: f32[4]) {
  %a: f32[4] = aten.add_.Tensor(%x, %y)
  %b: f32[4] = aten.mul_.Tensor(%a, %y)
  %c: f32[4] = aten.add.Tensor(%b, %y)
  %d: f32[4] = aten.add_.Tensor(%y, %x)
  return %b, %c, %d
}`)
	g := p.Main
	x := g.Inputs[0]
	for name, want := range map[string]bool{"x": true, "a": true, "b": true, "c": false, "d": false} {
		v := g.Value(name)
		if name == "x" {
			v = x
		}
		if got := etlInPlaceLineage(v, x); got != want {
			t.Errorf("lineage(%%%s, %%x) = %v, want %v", name, got, want)
		}
	}
}
