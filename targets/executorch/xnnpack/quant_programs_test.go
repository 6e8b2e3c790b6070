package xnnpack_test

import (
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/internal/ettest"
)

// The quantized test programs of the qs8_*, qd8 and exclusion tests, and
// the weights they are written with.

func hexF32(v ...float64) string { return ettest.HexF32(v...) }
func hexI64(v ...int64) string   { return ettest.HexI64(v...) }
func hexI8(n int) string         { return ettest.HexI8(n) }

// sweepInput is the deterministic input of the quantized programs.
func sweepInput(shape []int64) interp.Value { return ettest.Input(shape...) }

// qprog is one quantized test program with its input shape and the
// tolerance of the delegated result against the interpreter on the
// unlowered IR (one output quantization step, or what its own test
// derives).
type qprog struct {
	name  string
	src   string
	shape []int64
	tol   float64
}

// reference parses q and returns it with the interpreter's first output on
// sweepInput.
func (q qprog) reference(t *testing.T) (*ir.Program, []float64) {
	t.Helper()
	ref := ettest.Parse(t, q.src, q.name+".fxir")
	res, err := interp.Run(ref, []interp.Value{sweepInput(q.shape)}, interp.Options{})
	if err != nil {
		t.Fatalf("interpreter: %v", err)
	}
	return ref, res.Outputs[0].(*interp.Tensor).Float64s()
}

// qBinarySrc: x and x·x quantized with different parameters, combined by
// first (aten.add.Tensor, aten.sub.Tensor), the result requantized with
// zero point zp and combined by second with the first operand (a chained
// quantized op reading the first one's qint8 output), then quantized.
func qBinarySrc(first string, zp int, second string) string {
	return fmt.Sprintf(`input x: user_input
output user_output
graph forward(%%x: f32[2, 3, 4]) {
  %%aq: i8[2, 3, 4] = quantized_decomposed.quantize_per_tensor.default(%%x, 0.01, 4, -128, 127, torch.int8)
  %%ad: f32[2, 3, 4] = quantized_decomposed.dequantize_per_tensor.default(%%aq, 0.01, 4, -128, 127, torch.int8)
  %%m: f32[2, 3, 4] = aten.mul.Tensor(%%x, %%x)
  %%bq: i8[2, 3, 4] = quantized_decomposed.quantize_per_tensor.default(%%m, 0.012, -100, -128, 127, torch.int8)
  %%bd: f32[2, 3, 4] = quantized_decomposed.dequantize_per_tensor.default(%%bq, 0.012, -100, -128, 127, torch.int8)
  %%s: f32[2, 3, 4] = %[1]s(%%ad, %%bd)
  %%sq: i8[2, 3, 4] = quantized_decomposed.quantize_per_tensor.default(%%s, 0.02, %[2]d, -128, 127, torch.int8)
  %%sd: f32[2, 3, 4] = quantized_decomposed.dequantize_per_tensor.default(%%sq, 0.02, %[2]d, -128, 127, torch.int8)
  %%t: f32[2, 3, 4] = %[3]s(%%sd, %%ad)
  %%tq: i8[2, 3, 4] = quantized_decomposed.quantize_per_tensor.default(%%t, 0.025, 7, -128, 127, torch.int8)
  %%td: f32[2, 3, 4] = quantized_decomposed.dequantize_per_tensor.default(%%tq, 0.025, 7, -128, 127, torch.int8)
  return %%td
}
`, first, zp, second)
}

var (
	// qaddSrc: a quantized add whose requantized sum is added again to the
	// first operand.
	qaddSrc = qBinarySrc("aten.add.Tensor", -20, "aten.add.Tensor")
	// qsubmulSrc: a quantized sub whose requantized difference is
	// multiplied by the first operand.
	qsubmulSrc = qBinarySrc("aten.sub.Tensor", 10, "aten.mul.Tensor")
)

