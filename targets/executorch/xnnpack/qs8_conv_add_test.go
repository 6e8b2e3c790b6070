package xnnpack_test

import (
	"fmt"
	"testing"

	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// A quantized convolution's NHWC qint8 output added to a quantized fp32
// convolution result (qint8 NCHW, transposed), the sum feeding another
// quantized convolution: the add runs in NHWC on qint8 values and the
// dequantized intermediates get no fp32 XNNConvert.
func TestQS8ConvAdd(t *testing.T) {
	src := fmt.Sprintf(`input p_w: parameter "w"
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
	// One step of the sum (0.06) moves the output by at most 3·127·0.03·0.06.
	g := qlower(t, src, []int64{1, 2, 5, 5}, 3*127*0.03*0.06+0.05)
	add := nodeOf(t, g, xnnfb.XNodeUnionXNNAdd).(*xnnfb.XNNNode2x1T)
	qi8 := xnnfb.XNNDatatypexnn_datatype_qint8
	nhwc := []uint32{1, 5, 5, 3}
	wantQ(t, g, "add operand 1", add.Input1Id, qi8, nhwc, 0.05, nil, 0)
	wantQ(t, g, "add operand 2", add.Input2Id, qi8, nhwc, 0.02, nil, 0)
	wantQ(t, g, "add output", add.OutputId, qi8, nhwc, 0.06, nil, 0)
	var convs []*xnnfb.XNNNodeConvT
	converts := 0
	for _, n := range g.Xnodes {
		switch n.XnodeUnion.Type {
		case xnnfb.XNodeUnionXNNConv2d:
			convs = append(convs, n.XnodeUnion.Value.(*xnnfb.XNNNodeConvT))
		case xnnfb.XNodeUnionXNNConvert:
			converts++
		}
	}
	if len(convs) != 3 {
		t.Fatalf("%d XNNConv2d nodes, want 3", len(convs))
	}
	if convs[0].OutputId != add.Input1Id {
		t.Errorf("add operand 1 is %d, want the quantized convolution's output %d", add.Input1Id, convs[0].OutputId)
	}
	if convs[2].Input1Id != add.OutputId {
		t.Errorf("second quantized convolution reads %d, want the add's qint8 output %d", convs[2].Input1Id, add.OutputId)
	}
	// x → qint8, f → qint8, output → fp32: no fp32 forms of cd and sd.
	if converts != 3 {
		t.Errorf("%d XNNConvert nodes, want 3", converts)
	}
}

// A quantized add feeding a quantized linear: the fully-connected op reads
// the add's qint8 output (no fp32 round trip in between).
func TestQS8AddLinear(t *testing.T) {
	src := fmt.Sprintf(`input p_w: parameter "w"
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
	// One step of the sum (0.02) moves the output by at most 4·127·0.01·0.02.
	g := qlower(t, src, []int64{5, 4}, 4*127*0.01*0.02+0.03)
	add := nodeOf(t, g, xnnfb.XNodeUnionXNNAdd).(*xnnfb.XNNNode2x1T)
	fc := nodeOf(t, g, xnnfb.XNodeUnionXNNFullyConnected).(*xnnfb.XNNFullyConnectedT)
	if fc.Input1Id != add.OutputId {
		t.Errorf("fully-connected reads %d, want the add's qint8 output %d", fc.Input1Id, add.OutputId)
	}
	wantQ(t, g, "fc input", fc.Input1Id, xnnfb.XNNDatatypexnn_datatype_qint8, []uint32{5, 4}, 0.02, nil, 0)
}
