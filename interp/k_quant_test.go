package interp

import (
	"testing"

	"github.com/fxport/fxport/ir"
)

// TestQuantizePerTensor checks rounding half to even, the zero point,
// clamping to [quant_min, quant_max] and the round trip through dequantize.
func TestQuantizePerTensor(t *testing.T) {
	out := runIR(t, `graph forward(%x: f32[6]) {
  %q: i8[6] = quantized_decomposed.quantize_per_tensor.default(%x, 0.5, 3, -128, 127, torch.int8)
  %d: f32[6] = quantized_decomposed.dequantize_per_tensor.default(%q, 0.5, 3, -128, 127, torch.int8)
  return %q, %d
}
`, f32(sh(6), 0.25, 0.75, -1, 100, -100, 1.3))
	// x/0.5 = 0.5, 1.5, -2, 200, -200, 2.6 → round-even 0, 2, -2, 200, -200, 3 → +3, clamp.
	wantT(t, out[0], ir.Int8, sh(6), 3, 5, 1, 127, -128, 6)
	wantT(t, out[1], ir.Float32, sh(6), 0, 1, -1, 62, -65.5, 1.5)
}

// TestQuantizePerChannel checks per-channel scales and zero points along axis 1.
func TestQuantizePerChannel(t *testing.T) {
	out := runIR(t, `graph forward(%x: f32[2, 2], %s: f32[2], %z: i64[2]) {
  %q: i8[2, 2] = quantized_decomposed.quantize_per_channel.default(%x, %s, %z, 1, -128, 127, torch.int8)
  %d: f32[2, 2] = quantized_decomposed.dequantize_per_channel.default(%q, %s, %z, 1, -128, 127, torch.int8)
  return %q, %d
}
`, f32(sh(2, 2), 1, 1, -2, 3), f32(sh(2), 0.5, 0.25), i64(sh(2), 0, -1))
	wantT(t, out[0], ir.Int8, sh(2, 2), 2, 3, -4, 11)
	wantT(t, out[1], ir.Float32, sh(2, 2), 1, 1, -2, 3)
}