// wantQDQPortable applies each edit (old, new text) to src once, lowers it
// for XNNPACK and fails when no dequantize is left on the portable kernel:
// the edited pattern must not be delegated.
func wantQDQPortable(t *testing.T, src string, edits map[string][2]string) {
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			p := ettest.Parse(t, strings.Replace(src, edit[0], edit[1], 1), "q.fxir")
			lower(t, p, "")
			found := false
			for _, n := range p.Main.Nodes() {
				found = found || n.Op.Info().Name == "quantized_decomposed.dequantize_per_tensor.out" // portable kernel
			}
			if !found {
				t.Fatalf("quantized pattern was delegated:\n%s", ir.Print(p))
			}
		})
	}
}

// qs8PerChannelSrc: the linear with a per-channel weight (axis 0 under the
// permute) or a bare [in, out] mm weight quantized along axis 1.
func qs8PerChannelSrc(bare bool) string {
	if bare {
		return fmt.Sprintf(`input p_w: parameter "w"
input p_s: constant_tensor "s"
input x: user_input
output user_output
weight "w": i8[4, 3] = inline("%s")
weight "s": f32[3] = inline("%s")
graph forward(%%p_w: i8[4, 3], %%p_s: f32[3], %%x: f32[5, 4]) {
  %%xq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.default(%%x, 0.015, 0, -128, 127, torch.int8)
  %%xd: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.default(%%xq, 0.015, 0, -128, 127, torch.int8)
  %%wd: f32[4, 3] = quantized_decomposed.dequantize_per_channel.default(%%p_w, %%p_s, None, -1, -127, 127, torch.int8)
  %%y: f32[5, 3] = aten.mm.default(%%xd, %%wd)
  %%yq: i8[5, 3] = quantized_decomposed.quantize_per_tensor.default(%%y, 0.02, 1, -128, 127, torch.int8)
  %%yd: f32[5, 3] = quantized_decomposed.dequantize_per_tensor.default(%%yq, 0.02, 1, -128, 127, torch.int8)
  return %%yd
}
`, hexI8(12), hexF32(0.004, 0.012, 0.008))
	}
	return fmt.Sprintf(`input p_w: parameter "w"
input p_s: constant_tensor "s"
input p_z: constant_tensor "z"
input p_b: parameter "b"
input x: user_input
output user_output
weight "w": i8[3, 4] = inline("%s")
weight "s": f32[3] = inline("%s")
weight "z": i64[3] = inline("%s")
weight "b": f32[3] = inline("%s")
graph forward(%%p_w: i8[3, 4], %%p_s: f32[3], %%p_z: i64[3], %%p_b: f32[3], %%x: f32[5, 4]) {
  %%xq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.default(%%x, 0.02, 3, -128, 127, torch.int8)
  %%xd: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.default(%%xq, 0.02, 3, -128, 127, torch.int8)
  %%wd: f32[3, 4] = quantized_decomposed.dequantize_per_channel.default(%%p_w, %%p_s, %%p_z, 0, -127, 127, torch.int8)
  %%wt: f32[4, 3] = aten.permute_copy.default(%%wd, [1, 0])
  %%y: f32[5, 3] = aten.addmm.default(%%p_b, %%xd, %%wt)
  %%yq: i8[5, 3] = quantized_decomposed.quantize_per_tensor.default(%%y, 0.01, -2, -128, 127, torch.int8)
  %%yd: f32[5, 3] = quantized_decomposed.dequantize_per_tensor.default(%%yq, 0.01, -2, -128, 127, torch.int8)
  return %%yd
}
`, hexI8(12), hexF32(0.01, 0.02, 0.005), hexI64(0, 0, 0), hexF32(0.1, -0.25, 0.05))
}

