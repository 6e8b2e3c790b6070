package xnnpack_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/run"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// hardBlockSrc is mobilenet_v3's activation pattern: hardswish after an
// elementwise op, a hardsigmoid gate multiplied back in (its decomposition
// leaves add.Scalar / div.Scalar on portable kernels), a second hardswish.
const hardBlockSrc = `input x: user_input
input y: user_input
output user_output
graph forward(%x: f32[1, 4, 5, 5], %y: f32[1, 4, 5, 5]) {
  %a: f32[1, 4, 5, 5] = aten.add.Tensor(%x, %y)
  %h: f32[1, 4, 5, 5] = aten.hardswish.default(%a)
  %g: f32[1, 4, 5, 5] = aten.hardsigmoid.default(%y)
  %m: f32[1, 4, 5, 5] = aten.mul.Tensor(%h, %g)
  %h2: f32[1, 4, 5, 5] = aten.hardswish.default(%m)
  return %h2
}
`

// hardswish reaches the partitioner whole and becomes one XNNHardswish
// node per op; the result matches the interpreter on the unlowered IR.
func TestKeepWholeHardswishNumeric(t *testing.T) {
	got := checkNumeric(t, hardBlockSrc, []string{"XNNHardswish", "XNNAdd", "XNNMultiply"}, []string{"aten.hardswish.default"})
	n := 0
	for _, k := range got {
		if k == "XNNHardswish" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d XNNHardswish nodes, want 2 (one per hardswish): %v", n, got)
	}
}

// With HardswishConfig excluded the kept-whole hardswish is not claimed;
// decompose-unclaimed decomposes it, so the portable part holds only core
// ops, and the .pte still computes what the program does.
func TestKeepWholeExcludedIsDecomposed(t *testing.T) {
	ref, err := ir.Parse([]byte(hardBlockSrc), "hard.fxir")
	if err != nil {
		t.Fatal(err)
	}
	ins := []interp.Value{sweepInput([]int64{1, 4, 5, 5}), sweepInput2([]int64{1, 4, 5, 5})}
	want, err := interp.Run(ref, ins, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ir.Parse([]byte(hardBlockSrc), "hard.fxir")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pm.Run(p, excludePipeline(t, "HardswishConfig"), nil, pm.Config{VerifyEach: true})
	if err != nil {
		t.Fatal(err)
	}
	for pass, want := range map[string][2]string{"decompose-to-core": {"kept-whole", "2"}, "decompose-unclaimed": {"decomposed", "2"}} {
		pr, ok := rep.Pass(pass)
		if !ok {
			t.Fatalf("no %s in the pipeline", pass)
		}
		if got := fmt.Sprint(pr.Stat(want[0])); got != want[1] {
			t.Errorf("%s: statistic %s = %s, want %s", pass, want[0], got, want[1])
		}
	}
	for _, g := range p.Graphs() {
		for _, n := range g.Nodes() {
			if name := n.Op.Info().Name; strings.Contains(name, "hardswish") {
				t.Fatalf("%s left in graph %s:\n%s", name, g.Name, ir.Print(p))
			}
		}
	}
	ef, err := emit.Program(p, emit.Options{NoMetadataMethod: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := pte.Encode(ef)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pte.Decode("hard.pte", b)
	if err != nil {
		t.Fatal(err)
	}
	st := statsOf(f)
	if st.portable["aten::clamp"] < 2 || st.portable["aten::mul"] < 2 {
		t.Errorf("want both hardswishes' clamp and mul on portable kernels: %s", st)
	}
	outs, err := run.Run(f, ins, run.Options{})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	g, w := outs[0].(*interp.Tensor).Float64s(), want.Outputs[0].(*interp.Tensor).Float64s()
	for k := range w {
		if d := math.Abs(g[k] - w[k]); !(d <= 1e-5*(1+math.Abs(w[k]))) {
			t.Fatalf("output[%d] = %g, want %g", k, g[k], w[k])
		}
	}
}

// sweepInput2 is a second deterministic input, different from sweepInput.
func sweepInput2(shape []int64) interp.Value {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = math.Cos(float64(i*5+1)) * 3.5
	}
	return interp.FromFloat64(ir.Float32, shape, xs)
}

// OpsToNotDecompose keeps a node whole only when the support rules accept
// it: an op of OpsKeptWhole with fp32/fp16 tensors, in the main graph.
func TestOpsToNotDecompose(t *testing.T) {
	p, err := ir.Parse([]byte(`input x: user_input
input d: user_input
input e: user_input
output user_output
output user_output
output user_output
output user_output
graph forward(%x: f32[2, 3], %d: f64[2, 3], %e: f32[0, 3]) {
  %h: f32[2, 3] = aten.hardswish.default(%x)
  %hd: f64[2, 3] = aten.hardswish.default(%d)
  %he: f32[0, 3] = aten.hardswish.default(%e)
  %s: f32[2, 3] = aten.hardsigmoid.default(%x)
  return %h, %hd, %he, %s
}
`), "keep.fxir")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"h": true, "hd": false, "he": false, "s": false}
	for _, n := range p.Main.Nodes() {
		if got := xnnpack.OpsToNotDecompose(n); got != want[n.Results[0].Name] {
			t.Errorf("%s: OpsToNotDecompose = %v, want %v", n.Results[0].Name, got, want[n.Results[0].Name])
		}
	}
	if xnnpack.OpsToNotDecompose(nil) {
		t.Error("nil node kept whole")
	}
	if got := fmt.Sprint(xnnpack.OpsKeptWhole()); got != "[aten.hardswish.default]" {
		t.Errorf("OpsKeptWhole = %s", got)
	}
}
