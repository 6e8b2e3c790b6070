package run

import (
	"slices"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// def f(x, y): x.add_(y); return x * 2, as torch.export writes it: the new
// x is a user_input_mutation output naming the placeholder.
const userInputMutationSrc = `input x: user_input
input y: user_input
output user_input_mutation "x"
output user_output
graph forward(%x: f32[2, 3], %y: f32[2, 3]) {
  %add: f32[2, 3] = aten.add.Tensor(%x, %y)
  %mul: f32[2, 3] = aten.mul.Tensor(%add, 2)
  return %add, %mul
}`

// exportMutation lowers userInputMutationSrc for backend (plan-memory with
// alloc-graph-input as given), emits, encodes and decodes it; it returns the
// file and the program before lowering.
func exportMutation(t *testing.T, backend string, allocInput bool) (*pte.File, *ir.Program) {
	t.Helper()
	p, err := ir.Parse([]byte(userInputMutationSrc), "mutate_input.fxir")
	if err != nil {
		t.Fatal(err)
	}
	ref := p.Clone()
	pl, err := pm.Build(pm.TargetExecuTorch, backend)
	if err != nil {
		t.Fatal(err)
	}
	if !allocInput {
		text := pl.String()
		if !strings.Contains(text, "plan-memory") {
			t.Fatalf("no plan-memory in %s", text)
		}
		if pl, err = pm.ParsePipeline(strings.Replace(text, "plan-memory", "plan-memory{alloc-graph-input=false}", 1)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
		t.Fatal(err)
	}
	ef, err := emit.Program(p, emit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := pte.Encode(ef)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pte.Decode("mutate_input.pte", b)
	if err != nil {
		t.Fatal(err)
	}
	return f, ref
}

// A user input the program mutates: the method ends with aten::copy_ into
// the input's value and returns that value first (exir keeps the
// user_input_mutation output). With planned inputs ExecuTorch copies the
// caller's tensor in, so the caller's tensor keeps its value and the new x
// is output 0; with alloc-graph-input=false the input shares the caller's
// memory and the copy_ writes the caller's tensor. Both equal the
// interpreter's new x, and a second execution mutates again.
func TestUserInputMutation(t *testing.T) {
	for _, backend := range []string{"executorch.portable", "executorch.xnnpack"} {
		for _, allocInput := range []bool{true, false} {
			name := backend + "/planned"
			if !allocInput {
				name = backend + "/unplanned"
			}
			t.Run(name, func(t *testing.T) {
				f, ref := exportMutation(t, backend, allocInput)
				plan := f.Methods[0].Plan
				if len(plan.Inputs) != 2 || len(plan.Outputs) != 2 {
					t.Fatalf("inputs %v, outputs %v: want 2 and 2", plan.Inputs, plan.Outputs)
				}
				if plan.Outputs[0] != plan.Inputs[0] {
					t.Errorf("output 0 is value %d, want the mutated input's value %d", plan.Outputs[0], plan.Inputs[0])
				}
				xt := plan.Values[plan.Inputs[0]].Val.Value.(*etfb.TensorT)
				if planned := xt.AllocationInfo != nil; planned != allocInput {
					t.Errorf("input x planned = %v, want %v", planned, allocInput)
				}
				copies, delegates := 0, 0
				for _, in := range plan.Chains[0].Instructions {
					switch k := in.InstrArgs.Value.(type) {
					case *etfb.KernelCallT:
						if op := plan.Operators[k.OpIndex]; op.Name == "aten::copy_" {
							copies++
							if k.Args[0] != plan.Inputs[0] {
								t.Errorf("copy_ writes value %d, want x (value %d)", k.Args[0], plan.Inputs[0])
							}
						}
					case *etfb.DelegateCallT:
						delegates++
					}
				}
				if copies != 1 {
					t.Errorf("%d aten::copy_ calls, want 1", copies)
				}
				if want := strings.HasSuffix(backend, "xnnpack"); (delegates > 0) != want {
					t.Errorf("%d delegate calls (backend %s)", delegates, backend)
				}

				x0 := f32([]int64{2, 3}, ramp(6, 0.5)...)
				y := f32([]int64{2, 3}, ramp(6, 0.25)...)
				x, y0 := x0.Clone(), y.Clone()
				want, err := interp.Run(ref, []interp.Value{x, y}, interp.Options{})
				if err != nil {
					t.Fatal(err)
				}
				newX := want.Outputs[0].(*interp.Tensor)
				m, err := Load(f, Options{})
				if err != nil {
					t.Fatal(err)
				}
				outs, err := m.Execute([]interp.Value{x, y})
				if err != nil {
					t.Fatal(err)
				}
				for i, w := range want.Outputs {
					if e := maxAbsErr(t, outs[i], w.(*interp.Tensor)); e > 1e-6 {
						t.Errorf("output %d: max error %g against the interpreter", i, e)
					}
				}
				if !slices.Equal(y.Float64s(), y0.Float64s()) {
					t.Errorf("y changed: %v, was %v", y.Float64s(), y0.Float64s())
				}
				if !allocInput {
					if e := maxAbsErr(t, x, newX); e > 1e-6 {
						t.Errorf("caller's x is %v, want the interpreter's new x %v", x.Float64s(), newX.Float64s())
					}
					// Again: x += y once more, in the caller's tensor.
					want2, err := interp.Run(ref, []interp.Value{x, y}, interp.Options{})
					if err != nil {
						t.Fatal(err)
					}
					outs2, err := m.Execute([]interp.Value{x, y})
					if err != nil {
						t.Fatal(err)
					}
					if e := maxAbsErr(t, x, want2.Outputs[0].(*interp.Tensor)); e > 1e-6 {
						t.Errorf("second run: caller's x is %v, want %v", x.Float64s(), want2.Outputs[0].(*interp.Tensor).Float64s())
					}
					if e := maxAbsErr(t, outs2[1], want2.Outputs[1].(*interp.Tensor)); e > 1e-6 {
						t.Errorf("second run: output 1 max error %g", e)
					}
				} else if !slices.Equal(x.Float64s(), x0.Float64s()) {
					t.Errorf("planned input: caller's x changed to %v (ExecuTorch copies planned inputs in)", x.Float64s())
				}
			})
		}
	}
}