// qs8AddLinearSrc: a quantized add whose qint8 output feeds a quantized
// linear (mm).
func qs8AddLinearSrc() string {
	return fmt.Sprintf(`input p_w: parameter "w"
input x: user_input
output user_output
weight "w": i8[3, 4] = inline("%s")
graph forward(%%p_w: i8[3, 4], %%x: f32[5, 4]) {
  %%aq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.default(%%x, 0.01, 4, -128, 127, torch.int8)
  %%ad: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.default(%%aq, 0.01, 4, -128, 127, torch.int8)
  %%m: f32[5, 4] = aten.mul.Tensor(%%x, %%x)
  %%bq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.default(%%m, 0.012, -100, -128, 127, torch.int8)
  %%bd: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.default(%%bq, 0.012, -100, -128, 127, torch.int8)
  %%s: f32[5, 4] = aten.add.Tensor(%%ad, %%bd)
  %%sq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.default(%%s, 0.02, -20, -128, 127, torch.int8)
  %%sd: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.default(%%sq, 0.02, -20, -128, 127, torch.int8)
  %%wd: f32[3, 4] = quantized_decomposed.dequantize_per_tensor.default(%%p_w, 0.01, 0, -127, 127, torch.int8)
  %%wt: f32[4, 3] = aten.permute_copy.default(%%wd, [1, 0])
  %%y: f32[5, 3] = aten.mm.default(%%sd, %%wt)
  %%yq: i8[5, 3] = quantized_decomposed.quantize_per_tensor.default(%%y, 0.03, 0, -128, 127, torch.int8)
  %%yd: f32[5, 3] = quantized_decomposed.dequantize_per_tensor.default(%%yq, 0.03, 0, -128, 127, torch.int8)
  return %%yd
}
`, hexI8(12))
}

// qs8ConvAddSrc: a quantized convolution plus a quantized fp32-convolution
// result, the sum feeding another quantized convolution (NHWC qint8 chain).
func qs8ConvAddSrc() string {
	return fmt.Sprintf(`input p_w: parameter "w"
input p_w2: parameter "w2"
input p_w3: parameter "w3"
input x: user_input
output user_output
weight "w": i8[3, 2, 3, 3] = inline("%s")
weight "w2": f32[3, 2, 1, 1] = inline("%s")
weight "w3": i8[4, 3, 1, 1] = inline("%s")
graph forward(%%p_w: i8[3, 2, 3, 3], %%p_w2: f32[3, 2, 1, 1], %%p_w3: i8[4, 3, 1, 1], %%x: f32[1, 2, 5, 5]) {
  %%xq: i8[1, 2, 5, 5] = quantized_decomposed.quantize_per_tensor.default(%%x, 0.01, 0, -128, 127, torch.int8)
  %%xd: f32[1, 2, 5, 5] = quantized_decomposed.dequantize_per_tensor.default(%%xq, 0.01, 0, -128, 127, torch.int8)
  %%wd: f32[3, 2, 3, 3] = quantized_decomposed.dequantize_per_tensor.default(%%p_w, 0.02, 0, -127, 127, torch.int8)
  %%c: f32[1, 3, 5, 5] = aten.convolution.default(%%xd, %%wd, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  %%cq: i8[1, 3, 5, 5] = quantized_decomposed.quantize_per_tensor.default(%%c, 0.05, -3, -128, 127, torch.int8)
  %%cd: f32[1, 3, 5, 5] = quantized_decomposed.dequantize_per_tensor.default(%%cq, 0.05, -3, -128, 127, torch.int8)
  %%f: f32[1, 3, 5, 5] = aten.convolution.default(%%x, %%p_w2, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
  %%fq: i8[1, 3, 5, 5] = quantized_decomposed.quantize_per_tensor.default(%%f, 0.02, 5, -128, 127, torch.int8)
  %%fd: f32[1, 3, 5, 5] = quantized_decomposed.dequantize_per_tensor.default(%%fq, 0.02, 5, -128, 127, torch.int8)
  %%s: f32[1, 3, 5, 5] = aten.add.Tensor(%%cd, %%fd)
  %%sq: i8[1, 3, 5, 5] = quantized_decomposed.quantize_per_tensor.default(%%s, 0.06, 2, -128, 127, torch.int8)
  %%sd: f32[1, 3, 5, 5] = quantized_decomposed.dequantize_per_tensor.default(%%sq, 0.06, 2, -128, 127, torch.int8)
  %%w3d: f32[4, 3, 1, 1] = quantized_decomposed.dequantize_per_tensor.default(%%p_w3, 0.03, 0, -127, 127, torch.int8)
  %%c2: f32[1, 4, 5, 5] = aten.convolution.default(%%sd, %%w3d, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
  %%c2q: i8[1, 4, 5, 5] = quantized_decomposed.quantize_per_tensor.default(%%c2, 0.05, 0, -128, 127, torch.int8)
  %%c2d: f32[1, 4, 5, 5] = quantized_decomposed.dequantize_per_tensor.default(%%c2q, 0.05, 0, -128, 127, torch.int8)
  return %%c2d
}
`, hexI8(54), hexF32(0.5, -0.25, 0.75, 0.3, -0.6, 0.2), hexI8(12))
}

