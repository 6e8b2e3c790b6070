package interp

import (
	"testing"

	"github.com/fxport/fxport/ir"
)

// TestChooseQparamsTensor: the range [-1, 2] gives scale 3/255 and zero
// point -128 − round(-1/scale) = -43; quantize/dequantize .tensor read them.
func TestChooseQparamsTensor(t *testing.T) {
	out := runIR(t, `graph forward(%x: f32[3]) {
  %s: f64[1], %z: i64[1] = quantized_decomposed.choose_qparams.tensor(%x, -128, 127, 1.1920928955078125e-07, torch.int8)
  %q: i8[3] = quantized_decomposed.quantize_per_tensor.tensor(%x, %s, %z, -128, 127, torch.int8)
  %d: f32[3] = quantized_decomposed.dequantize_per_tensor.tensor(%q, %s, %z, -128, 127, torch.int8)
  return %s, %z, %q, %d
}
`, f32(sh(3), -1, 0.5, 2))
	s := float64(float32(3.0 / 255))
	wantT(t, out[0], ir.Float64, sh(1), s)
	wantT(t, out[1], ir.Int64, sh(1), -43)
	// 0.5/s = 42.5 → 42 (half to even) − 43.
	wantT(t, out[2], ir.Int8, sh(3), -128, -1, 127)
	wantT(t, out[3], ir.Float32, sh(3), -85*s, 42*s, 170*s)
}

// TestChooseQparamsAllZero: a zero tensor falls back to scale eps.
func TestChooseQparamsAllZero(t *testing.T) {
	out := runIR(t, `graph forward(%x: f32[2]) {
  %s: f64[1], %z: i64[1] = quantized_decomposed.choose_qparams.tensor(%x, -128, 127, 0.5, torch.int8)
  return %s, %z
}
`, f32(sh(2), 0, 0))
	wantT(t, out[0], ir.Float64, sh(1), 0.5)
	wantT(t, out[1], ir.Int64, sh(1), -128)
}

// TestPerToken: per-row asymmetric parameters, quantize and dequantize.
func TestPerToken(t *testing.T) {
	out := runIR(t, `graph forward(%x: f32[2, 3]) {
  %s: f64[2, 1], %z: i64[2, 1] = quantized_decomposed.choose_qparams_per_token_asymmetric.default(%x, torch.int8)
  %q: i8[2, 3] = quantized_decomposed.quantize_per_token.default(%x, %s, %z, -128, 127, torch.int8)
  %d: f32[2, 3] = quantized_decomposed.dequantize_per_token.default(%q, %s, %z, -128, 127, torch.int8, torch.float32)
  return %s, %z, %q, %d
}
`, f32(sh(2, 3), -1, 0.5, 2, 0, 1, 2.55))
	s0, s1 := float64(float32(3.0/255)), float64(float32(float32(2.55)/255))
	wantT(t, out[0], ir.Float64, sh(2, 1), s0, s1)
	// Row 0: min error side wins, zp = -128 + 85; row 1: min is 0, zp = -128.
	wantT(t, out[1], ir.Int64, sh(2, 1), -43, -128)
	wantT(t, out[2], ir.Int8, sh(2, 3), -128, -1, 127, -128, -28, 127)
	wantT(t, out[3], ir.Float32, sh(2, 3), -85*s0, 42*s0, 170*s0, 0, 100*s1, 255*s1)
}

// TestDequantizePerChannelGroup: groups of 2 along the rows of a [2, 4]
// weight, with and without zero points.
func TestDequantizePerChannelGroup(t *testing.T) {
	out := runIR(t, `graph forward(%w: i8[2, 4], %s: f32[2, 2], %z: i64[2, 2]) {
  %d: f32[2, 4] = quantized_decomposed.dequantize_per_channel_group.default(%w, %s, None, -8, 7, torch.int8, 2, torch.float32)
  %e: f32[2, 4] = quantized_decomposed.dequantize_per_channel_group.default(%w, %s, %z, -8, 7, torch.int8, 2, torch.float32)
  return %d, %e
}
`, FromInt64(ir.Int8, sh(2, 4), []int64{1, -2, 3, 7, -8, 0, 4, 5}), f32(sh(2, 2), 0.5, 0.25, 2, 1), i64(sh(2, 2), 0, 1, -1, 0))
	wantT(t, out[0], ir.Float32, sh(2, 4), 0.5, -1, 0.75, 1.75, -16, 0, 4, 5)
	wantT(t, out[1], ir.Float32, sh(2, 4), 0.5, -1, 0.5, 1.5, -14, 2, 4, 5)
	if _, err := runIRErr(t, `graph forward(%w: i8[2, 3], %s: f32[2, 2]) {
  %d: f32[2, 3] = quantized_decomposed.dequantize_per_channel_group.default(%w, %s, None, -8, 7, torch.int8, 2, torch.float32)
  return %d
}
`, FromInt64(ir.Int8, sh(2, 3), []int64{1, 2, 3, 4, 5, 6}), f32(sh(2, 2), 1, 1, 1, 1)); err == nil {
		t.Error("3 input channels in groups of 2 was accepted")
	}
}
