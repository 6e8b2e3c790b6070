package xnnpack_test

import (
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
)

// A quantized mm with a bare [in, out] int8 weight (no permute, no bias):
// the filter is transposed to [out, in]; the runner matches the
// interpreter within one output quantization step.
func TestQS8MMBareWeight(t *testing.T) {
	src := `input p_w: parameter "w"
input x: user_input
output user_output
weight "w": i8[3, 4] = inline("01f27f8003fd10e0407f0c81")
graph forward(%p_w: i8[3, 4], %x: f32[5, 3]) {
  %xq: i8[5, 3] = quantized_decomposed.quantize_per_tensor.default(%x, 0.02, 3, -128, 127, torch.int8)
  %xd: f32[5, 3] = quantized_decomposed.dequantize_per_tensor.default(%xq, 0.02, 3, -128, 127, torch.int8)
  %wd: f32[3, 4] = quantized_decomposed.dequantize_per_tensor.default(%p_w, 0.01, 0, -127, 127, torch.int8)
  %y: f32[5, 4] = aten.mm.default(%xd, %wd)
  %yq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.default(%y, 0.004, -5, -128, 127, torch.int8)
  %yd: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.default(%yq, 0.004, -5, -128, 127, torch.int8)
  return %yd
}
`
	xs := make([]float64, 15)
	for i := range xs {
		xs[i] = math.Cos(float64(i*5+2)) * 1.5
	}
	c := xnnExport(t, src, "mm", "", inputs(interp.FromFloat64(ir.Float32, []int64{5, 3}, xs)))
	if got := strings.Join(delegateKinds(c.f), " "); got != "XNNConvert XNNFullyConnected XNNConvert" {
		t.Fatalf("nodes %s", got)
	}
	wantWithin(t, c.run(t), c.want, within(0.004*1.0001), "")
}

// quantize/dequantize outside the fully-connected pattern stay portable,
// and so does a quantized mm whose output is not re-quantized.
func TestQS8OutsidePatternStaysPortable(t *testing.T) {
	for name, src := range map[string]string{
		"qdq-relu": `input x: user_input
output user_output
graph forward(%x: f32[2, 3]) {
  %q: i8[2, 3] = quantized_decomposed.quantize_per_tensor.default(%x, 0.1, 0, -128, 127, torch.int8)
  %d: f32[2, 3] = quantized_decomposed.dequantize_per_tensor.default(%q, 0.1, 0, -128, 127, torch.int8)
  %r: f32[2, 3] = aten.relu.default(%d)
  return %r
}
`,
		"fp32-output": `input p_w: parameter "w"
input x: user_input
output user_output
weight "w": i8[3, 2] = inline("01020304fe05")
graph forward(%p_w: i8[3, 2], %x: f32[2, 3]) {
  %q: i8[2, 3] = quantized_decomposed.quantize_per_tensor.default(%x, 0.1, 0, -128, 127, torch.int8)
  %d: f32[2, 3] = quantized_decomposed.dequantize_per_tensor.default(%q, 0.1, 0, -128, 127, torch.int8)
  %wd: f32[3, 2] = quantized_decomposed.dequantize_per_tensor.default(%p_w, 0.05, 0, -127, 127, torch.int8)
  %y: f32[2, 2] = aten.mm.default(%d, %wd)
  return %y
}
`,
	} {
		t.Run(name, func(t *testing.T) {
			p, err := ir.Parse([]byte(src), name+".fxir")
			if err != nil {
				t.Fatal(err)
			}
			lower(t, p, "")
			text := ir.Print(p)
			if !strings.Contains(text, "decomposed.quantize_per_tensor") || !strings.Contains(text, "dequantize_per_tensor") {
				t.Errorf("quantize/dequantize were delegated:\n%s", text)
			}
		})
	}
}