// qd8Rank3Src: a per-token dynamically quantized linear of rank 3 (the
// flattening / restoring view_copy pair folds into the fully-connected op).
func qd8Rank3Src() string {
	return fmt.Sprintf(`input p_w: parameter "w"
input p_ws: constant_tensor "ws"
input x: user_input
output user_output
weight "w": i8[3, 4] = inline("%s")
weight "ws": f32[3] = inline("%s")
graph forward(%%p_w: i8[3, 4], %%p_ws: f32[3], %%x: f32[2, 3, 4]) {
  %%s: f64[2, 3, 1], %%z: i64[2, 3, 1] = quantized_decomposed.choose_qparams_per_token_asymmetric.default(%%x, torch.int8)
  %%xq: i8[2, 3, 4] = quantized_decomposed.quantize_per_token.default(%%x, %%s, %%z, -128, 127, torch.int8)
  %%xd: f32[2, 3, 4] = quantized_decomposed.dequantize_per_token.default(%%xq, %%s, %%z, -128, 127, torch.int8, torch.float32)
  %%wd: f32[3, 4] = quantized_decomposed.dequantize_per_channel.default(%%p_w, %%p_ws, None, 0, -127, 127, torch.int8)
  %%wt: f32[4, 3] = aten.permute_copy.default(%%wd, [1, 0])
  %%xv: f32[6, 4] = aten.view_copy.default(%%xd, [6, 4])
  %%y: f32[6, 3] = aten.mm.default(%%xv, %%wt)
  %%yv: f32[2, 3, 3] = aten.view_copy.default(%%y, [2, 3, 3])
  return %%yv
}
`, hexI8(12), hexF32(0.01, 0.02, 0.005))
}

// wantExportError lowers src (name) for XNNPACK and emits it, and fails
// unless one of the two refuses it with an error naming each of want; what
// describes the bad input for the failure.
func wantExportError(t *testing.T, src, name, what string, want ...string) {
	t.Helper()
	p := ettest.Parse(t, src, name)
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.xnnpack")
	if err != nil {
		t.Fatal(err)
	}
	_, err = pm.Run(p, pl, nil, pm.Config{VerifyEach: true})
	if err == nil {
		if _, err = emit.Program(p, emit.Options{NoMetadataMethod: true}); err == nil {
			t.Fatalf("%s accepted", what)
		}
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %s", err, w)
		}
	}
}

// deconvCase is a quantized transposed convolution: weight
// [groups·I, O, kh, kw] dequantized per tensor (scales nil, scale 0.008) or
// per channel along axis, stride, padding and output_padding per dim.
type deconvCase struct {
	w           [4]int
	groups      int
	x, y        [4]int
	stride, pad [2]int
	outPad      [2]int
	scales      []float64
	axis        int
	bias        bool
}

