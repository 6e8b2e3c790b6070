package xnnpack_test

import "testing"

// qPoolSrc: x quantized, max pooled (max_pool2d_with_indices, indices
// unused: the edge spelling) (its output quantized like its input,
// as PT2E's shared observers give it), then mean over H and W requantized
// with other parameters: the max pooling's NHWC qint8 output feeds the
// global average pooling with no transpose and no fp32 round trip.
const qPoolSrc = `input x: user_input
output user_output
graph forward(%x: f32[1, 3, 6, 5]) {
  %xq: i8[1, 3, 6, 5] = quantized_decomposed.quantize_per_tensor.default(%x, 0.02, 3, -128, 127, torch.int8)
  %xd: f32[1, 3, 6, 5] = quantized_decomposed.dequantize_per_tensor.default(%xq, 0.02, 3, -128, 127, torch.int8)
  %m: f32[1, 3, 3, 2], %mi: i64[1, 3, 3, 2] = aten.max_pool2d_with_indices.default(%xd, [2, 2], [2, 2])
  %mq: i8[1, 3, 3, 2] = quantized_decomposed.quantize_per_tensor.default(%m, 0.02, 3, -128, 127, torch.int8)
  %md: f32[1, 3, 3, 2] = quantized_decomposed.dequantize_per_tensor.default(%mq, 0.02, 3, -128, 127, torch.int8)
  %g: f32[1, 3, 1, 1] = aten.mean.dim(%md, [-1, -2], True)
  %gq: i8[1, 3, 1, 1] = quantized_decomposed.quantize_per_tensor.default(%g, 0.01, -5, -128, 127, torch.int8)
  %gd: f32[1, 3, 1, 1] = quantized_decomposed.dequantize_per_tensor.default(%gq, 0.01, -5, -128, 127, torch.int8)
  return %gd
}
`

// The quantized pooling chain is one delegate: XNNConvert to qint8, one
// transpose into NHWC, qint8 max and global average pooling, XNNConvert
// back; it matches the interpreter on the unlowered IR within one output
// step.
func TestQS8Pooling(t *testing.T) {
	c := xnnExport(t, qPoolSrc, "qs8_pool", "", inputs(sweepInput([]int64{1, 3, 6, 5})))
	wantAllDelegated(t, c.p)
	kinds := delegateKinds(c.f)
	for kind, want := range map[string]int{"XNNConvert": 2, "XNNStaticTranspose": 1, "XNNMaxPooling2d": 1, "XNNGlobalAvgPooling2d": 1} {
		if got := countKind(kinds, kind); got != want {
			t.Errorf("%d %s, want %d: %v", got, kind, want, kinds)
		}
	}
	wantWithin(t, c.run(t), c.want, within(0.0101), "")
}

// Patterns exir does not claim quantized keep their q/dq portable: a max
// pooling requantized with other parameters (XNNPACK's qint8 max pooling
// keeps the input's), a quantized avg_pool2d (AvgPoolingConfig is fp32
// only), a mean over other dims.
func TestQS8PoolingPortable(t *testing.T) {
	wantQDQPortable(t, qPoolSrc, map[string][2]string{
		"maxpool-requantized": {"(%m, 0.02, 3, -128, 127, torch.int8)\n  %md: f32[1, 3, 3, 2] = quantized_decomposed.dequantize_per_tensor.default(%mq, 0.02,", "(%m, 0.03, 3, -128, 127, torch.int8)\n  %md: f32[1, 3, 3, 2] = quantized_decomposed.dequantize_per_tensor.default(%mq, 0.03,"},
		"avg-pool":            {"%m: f32[1, 3, 3, 2], %mi: i64[1, 3, 3, 2] = aten.max_pool2d_with_indices.default(%xd, [2, 2], [2, 2])", "%m: f32[1, 3, 3, 2] = aten.avg_pool2d.default(%xd, [2, 2], [2, 2], [0, 0], False, False)"},
	})
}
