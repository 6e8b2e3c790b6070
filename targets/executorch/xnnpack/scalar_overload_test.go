package xnnpack_test

import (
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

// hardsigmoidSrc is an SE-block gate: x * hardsigmoid(3.5 * x), the
// hardsigmoid decomposed by decompose-to-core into add.Scalar(·, 3),
// clamp(·, 0, 6) and div.Scalar(·, 6); the 3.5 (a mul.Scalar) puts the
// test inputs past both clamp bounds.
const hardsigmoidSrc = `input x: user_input
output user_output
graph forward(%x: f32[2, 3, 4]) {
  %s: f32[2, 3, 4] = aten.mul.Scalar(%x, 3.5)
  %h: f32[2, 3, 4] = aten.hardsigmoid.default(%s)
  %y: f32[2, 3, 4] = aten.mul.Tensor(%x, %h)
  return %y
}
`

// loweredScalar parses src and runs the executorch.xnnpack pipeline.
func loweredScalar(t *testing.T, src string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), "scalar.fxir")
	if err != nil {
		t.Fatal(err)
	}
	lower(t, p, "")
	return p
}

// liftedConstants lists the dtypes of p's lifted scalar constants
// (_lifted_tensor_constant<N> placeholders), in signature order.
func liftedConstants(p *ir.Program) []string {
	var out []string
	for i, s := range p.Signature.Inputs {
		if s.Kind == ir.ConstantTensor && strings.HasPrefix(s.Target, "_lifted_tensor_constant") {
			out = append(out, p.Main.Inputs[i].Tensor().DType.String()+"[]")
		}
	}
	return out
}

// countOps counts the main graph's nodes whose op name starts with prefix
// (aten.add.Scalar counts its out variant aten.add.Scalar_out too).
func countOps(p *ir.Program, prefix string) int {
	k := 0
	for _, n := range p.Main.Nodes() {
		if strings.HasPrefix(n.Op.Info().Name, prefix) {
			k++
		}
	}
	return k
}

// The decomposed hardsigmoid is delegated whole, as exir delegates torch's
// decomposition (add.Tensor / div.Tensor with lifted literals): one
// delegate call holds the mul, add, clamp and div (the clamp fused into
// the add's output range), the 3, 6 are int64 constants cast to fp32 on
// portable kernels (RemoveMixedTypeOperators' _to_copy) and the 3.5 an
// fp32 one, and the .pte computes what the interpreter computes on the
// unlowered IR.
func TestNumericHardsigmoidLifted(t *testing.T) {
	checkNumeric(t, hardsigmoidSrc, []string{"XNNMultiply", "XNNAdd", "XNNDiv"},
		[]string{"aten.mul.Scalar", "aten.add.Scalar", "aten.div.Scalar", "aten.clamp.default", "aten.add.Tensor", "aten.div.Tensor", "aten.mul.Tensor"})
	p := loweredScalar(t, hardsigmoidSrc)
	if got := countOps(p, xnnpack.OpCallDelegate.Info().Name); got != 1 {
		t.Errorf("%d delegate calls, want 1:\n%s", got, ir.Print(p))
	}
	if got := countOps(p, "dim_order_ops._to_dim_order_copy."); got != 2 {
		t.Errorf("%d casts of the int constants, want 2:\n%s", got, ir.Print(p))
	}
	if got, want := strings.Join(liftedConstants(p), " "), "float32[] int64[] int64[]"; got != want {
		t.Errorf("lifted constants %s, want %s:\n%s", got, want, ir.Print(p))
	}
}