func (c deconvCase) src() string {
	var b strings.Builder
	sh := func(s [4]int) string { return fmt.Sprintf("[%d, %d, %d, %d]", s[0], s[1], s[2], s[3]) }
	oc := c.groups * c.w[1]
	params := fmt.Sprintf("%%p_w: i8%s", sh(c.w))
	b.WriteString("input p_w: parameter \"w\"\n")
	if c.scales != nil {
		b.WriteString("input p_s: constant_tensor \"s\"\n")
		params += fmt.Sprintf(", %%p_s: f32[%d]", len(c.scales))
	}
	bname := "None"
	if c.bias {
		b.WriteString("input p_b: parameter \"b\"\n")
		params += fmt.Sprintf(", %%p_b: f32[%d]", oc)
		bname = "%p_b"
	}
	b.WriteString("input x: user_input\noutput user_output\n")
	fmt.Fprintf(&b, "weight \"w\": i8%s = inline(%q)\n", sh(c.w), hexI8(c.w[0]*c.w[1]*c.w[2]*c.w[3]))
	wdq := "quantized_decomposed.dequantize_per_tensor.default(%p_w, 0.008, 0, -127, 127, torch.int8)"
	if c.scales != nil {
		fmt.Fprintf(&b, "weight \"s\": f32[%d] = inline(%q)\n", len(c.scales), hexF32(c.scales...))
		wdq = fmt.Sprintf("quantized_decomposed.dequantize_per_channel.default(%%p_w, %%p_s, None, %d, -127, 127, torch.int8)", c.axis)
	}
	if c.bias {
		bs := make([]float64, oc)
		for i := range bs {
			bs[i] = 0.04 * float64(i%3-1)
		}
		fmt.Fprintf(&b, "weight \"b\": f32[%d] = inline(%q)\n", oc, hexF32(bs...))
	}
	fmt.Fprintf(&b, `graph forward(%s, %%x: f32%s) {
  %%xq: i8%[2]s = quantized_decomposed.quantize_per_tensor.default(%%x, 0.01, -4, -128, 127, torch.int8)
  %%xd: f32%[2]s = quantized_decomposed.dequantize_per_tensor.default(%%xq, 0.01, -4, -128, 127, torch.int8)
  %%wd: f32%[3]s = %[4]s
  %%y: f32%[5]s = aten.convolution.default(%%xd, %%wd, %[6]s, [%[8]d, %[9]d], [%[10]d, %[11]d], [1, 1], True, [%[12]d, %[13]d], %[7]d)
  %%yq: i8%[5]s = quantized_decomposed.quantize_per_tensor.default(%%y, 0.02, 5, -128, 127, torch.int8)
  %%yd: f32%[5]s = quantized_decomposed.dequantize_per_tensor.default(%%yq, 0.02, 5, -128, 127, torch.int8)
  return %%yd
}
`, params, sh(c.x), sh(c.w), wdq, sh(c.y), bname, c.groups, c.stride[0], c.stride[1], c.pad[0], c.pad[1], c.outPad[0], c.outPad[1])
	return b.String()
}

func (c deconvCase) shape() []int64 {
	return []int64{int64(c.x[0]), int64(c.x[1]), int64(c.x[2]), int64(c.x[3])}
}

var (
	// deconvPT: per-tensor weight, stride [2, 1], padding [1, 0],
	// output_padding [1, 0].
	deconvPT = deconvCase{w: [4]int{3, 4, 3, 2}, groups: 1, x: [4]int{1, 3, 4, 5}, y: [4]int{1, 4, 8, 6},
		stride: [2]int{2, 1}, pad: [2]int{1, 0}, outPad: [2]int{1, 0}, bias: true}
	// deconvPC: the same with per-output-channel weight scales (axis 1).
	deconvPC = deconvCase{w: [4]int{3, 4, 3, 2}, groups: 1, x: [4]int{2, 3, 4, 5}, y: [4]int{2, 4, 8, 6},
		stride: [2]int{2, 1}, pad: [2]int{1, 0}, outPad: [2]int{1, 0}, scales: []float64{0.004, 0.01, 0.007, 0.002}, axis: 1, bias: true}
	// deconvGroups: per-tensor weight, groups 2, stride 2, padding 1.
	deconvGroups = deconvCase{w: [4]int{4, 2, 3, 3}, groups: 2, x: [4]int{1, 4, 4, 4}, y: [4]int{1, 4, 7, 7},
		stride: [2]int{2, 2}, pad: [2]int{1, 1}}
)

// dynConvCase is a convolution with a dynamically quantized input
// (choose_qparams.tensor → quantize_per_tensor.tensor →
// dequantize_per_tensor.tensor) and a weight dequantized per output
// channel with scales.
type dynConvCase struct {
	w      [4]int
	groups int
	x, y   [4]int
	stride [2]int
	pad    [2]int
	scales []float64
	bias   bool
}

