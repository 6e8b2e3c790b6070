package run

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/internal/ettest"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// callConvSrc has an op with several outputs (native_layer_norm: one
// TensorList return slot), a list-out op returning nothing
// (split_with_sizes_copy.out), and a literal in a Tensor slot (a 0-dim
// constant after scalar-to-tensor).
const callConvSrc = `input p_w: parameter "w"
input x: user_input
output user_output
output user_output
output user_output
weight "w": f32[4] = inline("0000803f0000003f000040400000803e")
graph forward(%p_w: f32[4], %x: f32[3, 4]) {
  %ln: f32[3, 4], %mean: f32[3, 1], %rstd: f32[3, 1] = aten.native_layer_norm.default(%x, [4], %p_w, None, 1e-05)
  %h: f32[3, 4] = aten.mul.Tensor(%ln, 0.5)
  %a: f32[3, 1], %b: f32[3, 3] = aten.split_with_sizes_copy.default(%h, [1, 3], 1)
  return %a, %b, %rstd
}
`

// The runner runs what follows the calling convention and refuses, as the
// genuine runtime does (each confirmed on it: "Expected 9args received 11",
// "EValue is not a Tensor", "EValue is not a Double"), a call with one
// argument per output, a call without its return slot, a scalar where a
// kernel reads a Tensor, and an Int where it reads a Double. Like the
// runtime, it does not look into an out variant's return slot.
func TestRunRefusesWhatTheRuntimeRefuses(t *testing.T) {
	ref := ettest.Parse(t, callConvSrc, "callconv.fxir")
	x := interp.FromFloat64(ir.Float32, []int64{3, 4}, ramp(12, 0.5))
	res, err := interp.Run(ref, []interp.Value{x}, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := ettest.Parse(t, callConvSrc, "callconv.fxir")
	ettest.Lower(t, p, "executorch.portable", "")
	f, _ := ettest.Emit(t, p, "callconv.pte", emit.Options{NoMetadataMethod: true})
	got, err := Run(f, []interp.Value{x}, Options{})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	ettest.Same(t, "outputs", got, res.Outputs)

	plan := f.Methods[0].Plan
	call := func(op string) *etfb.KernelCallT {
		for _, in := range plan.Chains[0].Instructions {
			if k, ok := in.InstrArgs.Value.(*etfb.KernelCallT); ok && plan.Operators[k.OpIndex].Name+"."+plan.Operators[k.OpIndex].Overload == op {
				return k
			}
		}
		t.Fatalf("no %s call", op)
		return nil
	}
	addValue := func(v *etfb.EValueT) int32 {
		plan.Values = append(plan.Values, v)
		return int32(len(plan.Values) - 1)
	}
	ln, mul, split := call("aten::native_layer_norm.out"), call("aten::mul.out"), call("aten::split_with_sizes_copy.out")
	for _, c := range []struct {
		name, want string
		k          *etfb.KernelCallT
		edit       func(k *etfb.KernelCallT)
	}{
		{"one argument per output", "11 arguments, its kernel takes 9", ln, func(k *etfb.KernelCallT) {
			l := plan.Values[k.Args[len(k.Args)-1]].Val.Value.(*etfb.TensorListT)
			k.Args = append(k.Args[:len(k.Args)-1], l.Items...)
		}},
		{"no return slot", "4 arguments, its kernel takes 5", split, func(k *etfb.KernelCallT) { k.Args = k.Args[:len(k.Args)-1] }},
		{"scalar in a Tensor slot", "argument 1 (other): a Double (0.5) value where the kernel expects a Tensor", mul, func(k *etfb.KernelCallT) {
			k.Args[1] = addValue(&etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesDouble, Value: &etfb.DoubleT{DoubleVal: 0.5}}})
		}},
		{"Int in a float slot", "argument 4 (eps): an Int (0) value where the kernel expects a Double", ln, func(k *etfb.KernelCallT) {
			k.Args[4] = addValue(&etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesInt, Value: &etfb.IntT{IntVal: 0}}})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			saved, nvals := append([]int32(nil), c.k.Args...), len(plan.Values)
			defer func() { c.k.Args, plan.Values = saved, plan.Values[:nvals] }()
			c.edit(c.k)
			_, err := Run(&pte.File{Name: f.Name, Program: f.Program, Methods: f.Methods, Segments: f.Segments}, []interp.Value{x}, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("run: %v, want an error containing %q", err, c.want)
			}
		})
	}
	t.Run("out variant's slot holding another tensor", func(t *testing.T) {
		saved := append([]int32(nil), ln.Args...)
		defer func() { ln.Args = saved }()
		ln.Args[len(ln.Args)-1] = ln.Args[0]
		got, err := Run(f, []interp.Value{x}, Options{})
		if err != nil {
			t.Fatalf("run: %v (the genuine runtime runs it)", err)
		}
		ettest.Same(t, "outputs", got, res.Outputs)
	})
}