// Each .Scalar overload on an fp32 tensor, with an fp32 or int literal
// and alpha 1 (default or explicit), becomes its .Tensor form reading a
// lifted 0-d constant and is delegated; with alpha ≠ 1 it stays a .Scalar
// op on the portable kernels with its literal (exir's Add/SubConfig
// reject alpha ≠ 1), and no constant is lifted. Either way the .pte
// computes what the interpreter computes on the unlowered IR.
func TestNumericScalarOverloads(t *testing.T) {
	for _, c := range []struct {
		name, call string
		kind       string // the XNNPACK node of a lifted op; "" when it stays portable
		lifted     string // the lifted constant's type
	}{
		{"add-float", "aten.add.Scalar(%x, 0.75)", "XNNAdd", "float32[]"},
		{"add-int", "aten.add.Scalar(%x, 3)", "XNNAdd", "int64[]"},
		{"add-alpha-1", "aten.add.Scalar(%x, 0.75, 1.0)", "XNNAdd", "float32[]"},
		{"add-alpha-2", "aten.add.Scalar(%x, 0.75, 2)", "", ""},
		{"sub-float", "aten.sub.Scalar(%x, 1.25)", "XNNSubtract", "float32[]"},
		{"sub-int", "aten.sub.Scalar(%x, 2)", "XNNSubtract", "int64[]"},
		{"sub-alpha", "aten.sub.Scalar(%x, 1.5, -0.5)", "", ""},
		{"mul-float", "aten.mul.Scalar(%x, -1.5)", "XNNMultiply", "float32[]"},
		{"mul-int", "aten.mul.Scalar(%x, 3)", "XNNMultiply", "int64[]"},
		{"div-float", "aten.div.Scalar(%x, 0.25)", "XNNDiv", "float32[]"},
		{"div-int", "aten.div.Scalar(%x, 6)", "XNNDiv", "int64[]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			op := c.call[:strings.Index(c.call, "(")]
			src := "input x: user_input\noutput user_output\ngraph forward(%x: f32[3, 5]) {\n  %y: f32[3, 5] = " + c.call +
				"\n  %r: f32[3, 5] = aten.relu.default(%y)\n  return %r\n}\n"
			p := loweredScalar(t, src)
			if c.kind == "" {
				if countOps(p, op) != 1 || len(liftedConstants(p)) != 0 {
					t.Fatalf("%s was rewritten:\n%s", op, ir.Print(p))
				}
				// gen/ops.spec has no sub.Scalar_out: a portable
				// sub.Scalar cannot be emitted (checked structurally).
				if op != "aten.sub.Scalar" {
					checkNumeric(t, src, []string{"XNNClamp"}, []string{"aten.relu.default"})
				}
				return
			}
			if got := strings.Join(liftedConstants(p), " "); got != c.lifted {
				t.Errorf("lifted constants %q, want %s:\n%s", got, c.lifted, ir.Print(p))
			}
			got := checkNumeric(t, src, []string{c.kind}, []string{op, strings.Replace(op, ".Scalar", ".Tensor", 1)})
			if len(got) != 1 { // the relu is fused into the op's output range
				t.Errorf("delegate nodes %v, want one %s", got, c.kind)
			}
		})
	}
}

// What liftScalars leaves alone: a .Scalar op on an int64 tensor, a
// .Scalar op whose result the partitioner would not take (an fp32 op on a
// rank-7 tensor), and div.Scalar_mode (no XNNPACK rule).
func TestScalarOverloadsNotLifted(t *testing.T) {
	for _, c := range []struct{ name, src, op string }{
		{"int64", `input x: user_input
output user_output
graph forward(%x: i64[3, 5]) {
  %y: i64[3, 5] = aten.add.Scalar(%x, 3)
  return %y
}
`, "aten.add.Scalar"},
		{"rank7", `input x: user_input
output user_output
graph forward(%x: f32[1, 1, 2, 1, 1, 2, 3]) {
  %y: f32[1, 1, 2, 1, 1, 2, 3] = aten.mul.Scalar(%x, 2.0)
  return %y
}
`, "aten.mul.Scalar"},
		{"div-mode", `input x: user_input
output user_output
graph forward(%x: f32[3, 5]) {
  %y: f32[3, 5] = aten.div.Scalar_mode(%x, 2.0, rounding_mode="floor")
  %r: f32[3, 5] = aten.relu.default(%y)
  return %r
}
`, "aten.div.Scalar_mode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := ir.Parse([]byte(c.src), c.name+".fxir")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := xnnpack.Run(p, xnnpack.Options{}); err != nil {
				t.Fatal(err)
			}
			if countOps(p, c.op) != 1 || len(liftedConstants(p)) != 0 {
				t.Errorf("%s was rewritten:\n%s", c.op, ir.Print(p))
			}
		})
	}
}

