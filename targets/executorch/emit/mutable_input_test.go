package emit_test

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
)

const mutatedInputSrc = `input x: user_input
input y: user_input
output user_input_mutation "x"
output user_output
graph forward(%x: f32[2, 3], %y: f32[2, 3]) {
  %add: f32[2, 3] = aten.add.Tensor(%x, %y)
  %mul: f32[2, 3] = aten.mul.Tensor(%add, 2)
  return %add, %mul
}`

func lowerText(t *testing.T, src, pipeline string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), "mutation.fxir")
	if err != nil {
		t.Fatal(err)
	}
	var pl *pm.Pipeline
	if pipeline == "" {
		pl, err = pm.Build(pm.TargetExecuTorch, "executorch.portable")
	} else {
		pl, err = pm.ParsePipeline(pipeline)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
		t.Fatal(err)
	}
	return p
}

// A mutated user input is a plain input of the method, and its
// user_input_mutation output is the input's own value (the copy_ result).
func TestEmitUserInputMutation(t *testing.T) {
	f, err := emit.Program(lowerText(t, mutatedInputSrc, ""), emit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plan := f.Program.ExecutionPlan[0]
	if len(plan.Inputs) != 2 || len(plan.Outputs) != 2 || plan.Outputs[0] != plan.Inputs[0] {
		t.Errorf("inputs %v, outputs %v: want output 0 = input 0", plan.Inputs, plan.Outputs)
	}
}

// Without the write-back (the copy_ removed after lowering), the emitter
// refuses the mutation instead of dropping it.
func TestEmitUserInputMutationNeedsWriteBack(t *testing.T) {
	p := lowerText(t, mutatedInputSrc, "")
	g := p.Main
	cp := g.Outputs()[0].Value.Def
	if cp == nil || cp.Op.Info().Name != "aten.copy_.default" {
		t.Fatalf("output 0 is not the write-back:\n%s", ir.Print(p))
	}
	g.SetOutput(0, cp.Args[1])
	if err := cp.Erase(); err != nil {
		t.Fatal(err)
	}
	_, err := emit.Program(p, emit.Options{})
	if err == nil || !strings.Contains(err.Error(), "not written back into the input") {
		t.Fatalf("error %v, want the missing write-back", err)
	}
}

// A parameter mutation that reaches the emitter (insert-write-back not
// run) is refused, naming the parameter.
func TestEmitRefusesParameterMutation(t *testing.T) {
	p := lowerText(t, `input p_w: parameter "w"
input x: user_input
output parameter_mutation "w"
output user_output
weight "w": f32[4] = inline("00000000000000000000000000000000")
graph forward(%p_w: f32[4], %x: f32[4]) {
  %add: f32[4] = aten.add.Tensor(%p_w, %x)
  %mul: f32[4] = aten.mul.Tensor(%add, %x)
  return %add, %mul
}`, "executorch.portable: executorch.lowering(to-out-variants, plan-memory)")
	_, err := emit.Program(p, emit.Options{})
	if err == nil || !strings.Contains(err.Error(), `mutated parameter "w" is not supported`) {
		t.Fatalf("error %v, want the parameter named", err)
	}
}
