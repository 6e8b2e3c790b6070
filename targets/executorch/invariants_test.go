// Package executorch_test holds the invariant tests of the ExecuTorch
// catalog rows that span lowering, planning and emission (the "invariant"
// rows of shared/reference/workaround-catalog.md): each test is named after
// its row and fails when fxport stops upholding the property that replaced
// the exporter's patch. docs/targets/executorch.md ("Catalog rows and
// invariants") maps every ET-* row to its pass, test or capture step.
package executorch_test

import (
	"os"

	"github.com/fxport/fxport/frontends/pt2"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	_ "github.com/fxport/fxport/passes" // the executorch passes
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/run"
)

// export runs the executorch.portable pipeline on IR text and returns the
// lowered program and the decoded .pte.
func export(t *testing.T, src string, opts emit.Options) (*ir.Program, *pte.File) {
	t.Helper()
	p, err := ir.Parse([]byte(src), "invariant.fxir")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.portable")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	ef, err := emit.Program(p, opts)
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	b, err := pte.Encode(ef)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	f, err := pte.Decode("invariant.pte", b)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return p, f
}

func tensorValue(t *testing.T, plan *etfb.ExecutionPlanT, i int32) *etfb.TensorT {
	t.Helper()
	x, ok := plan.Values[i].Val.Value.(*etfb.TensorT)
	if !ok {
		t.Fatalf("value %d is %s, want a tensor", i, etfb.EnumNamesKernelTypes[plan.Values[i].Val.Type])
	}
	return x
}

// ET-L04: the export metadata is a constant method of the .pte that
// returns the JSON the runner reads back.
func TestInvariant_ET_L04(t *testing.T) {
	_, f := export(t, `meta "io.input_names" = "[\"tokens\"]"
input x: user_input
output user_output
graph forward(%x: f32[3]) {
  %r: f32[3] = aten.relu.default(%x)
  return %r
}
`, emit.Options{})
	var md *etfb.ExecutionPlanT
	for _, pl := range f.Program.ExecutionPlan {
		if pl.Name == emit.MetadataMethod {
			md = pl
		}
	}
	if md == nil {
		t.Fatalf("no %s method", emit.MetadataMethod)
	}
	if len(md.Outputs) != 1 || len(md.Chains) != 0 && len(md.Chains[0].Instructions) != 0 {
		t.Fatalf("metadata method is not a constant method: outputs %v", md.Outputs)
	}
	s, ok := md.Values[md.Outputs[0]].Val.Value.(*etfb.StringT)
	if !ok || !strings.Contains(s.StringVal, `"input_names":["x"]`) && !strings.Contains(s.StringVal, `"tokens"`) {
		t.Fatalf("metadata method returns %+v", md.Values[md.Outputs[0]].Val.Value)
	}
	outs, err := run.Run(f, nil, run.Options{Method: emit.MetadataMethod})
	if err != nil {
		t.Fatalf("running the metadata method: %v", err)
	}
	if len(outs) != 1 || outs[0] != s.StringVal {
		t.Fatalf("metadata method returned %v", outs)
	}
}

// ET-P12: complex tensors pass the lowering's checks (the exporter had to
// swallow exir's "mismatched dtypes" error for complex64/complex128).
func TestInvariant_ET_P12(t *testing.T) {
	for _, dt := range []string{"c64", "c128"} {
		src := `input x: user_input
output user_output
graph forward(%x: ` + dt + `[4]) {
  %m: ` + dt + `[4] = aten.mul.Tensor(%x, %x)
  return %m
}
`
		p, err := ir.Parse([]byte(src), "complex.fxir")
		if err != nil {
			t.Fatal(err)
		}
		pl, err := pm.Build(pm.TargetExecuTorch, "executorch.portable")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
			t.Fatalf("%s: the executorch lowering rejects complex tensors: %v", dt, err)
		}
		found := false
		for _, n := range p.Main.Nodes() {
			found = found || n.Op.Info().Name == "aten.mul.out"
		}
		if !found {
			t.Fatalf("%s: mul was not lowered to its out variant:\n%s", dt, ir.Print(p))
		}
	}
}

