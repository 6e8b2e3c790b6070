package xnnpack_test

import (
	"encoding/hex"
	"fmt"
	"testing"

	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// hexI8v is int8 values as inline weight hex.
func hexI8v(v ...int8) string {
	b := make([]byte, len(v))
	for i, x := range v {
		b[i] = byte(x)
	}
	return hex.EncodeToString(b)
}

// qc4wWeight is a [3, 5] weight in the 4-bit range (an odd number of input
// channels: each packed row is padded to a whole byte).
var qc4wWeight = hexI8v(-8, 7, 3, -1, 0, 5, -6, 2, 1, -3, 4, -2, -7, 6, 1)

// qc4wSrc: a linear whose weight is dequantize_per_channel of int8 storage
// with the quant range [-8, 7] (4-bit per channel, axis 0 under linear's
// permute), with a static qint8 input and output (dynamic false) or a
// per-token dynamically quantized input and fp32 output (dynamic true).
func qc4wSrc(dynamic bool) string {
	in := `  %%xq: i8[5, 5] = quantized_decomposed.quantize_per_tensor.default(%%x, 0.02, 3, -128, 127, torch.int8)
  %%xd: f32[5, 5] = quantized_decomposed.dequantize_per_tensor.default(%%xq, 0.02, 3, -128, 127, torch.int8)
`
	out := `  %%yq: i8[5, 3] = quantized_decomposed.quantize_per_tensor.default(%%y, 0.01, -2, -128, 127, torch.int8)
  %%yd: f32[5, 3] = quantized_decomposed.dequantize_per_tensor.default(%%yq, 0.01, -2, -128, 127, torch.int8)
  return %%yd
`
	if dynamic {
		in = `  %%s: f64[5, 1], %%z: i64[5, 1] = quantized_decomposed.choose_qparams_per_token_asymmetric.default(%%x, torch.int8)
  %%xq: i8[5, 5] = quantized_decomposed.quantize_per_token.default(%%x, %%s, %%z, -128, 127, torch.int8)
  %%xd: f32[5, 5] = quantized_decomposed.dequantize_per_token.default(%%xq, %%s, %%z, -128, 127, torch.int8, torch.float32)
`
		out = "  return %%y\n"
	}
	return fmt.Sprintf(`input p_w: parameter "w"
input p_s: constant_tensor "s"
input p_z: constant_tensor "z"
input p_b: parameter "b"
input x: user_input
output user_output
weight "w": i8[3, 5] = inline("%s")
weight "s": f32[3] = inline("%s")
weight "z": i64[3] = inline("%s")
weight "b": f32[3] = inline("%s")
graph forward(%%p_w: i8[3, 5], %%p_s: f32[3], %%p_z: i64[3], %%p_b: f32[3], %%x: f32[5, 5]) {
`+in+`  %%wd: f32[3, 5] = quantized_decomposed.dequantize_per_channel.default(%%p_w, %%p_s, %%p_z, 0, -8, 7, torch.int8)
  %%wt: f32[5, 3] = aten.permute_copy.default(%%wd, [1, 0])
  %%y: f32[5, 3] = aten.addmm.default(%%p_b, %%xd, %%wt)
`+out+`}
`, qc4wWeight, hexF32(0.02, 0.03, 0.015), hexI64(0, 0, 0), hexF32(0.1, -0.25, 0.05))
}

// wantQC4Filter checks the fully-connected filter: qcint4 [3, 5] with the
// per-channel scales along dim 0 and 3 rows of 3 packed bytes.
func wantQC4Filter(t *testing.T, g *xnnfb.XNNGraphT) {
	t.Helper()
	fc := nodeOf(t, g, xnnfb.XNodeUnionXNNFullyConnected).(*xnnfb.XNNFullyConnectedT)
	wantQ(t, g, "filter", fc.FilterId, xnnfb.XNNDatatypexnn_datatype_qcint4, []uint32{3, 5}, 0, []float32{0.02, 0.03, 0.015}, 0)
	tv := g.Xvalues[fc.FilterId].XvalueUnion.Value.(*xnnfb.XNNQuantizedTensorValueT).TensorValue
	if c := g.ConstantData[tv.ConstantBufferIdx]; c.Size != 9 {
		t.Errorf("filter data %d bytes, want 9 (3 rows of ceil(5/2))", c.Size)
	}
}

// A static qint8 linear with qc4w weights: qcint4 filter, qcint32 bias,
// within one output step of the interpreter on the unlowered IR.
func TestQS8QC4WLinear(t *testing.T) {
	wantQC4Filter(t, qlower(t, qc4wSrc(false), []int64{5, 5}, 0.01))
}

// A dynamically quantized linear (qd8, per token) with qc4w weights:
// qcint4 filter, fp32 bias and output; XNNPACK and the interpreter
// quantize the input per row alike.
func TestQD8QC4WLinear(t *testing.T) {
	wantQC4Filter(t, qlower(t, qc4wSrc(true), []int64{5, 5}, 1e-5))
}

// The packing, value by value: v+8, even index low, odd rows padded with
// the code of 0.
func TestPackQC4(t *testing.T) {
	c := xnnExport(t, qc4wSrc(false), "qc4w_pack", "", inputs(sweepInput([]int64{5, 5})))
	g := c.f.Methods[0].Delegates[0].XNNPACK.Graph
	fc := nodeOf(t, g, xnnfb.XNodeUnionXNNFullyConnected).(*xnnfb.XNNFullyConnectedT)
	tv := g.Xvalues[fc.FilterId].XvalueUnion.Value.(*xnnfb.XNNQuantizedTensorValueT).TensorValue
	key := g.ConstantData[tv.ConstantBufferIdx].NamedKey
	var got []byte
	for _, nd := range c.f.Program.NamedData {
		if nd.Key == key {
			got = c.f.Segments[nd.SegmentIndex].Data[:9]
		}
	}
	// Rows (-8, 7, 3, -1, 0), (5, -6, 2, 1, -3), (4, -2, -7, 6, 1).
	want := []byte{0x0 | 0xf<<4, 0xb | 0x7<<4, 0x8 | 0x8<<4, 0xd | 0x2<<4, 0xa | 0x9<<4, 0x5 | 0x8<<4, 0xc | 0x6<<4, 0x1 | 0xe<<4, 0x9 | 0x8<<4}
	if hex.EncodeToString(got) != hex.EncodeToString(want) {
		t.Errorf("packed filter %x, want %x", got, want)
	}
}