// The portable pipeline is unchanged: the decomposed hardsigmoid keeps
// its .Scalar ops (their out variants) and literals, no constant is
// lifted, and the .pte matches the interpreter.
func TestScalarOverloadsPortable(t *testing.T) {
	ref, err := ir.Parse([]byte(hardsigmoidSrc), "hs.fxir")
	if err != nil {
		t.Fatal(err)
	}
	x := sweepInput([]int64{2, 3, 4})
	res, err := interp.Run(ref, []interp.Value{x}, interp.Options{})
	if err != nil {
		t.Fatalf("interpreter: %v", err)
	}
	p, err := ir.Parse([]byte(hardsigmoidSrc), "hs.fxir")
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
	if len(p.Signature.Inputs) != 1 {
		t.Errorf("inputs %v, want x alone", p.Signature.Inputs)
	}
	for _, op := range []string{"aten.add.Scalar_out", "aten.clamp.out", "aten.div.Scalar_out", "aten.mul.Scalar_out", "aten.mul.out"} {
		if countOps(p, op) != 1 {
			t.Errorf("want one %s on the portable path:\n%s", op, ir.Print(p))
		}
	}
	ef, err := emit.Program(p, emit.Options{NoMetadataMethod: true})
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	b, err := pte.Encode(ef)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pte.Decode("hs.pte", b)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Methods[0].Delegates) != 0 {
		t.Errorf("%d delegates on the portable path", len(f.Methods[0].Delegates))
	}
	outs, err := run.Run(f, []interp.Value{x}, run.Options{})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	gs, ws := outs[0].(*interp.Tensor).Float64s(), res.Outputs[0].(*interp.Tensor).Float64s()
	for i := range ws {
		if d := math.Abs(gs[i] - ws[i]); !(d <= 1e-6) {
			t.Fatalf("y[%d] = %g, interpreter %g", i, gs[i], ws[i])
		}
	}
}

// Every partitioner config excluded from the hardsigmoid gate: nothing of
// the excluded config is delegated (exportExcluded), an excluded Add, Div
// or Mul config keeps its .Scalar op and literal, and the .pte matches
// the interpreter each time.
func TestExcludeEveryConfigScalarOverloads(t *testing.T) {
	q := qprog{"hardsigmoid-gate", hardsigmoidSrc, []int64{2, 3, 4}, 1e-6}
	ref, err := ir.Parse([]byte(q.src), q.name+".fxir")
	if err != nil {
		t.Fatal(err)
	}
	res, err := interp.Run(ref, []interp.Value{sweepInput(q.shape)}, interp.Options{})
	if err != nil {
		t.Fatalf("interpreter: %v", err)
	}
	want := res.Outputs[0].(*interp.Tensor).Float64s()
	full := exportExcluded(t, q, "", want)
	kept := map[string]string{"AddConfig": "aten.add.Scalar", "DivConfig": "aten.div.Scalar", "MulConfig": "aten.mul.Scalar"}
	for _, cfg := range xnnpack.Configs() {
		t.Run(cfg, func(t *testing.T) {
			n := exportExcluded(t, q, cfg, want)
			op, ok := kept[cfg]
			if !ok {
				return
			}
			if n >= full {
				t.Errorf("excluding %s delegates %d nodes, %d with nothing excluded", cfg, n, full)
			}
			p, err := ir.Parse([]byte(q.src), q.name+".fxir")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pm.Run(p, excludePipeline(t, cfg), nil, pm.Config{}); err != nil {
				t.Fatal(err)
			}
			if countOps(p, op) != 1 {
				t.Errorf("%s excluded: no %s left on the portable kernels:\n%s", cfg, op, ir.Print(p))
			}
		})
	}
}