// ET-P14: only parameters, non-mutated buffers and lifted constants become
// constant tensors; user inputs and mutated buffers are planned.
func TestInvariant_ET_P14(t *testing.T) {
	_, f := export(t, `input p_w: parameter "w"
input b_stat: buffer "stat" persistent
input b_cache: buffer "cache" persistent
input c_k: constant_tensor "k"
input x: user_input
output buffer_mutation "cache"
output user_output
weight "w": f32[4] = inline("0000803f000000400000404000008040")
weight "stat": f32[4] = inline("0000803f0000803f0000803f0000803f")
weight "cache": f32[4] = inline("00000000000000000000000000000000")
weight "k": f32[4] = inline("00000040000000400000004000000040")
graph forward(%p_w: f32[4], %b_stat: f32[4], %b_cache: f32[4], %c_k: f32[4], %x: f32[4]) {
  %a: f32[4] = aten.mul.Tensor(%x, %p_w)
  %b: f32[4] = aten.add.Tensor(%a, %b_stat)
  %c: f32[4] = aten.add.Tensor(%b, %b_cache)
  %d: f32[4] = aten.mul.Tensor(%c, %c_k)
  return %c, %d
}
`, emit.Options{NoMetadataMethod: true})
	plan := f.Program.ExecutionPlan[0]
	var consts, planned int
	for i := range plan.Values {
		x, ok := plan.Values[i].Val.Value.(*etfb.TensorT)
		if !ok {
			continue
		}
		if x.AllocationInfo == nil && x.DataBufferIdx > 0 {
			consts++
		} else if x.AllocationInfo != nil {
			planned++
		}
	}
	// w, stat and k are constants (the cache's mutable-data link makes it
	// planned, with data).
	if consts != 3 {
		t.Errorf("%d constant tensors, want 3 (w, stat, k)", consts)
	}
	in := tensorValue(t, plan, plan.Inputs[0])
	if in.AllocationInfo == nil || in.DataBufferIdx != 0 {
		t.Errorf("user input is not a planned, non-constant tensor: %+v", in)
	}
	if len(plan.Inputs) != 1 {
		t.Errorf("plan inputs %v, want the user input only", plan.Inputs)
	}
	cache := tensorValue(t, plan, plan.Outputs[0])
	if cache.AllocationInfo == nil || cache.ExtraTensorInfo == nil || cache.ExtraTensorInfo.FullyQualifiedName != "cache" {
		t.Errorf("mutated buffer is not planned with its mutable data: %+v", cache)
	}
}

