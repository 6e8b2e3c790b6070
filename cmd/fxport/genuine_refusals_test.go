package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/interp/npy"
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
	etrun "github.com/fxport/fxport/targets/executorch/run"
)

// refusalSrc has the calling convention's cases: an op with several
// outputs (one TensorList return slot), a list-out op returning nothing,
// a literal in a Tensor slot (a 0-dim constant), a float argument, and a
// pointwise kernel whose out must share its operands' dim order.
const refusalSrc = `input p_w: parameter "w"
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

// refusal is a broken copy of the control program: what the genuine
// runtime refuses and fxport's runner must refuse too.
type refusal struct {
	name string
	edit func(plan *etfb.ExecutionPlanT, call func(op string) *etfb.KernelCallT, add func(*etfb.EValueT) int32)
}

var refusals = []refusal{
	{"one-argument-per-output", func(plan *etfb.ExecutionPlanT, call func(string) *etfb.KernelCallT, _ func(*etfb.EValueT) int32) {
		k := call("aten::native_layer_norm.out")
		l := plan.Values[k.Args[len(k.Args)-1]].Val.Value.(*etfb.TensorListT)
		k.Args = append(k.Args[:len(k.Args)-1], l.Items...)
	}},
	{"no-return-slot", func(_ *etfb.ExecutionPlanT, call func(string) *etfb.KernelCallT, _ func(*etfb.EValueT) int32) {
		k := call("aten::split_with_sizes_copy.out")
		k.Args = k.Args[:len(k.Args)-1]
	}},
	{"scalar-in-tensor-slot", func(_ *etfb.ExecutionPlanT, call func(string) *etfb.KernelCallT, add func(*etfb.EValueT) int32) {
		call("aten::mul.out").Args[1] = add(&etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesDouble, Value: &etfb.DoubleT{DoubleVal: 0.5}}})
	}},
	{"pointwise-dim-order", func(plan *etfb.ExecutionPlanT, call func(string) *etfb.KernelCallT, _ func(*etfb.EValueT) int32) {
		k := call("aten::mul.out")
		plan.Values[k.Args[2]].Val.Value.(*etfb.TensorT).DimOrder = []byte{1, 0}
	}},
	{"int-in-float-slot", func(_ *etfb.ExecutionPlanT, call func(string) *etfb.KernelCallT, add func(*etfb.EValueT) int32) {
		call("aten::native_layer_norm.out").Args[4] = add(&etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesInt, Value: &etfb.IntT{IntVal: 0}}})
	}},
}

// refusalCases exports refusalSrc with `fxport export` (the control),
// writes one broken copy per refusal, checks that fxport's runner runs the
// control and refuses each copy, and returns the judge cases (group
// "control" and "refusal"). The control's expected outputs are the
// interpreter's: the case only shows that the copies fail for their edit.
func refusalCases(t *testing.T, dir string) []judgeCase {
	t.Helper()
	src := filepath.Join(dir, "callconv.fxir")
	if err := os.WriteFile(src, []byte(refusalSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	control := filepath.Join(dir, "callconv.pte")
	if err := runExport([]string{src, "--target", "executorch-portable", "-o", control}, io.Discard, io.Discard); err != nil {
		t.Fatalf("export %s: %v", src, err)
	}
	ioDir := filepath.Join(dir, "callconv-io")
	if err := os.MkdirAll(ioDir, 0o755); err != nil {
		t.Fatal(err)
	}
	xs := make([]float64, 12)
	for i := range xs {
		xs[i] = float64(i%5)*0.7 - 1.3
	}
	x := interp.FromFloat64(ir.Float32, []int64{3, 4}, xs)
	p, err := ir.Parse([]byte(refusalSrc), src)
	if err != nil {
		t.Fatal(err)
	}
	res, err := interp.Run(p, []interp.Value{x}, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	writeNpy(t, filepath.Join(ioDir, "input_0.npy"), x)
	for i, o := range res.Outputs {
		writeNpy(t, filepath.Join(ioDir, fmt.Sprintf("output_%d.npy", i)), o.(*interp.Tensor))
	}
	f, err := pte.Read(control)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := etrun.Run(f, []interp.Value{x}, etrun.Options{}); err != nil {
		t.Fatalf("fxport's runner on the control: %v", err)
	}
	cases := []judgeCase{{Name: "callconv.control", PTE: control, Inputs: ioDir, Expected: ioDir}}
	for _, r := range refusals {
		g, err := pte.Read(control)
		if err != nil {
			t.Fatal(err)
		}
		plan := g.Program.ExecutionPlan[0]
		call := func(op string) *etfb.KernelCallT {
			for _, in := range plan.Chains[0].Instructions {
				if k, ok := in.InstrArgs.Value.(*etfb.KernelCallT); ok && plan.Operators[k.OpIndex].Name+"."+plan.Operators[k.OpIndex].Overload == op {
					return k
				}
			}
			t.Fatalf("%s: no %s call", r.name, op)
			return nil
		}
		add := func(v *etfb.EValueT) int32 {
			plan.Values = append(plan.Values, v)
			return int32(len(plan.Values) - 1)
		}
		r.edit(plan, call, add)
		b, err := pte.Encode(g)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		path := filepath.Join(dir, "callconv."+r.name+".pte")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		broken, err := pte.Decode(path, b)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if _, err := etrun.Run(broken, []interp.Value{x}, etrun.Options{}); err == nil {
			t.Errorf("%s: fxport's runner ran a program the genuine runtime refuses", r.name)
		} else {
			t.Logf("%s: fxport run: %v", r.name, err)
		}
		cases = append(cases, judgeCase{Name: "callconv." + r.name, PTE: path, Inputs: ioDir, Expected: ioDir})
	}
	return cases
}

func writeNpy(t *testing.T, path string, x *interp.Tensor) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := npy.Write(f, x); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