func (c dynConvCase) src() string {
	var b strings.Builder
	sh := func(s [4]int) string { return fmt.Sprintf("[%d, %d, %d, %d]", s[0], s[1], s[2], s[3]) }
	params := fmt.Sprintf("%%p_w: i8%s, %%p_s: f32[%d]", sh(c.w), len(c.scales))
	b.WriteString("input p_w: parameter \"w\"\ninput p_s: constant_tensor \"s\"\n")
	bname := "None"
	if c.bias {
		b.WriteString("input p_b: parameter \"b\"\n")
		params += fmt.Sprintf(", %%p_b: f32[%d]", c.w[0])
		bname = "%p_b"
	}
	b.WriteString("input x: user_input\noutput user_output\n")
	fmt.Fprintf(&b, "weight \"w\": i8%s = inline(%q)\n", sh(c.w), hexI8(c.w[0]*c.w[1]*c.w[2]*c.w[3]))
	fmt.Fprintf(&b, "weight \"s\": f32[%d] = inline(%q)\n", len(c.scales), hexF32(c.scales...))
	if c.bias {
		bs := make([]float64, c.w[0])
		for i := range bs {
			bs[i] = 0.05 * float64(i%3-1)
		}
		fmt.Fprintf(&b, "weight \"b\": f32[%d] = inline(%q)\n", c.w[0], hexF32(bs...))
	}
	fmt.Fprintf(&b, `graph forward(%s, %%x: f32%s) {
  %%s: f64[1], %%z: i64[1] = quantized_decomposed.choose_qparams.tensor(%%x, -128, 127, 1.1920928955078125e-07, torch.int8)
  %%xq: i8%[2]s = quantized_decomposed.quantize_per_tensor.tensor(%%x, %%s, %%z, -128, 127, torch.int8)
  %%xd: f32%[2]s = quantized_decomposed.dequantize_per_tensor.tensor(%%xq, %%s, %%z, -128, 127, torch.int8)
  %%wd: f32%[3]s = quantized_decomposed.dequantize_per_channel.default(%%p_w, %%p_s, None, 0, -127, 127, torch.int8)
  %%y: f32%[4]s = aten.convolution.default(%%xd, %%wd, %[5]s, [%[7]d, %[8]d], [%[9]d, %[10]d], [1, 1], False, [0, 0], %[6]d)
  return %%y
}
`, params, sh(c.x), sh(c.w), sh(c.y), bname, c.groups, c.stride[0], c.stride[1], c.pad[0], c.pad[1])
	return b.String()
}

func (c dynConvCase) shape() []int64 {
	return []int64{int64(c.x[0]), int64(c.x[1]), int64(c.x[2]), int64(c.x[3])}
}

// tol bounds the difference between the interpreter (one per-tensor scale
// s_x for x) and XNNPACK (per-row parameters, each row's scale at most
// s_x): every input element moves by at most s_x, so output channel o by
// at most Σ|w[o]|·s_w[o]·s_x.
func (c dynConvCase) tol() float64 {
	xs := sweepInput(c.shape()).(*interp.Tensor).Float64s()
	lo, hi := 0.0, 0.0
	for _, v := range xs {
		lo, hi = min(lo, v), max(hi, v)
	}
	sx := (hi - lo) / 255
	wb, _ := hex.DecodeString(hexI8(c.w[0] * c.w[1] * c.w[2] * c.w[3]))
	per := len(wb) / c.w[0]
	worst := 0.0
	for o := 0; o < c.w[0]; o++ {
		sum := 0.0
		for _, q := range wb[o*per : (o+1)*per] {
			sum += math.Abs(float64(int8(q)))
		}
		worst = max(worst, sum*c.scales[o]*sx)
	}
	return worst
}

var (
	// dynConvPC: stride [2, 1], padding [1, 0], bias, batch 2.
	dynConvPC = dynConvCase{w: [4]int{4, 3, 3, 2}, groups: 1, x: [4]int{2, 3, 6, 5}, y: [4]int{2, 4, 3, 4},
		stride: [2]int{2, 1}, pad: [2]int{1, 0}, scales: []float64{0.004, 0.01, 0.007, 0.002}, bias: true}
	// dynConvGroups: groups 2 (not depthwise), padding 1, no bias.
	dynConvGroups = dynConvCase{w: [4]int{4, 2, 3, 3}, groups: 2, x: [4]int{1, 4, 5, 5}, y: [4]int{1, 4, 5, 5},
		stride: [2]int{1, 1}, pad: [2]int{1, 1}, scales: []float64{0.006, 0.003, 0.009, 0.005}}
)
