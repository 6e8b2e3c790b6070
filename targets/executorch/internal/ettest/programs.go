package ettest

import "fmt"

// QS8Linear is a PT2E static per-tensor quantized linear: input and
// output quantized per tensor, an int8 weight [3, 4] dequantized per
// tensor, permute_copy + addmm, on an input f32[5, 4]. The portable
// quantized kernels and the XNNPACK delegate both run it.
func QS8Linear() string {
	return fmt.Sprintf(`input p_w: parameter "w"
input p_b: parameter "b"
input x: user_input
output user_output
weight "w": i8[3, 4] = inline("%s")
weight "b": f32[3] = inline("%s")
graph forward(%%p_w: i8[3, 4], %%p_b: f32[3], %%x: f32[5, 4]) {
  %%xq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.default(%%x, 0.02, 3, -128, 127, torch.int8)
  %%xd: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.default(%%xq, 0.02, 3, -128, 127, torch.int8)
  %%wd: f32[3, 4] = quantized_decomposed.dequantize_per_tensor.default(%%p_w, 0.01, 0, -127, 127, torch.int8)
  %%wt: f32[4, 3] = aten.permute_copy.default(%%wd, [1, 0])
  %%y: f32[5, 3] = aten.addmm.default(%%p_b, %%xd, %%wt)
  %%yq: i8[5, 3] = quantized_decomposed.quantize_per_tensor.default(%%y, 0.01, -2, -128, 127, torch.int8)
  %%yd: f32[5, 3] = quantized_decomposed.dequantize_per_tensor.default(%%yq, 0.01, -2, -128, 127, torch.int8)
  return %%yd
}
`, HexI8(12), HexF32(0.1, -0.25, 0.05))
}