// ET-P34: the signature's inputs follow placeholder order, so constant
// (non-tensor) inputs between weights and user inputs shift nothing: each
// placeholder keeps its own role through the lowering and the emitter
// (exir's form: a value holding the literal, listed in plan.inputs in
// signature order). Checked by running the lowered program with the
// interpreter and the emitted .pte with targets/executorch/run.
func TestInvariant_ET_P34(t *testing.T) {
	src := `input p_w: parameter "w"
input mode: constant_input = 3
input scale: constant_input = 0.5
input flag: constant_input = True
input nothing: constant_input = None
input tag: constant_input = "abc"
input x: user_input
input y: user_input
output user_output
weight "w": f32[2] = inline("0000803f00000040")
graph forward(%p_w: f32[2], %mode: int, %scale: float, %flag: bool, %nothing: none, %tag: str, %x: f32[2], %y: f32[2]) {
  %a: f32[2] = aten.mul.Tensor(%x, %p_w)
  %b: f32[2] = aten.sub.Tensor(%a, %y)
  %c: f32[2] = aten.mul.Scalar(%b, %mode)
  return %c
}
`
	p, f := export(t, src, emit.Options{NoMetadataMethod: true})
	if len(p.Signature.Inputs) != len(p.Main.Inputs) {
		t.Fatalf("%d input specs for %d placeholders", len(p.Signature.Inputs), len(p.Main.Inputs))
	}
	for i, spec := range p.Signature.Inputs {
		if spec.Name != p.Main.Inputs[i].Name {
			t.Errorf("input spec %d is %q, placeholder %q", i, spec.Name, p.Main.Inputs[i].Name)
		}
	}
	x := interp.FromFloat64(ir.Float32, []int64{2}, []float64{3, 4})
	y := interp.FromFloat64(ir.Float32, []int64{2}, []float64{1, 1})
	res, err := interp.Run(p, []interp.Value{x, y}, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := res.Outputs[0].(*interp.Tensor).Float64s()
	if want[0] != 6 || want[1] != 21 { // 3·[3·1 − 1, 4·2 − 1]
		t.Fatalf("interpreter: 3·(x·w − y) = %v, want [6 21] (inputs bound to the wrong placeholders)", want)
	}

	plan := f.Program.ExecutionPlan[0]
	if len(plan.Inputs) != 7 {
		t.Fatalf("plan.inputs %v, want the 5 constant inputs and the 2 user inputs", plan.Inputs)
	}
	kinds := []etfb.KernelTypes{etfb.KernelTypesInt, etfb.KernelTypesDouble, etfb.KernelTypesBool, etfb.KernelTypesNull, etfb.KernelTypesString, etfb.KernelTypesTensor, etfb.KernelTypesTensor}
	for i, k := range kinds {
		if got := plan.Values[plan.Inputs[i]].Val.Type; got != k {
			t.Errorf("input %d (value %d) is %s, want %s", i, plan.Inputs[i], etfb.EnumNamesKernelTypes[got], etfb.EnumNamesKernelTypes[k])
		}
	}
	if v, ok := plan.Values[plan.Inputs[0]].Val.Value.(*etfb.IntT); !ok || v.IntVal != 3 {
		t.Errorf("mode: %+v, want Int 3", plan.Values[plan.Inputs[0]].Val.Value)
	}
	if v, ok := plan.Values[plan.Inputs[1]].Val.Value.(*etfb.DoubleT); !ok || v.DoubleVal != 0.5 {
		t.Errorf("scale: %+v, want Double 0.5", plan.Values[plan.Inputs[1]].Val.Value)
	}
	if v, ok := plan.Values[plan.Inputs[2]].Val.Value.(*etfb.BoolT); !ok || !v.BoolVal {
		t.Errorf("flag: %+v, want Bool true", plan.Values[plan.Inputs[2]].Val.Value)
	}
	if v, ok := plan.Values[plan.Inputs[4]].Val.Value.(*etfb.StringT); !ok || v.StringVal != "abc" {
		t.Errorf("tag: %+v, want String \"abc\"", plan.Values[plan.Inputs[4]].Val.Value)
	}
	// The mul.Scalar kernel reads the constant input's value.
	var mulArgs []int32
	for _, in := range plan.Chains[0].Instructions {
		if kc, ok := in.InstrArgs.Value.(*etfb.KernelCallT); ok && plan.Operators[kc.OpIndex].Name == "aten::mul" && plan.Operators[kc.OpIndex].Overload == "Scalar_out" {
			mulArgs = kc.Args
		}
	}
	if len(mulArgs) < 2 || mulArgs[1] != plan.Inputs[0] {
		t.Errorf("aten::mul.Scalar_out args %v: want the constant input (value %d) as other", mulArgs, plan.Inputs[0])
	}

	outs, err := run.Run(f, []interp.Value{int64(3), 0.5, true, nil, "abc", x, y}, run.Options{})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	got := outs[0].(*interp.Tensor).Float64s()
	if len(got) != len(want) {
		t.Fatalf(".pte: %v, interpreter: %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf(".pte: %v, interpreter: %v", got, want)
		}
	}
}

// ET-P41: nonzero's result is contiguous whatever the input's layout.
func TestInvariant_ET_P41(t *testing.T) {
	p, err := ir.Parse([]byte(`symbol u0: [0, inf] unbacked
input x: user_input
output user_output
graph forward(%x: f32[1, 3, 2, 2]{0,2,3,1}) {
  %n: i64[u0, 4] = aten.nonzero.default(%x)
  return %n
}
`), "nonzero.fxir")
	if err != nil {
		t.Fatal(err)
	}
	n := p.Main.Nodes()[0]
	types, err := ir.InferTypes(n)
	if err != nil {
		t.Fatal(err)
	}
	tt := ir.AsTensor(types[0])
	if tt == nil || !tt.IsContiguous() || tt.Rank() != 2 {
		t.Fatalf("nonzero of a channels-last input infers %v, want a contiguous (nnz, 4) tensor", types[0])
	}
}

// ET-P42: the lowering never specializes a backed symbol: a program with
// a symbolic batch keeps the symbol through the whole executorch pipeline,
// the .pte marks the tensors DYNAMIC_BOUND at their upper bound, and the
// file runs at two different sizes.
func TestInvariant_ET_P42(t *testing.T) {
	p, f := export(t, `symbol s0: [2, 16] hint 4
input x: user_input
output user_output
graph forward(%x: f32[s0, 3]) {
  %s: f32[s0, 3] = aten.sigmoid.default(%x)
  %m: f32[s0, 3] = aten.mul.Tensor(%s, %x)
  %v: f32[s0, 3] = aten.view.default(%m, [-1, 3])
  return %v
}
`, emit.Options{NoMetadataMethod: true})
	text := ir.Print(p)
	if !strings.Contains(text, "f32[s0, 3] = aten.mul.out") {
		t.Fatalf("the lowered program lost s0:\n%s", text)
	}
	for _, n := range p.Main.Nodes() {
		for _, r := range n.Results {
			if tt := r.Tensor(); tt != nil && tt.Rank() == 2 && !tt.Shape[0].Equal(p.Main.Inputs[0].Tensor().Shape[0]) {
				t.Errorf("%s: %s has type %s, want the symbolic batch", n.Short(), r, r.Type)
			}
		}
	}
	plan := f.Program.ExecutionPlan[0]
	for _, i := range append(append([]int32{}, plan.Inputs...), plan.Outputs...) {
		x := tensorValue(t, plan, i)
		if x.ShapeDynamism != etfb.TensorShapeDynamismDYNAMIC_BOUND || x.Sizes[0] != 16 {
			t.Errorf("value %d: sizes %v, %s; want [16 3] DYNAMIC_BOUND", i, x.Sizes, etfb.EnumNamesTensorShapeDynamism[x.ShapeDynamism])
		}
	}
	for _, batch := range []int64{2, 5} {
		xs := make([]float64, batch*3)
		for i := range xs {
			xs[i] = float64(i) - 4
		}
		outs, err := run.Run(f, []interp.Value{interp.FromFloat64(ir.Float32, []int64{batch, 3}, xs)}, run.Options{})
		if err != nil {
			t.Fatalf("batch %d: %v", batch, err)
		}
		got := outs[0].(*interp.Tensor)
		if got.Shape[0] != batch {
			t.Fatalf("batch %d: output shape %v", batch, got.Shape)
		}
		for i, v := range got.Float64s() {
			want := xs[i] / (1 + math.Exp(-xs[i]))
			if math.Abs(v-want) > 1e-5 {
				t.Fatalf("batch %d: out[%d] = %g, want %g", batch, i, v, want)
			}
		}
	}
}

// ET-PF02: the frontend types every parameter, buffer and lifted-constant
// placeholder from its weight (exir needed meta["val"] filled from the
// state dict): checked on a corpus program read from its .pt2.
func TestInvariant_ET_PF02(t *testing.T) {
	path := "../../tests/corpus/resnet18/program.pt2"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("corpus program not found: %v", err)
	}
	p, err := pt2.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for i, v := range p.Main.Inputs {
		spec := p.Signature.Inputs[i]
		switch spec.Kind {
		case ir.Parameter, ir.Buffer, ir.ConstantTensor:
		default:
			continue
		}
		w := p.Weight(spec.Target)
		if w == nil {
			t.Fatalf("placeholder %s: no weight %q", v, spec.Target)
		}
		tt := v.Tensor()
		if tt == nil || tt.String() != w.Type.String() {
			t.Errorf("placeholder %s is typed %s, its weight %q is %s", v, v.Type, spec.Target, w.Type)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no weight placeholders checked")
	}
}
