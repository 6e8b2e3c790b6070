package xnnpack_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// qlower lowers src, checks that nothing is left outside one delegate,
// runs the file against the interpreter on the unlowered IR within one
// output quantization step, and returns the delegate graph.
func qlower(t *testing.T, src string, shape []int64, step float64) *xnnfb.XNNGraphT {
	t.Helper()
	c := xnnExport(t, src, "q", "", inputs(sweepInput(shape)))
	wantAllDelegated(t, c.p)
	wantWithin(t, c.run(t), c.want, within(step*1.0001), "")
	wantDistinct(t, c.want[0])
	return c.f.Methods[0].Delegates[0].XNNPACK.Graph
}

// nodeOf returns the graph's only node of kind k.
func nodeOf(t *testing.T, g *xnnfb.XNNGraphT, k xnnfb.XNodeUnion) interface{} {
	t.Helper()
	var out interface{}
	for _, n := range g.Xnodes {
		if n.XnodeUnion.Type == k {
			if out != nil {
				t.Fatalf("two %s nodes", k)
			}
			out = n.XnodeUnion.Value
		}
	}
	if out == nil {
		t.Fatalf("no %s node", k)
	}
	return out
}

// wantQ checks value id's datatype, dims and quantization: per-tensor
// scale (scales nil) or per-channel scales along dim.
func wantQ(t *testing.T, g *xnnfb.XNNGraphT, what string, id uint32, dt xnnfb.XNNDatatype, dims []uint32, scale float32, scales []float32, dim int32) {
	t.Helper()
	q, ok := g.Xvalues[id].XvalueUnion.Value.(*xnnfb.XNNQuantizedTensorValueT)
	if !ok {
		t.Fatalf("%s (id %d) is not quantized", what, id)
	}
	if q.TensorValue.Datatype != dt || fmt.Sprint(q.TensorValue.Dims) != fmt.Sprint(dims) {
		t.Errorf("%s: %s %v, want %s %v", what, q.TensorValue.Datatype, q.TensorValue.Dims, dt, dims)
	}
	switch p := q.QuantParams.Value.(type) {
	case *xnnfb.PerTensorQuantT:
		if scales != nil || p.Scale != scale || p.ZeroPoint != 0 && dt != xnnfb.XNNDatatypexnn_datatype_qint8 {
			t.Errorf("%s: per-tensor %+v, want scale %g / per-channel %v", what, p, scale, scales)
		}
	case *xnnfb.PerChannelQuantT:
		if scales == nil || fmt.Sprint(p.Scale) != fmt.Sprint(scales) || p.ChannelDim != dim || p.ScaleBufferIdx != 0 {
			t.Errorf("%s: per-channel %+v, want scales %v dim %d", what, p, scales, dim)
		}
	default:
		t.Errorf("%s: quant params %s", what, q.QuantParams.Type)
	}
}

// A linear (permute [1, 0] + addmm) with weights quantized per output
// channel: qcint8 [out, in] filter along dim 0, qcint32 bias with scales
// s_x·s_w[c].
func TestQS8PerChannelLinear(t *testing.T) {
	ws := []float64{0.01, 0.02, 0.005} // qs8PerChannelSrc's weight scales
	src := qs8PerChannelSrc(false)
	g := qlower(t, src, []int64{5, 4}, 0.01)
	fc := nodeOf(t, g, xnnfb.XNodeUnionXNNFullyConnected).(*xnnfb.XNNFullyConnectedT)
	f32s := []float32{float32(ws[0]), float32(ws[1]), float32(ws[2])}
	wantQ(t, g, "filter", fc.FilterId, xnnfb.XNNDatatypexnn_datatype_qcint8, []uint32{3, 4}, 0, f32s, 0)
	bs := make([]float32, 3)
	for i, s := range f32s {
		bs[i] = float32(0.02) * s
	}
	wantQ(t, g, "bias", fc.BiasId, xnnfb.XNNDatatypexnn_datatype_qcint32, []uint32{3}, 0, bs, 0)
	wantQ(t, g, "input", fc.Input1Id, xnnfb.XNNDatatypexnn_datatype_qint8, []uint32{5, 4}, 0.02, nil, 0)
	wantQ(t, g, "output", fc.OutputId, xnnfb.XNNDatatypexnn_datatype_qint8, []uint32{5, 3}, 0.01, nil, 0)
}

// A bare [in, out] weight quantized per channel along axis 1 (the output
// channels) is transposed to [out, in] with channel_dim 0.
func TestQS8PerChannelMMBare(t *testing.T) {
	src := fmt.Sprintf(`input p_w: parameter "w"
input p_s: constant_tensor "s"
input x: user_input
output user_output
weight "w": i8[4, 2] = inline("%s")
weight "s": f32[2] = inline("%s")
graph forward(%%p_w: i8[4, 2], %%p_s: f32[2], %%x: f32[3, 4]) {
  %%xq: i8[3, 4] = quantized_decomposed.quantize_per_tensor.default(%%x, 0.015, 0, -128, 127, torch.int8)
  %%xd: f32[3, 4] = quantized_decomposed.dequantize_per_tensor.default(%%xq, 0.015, 0, -128, 127, torch.int8)
  %%wd: f32[4, 2] = quantized_decomposed.dequantize_per_channel.default(%%p_w, %%p_s, None, -1, -127, 127, torch.int8)
  %%y: f32[3, 2] = aten.mm.default(%%xd, %%wd)
  %%yq: i8[3, 2] = quantized_decomposed.quantize_per_tensor.default(%%y, 0.02, 1, -128, 127, torch.int8)
  %%yd: f32[3, 2] = quantized_decomposed.dequantize_per_tensor.default(%%yq, 0.02, 1, -128, 127, torch.int8)
  return %%yd
}
`, hexI8(8), hexF32(0.004, 0.012))
	g := qlower(t, src, []int64{3, 4}, 0.02)
	fc := nodeOf(t, g, xnnfb.XNodeUnionXNNFullyConnected).(*xnnfb.XNNFullyConnectedT)
	wantQ(t, g, "filter", fc.FilterId, xnnfb.XNNDatatypexnn_datatype_qcint8, []uint32{2, 4}, 0, []float32{0.004, 0.012}, 0)
	if fc.BiasId != math.MaxUint32 {
		t.Errorf("bias id %d, want none", fc.BiasId)
	}
}

// convSrc is a quantized convolution: weight dequantized per tensor
// (scales == nil) or per channel along axis 0.
func convSrc(wshape [4]int, groups int, x [4]int, y [4]int, scales []float64, bias bool) string {
	var b strings.Builder
	nw := wshape[0] * wshape[1] * wshape[2] * wshape[3]
	sh := func(s [4]int) string { return fmt.Sprintf("[%d, %d, %d, %d]", s[0], s[1], s[2], s[3]) }
	fmt.Fprintf(&b, "input p_w: parameter \"w\"\n")
	params := fmt.Sprintf("%%p_w: i8%s", sh(wshape))
	if scales != nil {
		b.WriteString("input p_s: constant_tensor \"s\"\ninput p_z: constant_tensor \"z\"\n")
		params += fmt.Sprintf(", %%p_s: f32[%d], %%p_z: i64[%d]", len(scales), len(scales))
	}
	bname := "None"
	if bias {
		b.WriteString("input p_b: parameter \"b\"\n")
		params += fmt.Sprintf(", %%p_b: f32[%d]", wshape[0])
		bname = "%p_b"
	}
	b.WriteString("input x: user_input\noutput user_output\n")
	fmt.Fprintf(&b, "weight \"w\": i8%s = inline(%q)\n", sh(wshape), hexI8(nw))
	wdq := fmt.Sprintf("quantized_decomposed.dequantize_per_tensor.default(%%p_w, 0.008, 0, -127, 127, torch.int8)")
	if scales != nil {
		fmt.Fprintf(&b, "weight \"s\": f32[%d] = inline(%q)\n", len(scales), hexF32(scales...))
		fmt.Fprintf(&b, "weight \"z\": i64[%d] = inline(%q)\n", len(scales), hexI64(make([]int64, len(scales))...))
		wdq = "quantized_decomposed.dequantize_per_channel.default(%p_w, %p_s, %p_z, 0, -127, 127, torch.int8)"
	}
	if bias {
		bs := make([]float64, wshape[0])
		for i := range bs {
			bs[i] = 0.03 * float64(i%3-1)
		}
		fmt.Fprintf(&b, "weight \"b\": f32[%d] = inline(%q)\n", wshape[0], hexF32(bs...))
	}
	fmt.Fprintf(&b, `graph forward(%s, %%x: f32%s) {
  %%xq: i8%[2]s = quantized_decomposed.quantize_per_tensor.default(%%x, 0.01, -4, -128, 127, torch.int8)
  %%xd: f32%[2]s = quantized_decomposed.dequantize_per_tensor.default(%%xq, 0.01, -4, -128, 127, torch.int8)
  %%wd: f32%[3]s = %[4]s
  %%y: f32%[5]s = aten.convolution.default(%%xd, %%wd, %[6]s, [2, 1], [1, 0], [1, 1], False, [0, 0], %[7]d)
  %%yq: i8%[5]s = quantized_decomposed.quantize_per_tensor.default(%%y, 0.02, 5, -128, 127, torch.int8)
  %%yd: f32%[5]s = quantized_decomposed.dequantize_per_tensor.default(%%yq, 0.02, 5, -128, 127, torch.int8)
  return %%yd
}
`, params, sh(x), sh(wshape), wdq, sh(y), bname, groups)
	return b.String()
}

// Quantized convolutions through the runner: per-tensor and per-channel
// weights, plain and depthwise; the filter is OHWI (1HWO depthwise) with
// channel_dim 0 (3 depthwise), the bias int32 with scales s_x·s_w[c], and
// input/output are qint8 NHWC.
func TestQS8Conv(t *testing.T) {
	for _, tc := range []struct {
		name   string
		w      [4]int
		groups int
		x, y   [4]int
		scales []float64
		bias   bool
		kind   xnnfb.XNodeUnion
		fdims  []uint32
		chDim  int32
	}{
		{"per-tensor", [4]int{4, 3, 3, 2}, 1, [4]int{1, 3, 6, 5}, [4]int{1, 4, 3, 4}, nil, true, xnnfb.XNodeUnionXNNConv2d, []uint32{4, 3, 2, 3}, 0},
		{"per-tensor-nobias", [4]int{4, 3, 3, 2}, 1, [4]int{1, 3, 6, 5}, [4]int{1, 4, 3, 4}, nil, false, xnnfb.XNodeUnionXNNConv2d, []uint32{4, 3, 2, 3}, 0},
		{"per-channel", [4]int{4, 3, 3, 2}, 1, [4]int{2, 3, 6, 5}, [4]int{2, 4, 3, 4}, []float64{0.004, 0.01, 0.007, 0.002}, true, xnnfb.XNodeUnionXNNConv2d, []uint32{4, 3, 2, 3}, 0},
		{"per-channel-depthwise", [4]int{3, 1, 3, 2}, 3, [4]int{1, 3, 6, 5}, [4]int{1, 3, 3, 4}, []float64{0.009, 0.003, 0.006}, true, xnnfb.XNodeUnionXNNDepthwiseConv2d, []uint32{1, 3, 2, 3}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := qlower(t, convSrc(tc.w, tc.groups, tc.x, tc.y, tc.scales, tc.bias), []int64{int64(tc.x[0]), int64(tc.x[1]), int64(tc.x[2]), int64(tc.x[3])}, 0.02)
			c := nodeOf(t, g, tc.kind).(*xnnfb.XNNNodeConvT)
			var fs []float32
			bs := []float32(nil)
			bscale := float32(0.01) * float32(0.008)
			dt, bdt := xnnfb.XNNDatatypexnn_datatype_qint8, xnnfb.XNNDatatypexnn_datatype_qint32
			if tc.scales != nil {
				dt, bdt = xnnfb.XNNDatatypexnn_datatype_qcint8, xnnfb.XNNDatatypexnn_datatype_qcint32
				for _, s := range tc.scales {
					fs = append(fs, float32(s))
					bs = append(bs, float32(0.01)*float32(s))
				}
			}
			wantQ(t, g, "filter", c.FilterId, dt, append([]uint32{tc.fdims[0]}, tc.fdims[1:]...), 0.008, fs, tc.chDim)
			if tc.bias {
				wantQ(t, g, "bias", c.BiasId, bdt, []uint32{uint32(tc.w[0])}, bscale, bs, 0)
			} else if c.BiasId != math.MaxUint32 {
				t.Errorf("bias id %d, want none", c.BiasId)
			}
			nhwc := func(s [4]int) []uint32 { return []uint32{uint32(s[0]), uint32(s[2]), uint32(s[3]), uint32(s[1])} }
			wantQ(t, g, "input", c.Input1Id, xnnfb.XNNDatatypexnn_datatype_qint8, nhwc(tc.x), 0.01, nil, 0)
			wantQ(t, g, "output", c.OutputId, xnnfb.XNNDatatypexnn_datatype_qint8, nhwc(tc.y), 0.02, nil, 0)
		})
	}
}

// A per-channel weight quantized along its input channels stays portable;
// non-zero per-channel zero points are an error naming them.
func TestQS8PerChannelRejected(t *testing.T) {
	src := func(axis int, z string) string {
		return fmt.Sprintf(`input p_w: parameter "w"
input p_s: constant_tensor "s"
input p_z: constant_tensor "z"
input x: user_input
output user_output
weight "w": i8[2, 2] = inline("017ffe81")
weight "s": f32[2] = inline("%s")
weight "z": i64[2] = inline("%s")
graph forward(%%p_w: i8[2, 2], %%p_s: f32[2], %%p_z: i64[2], %%x: f32[3, 2]) {
  %%xq: i8[3, 2] = quantized_decomposed.quantize_per_tensor.default(%%x, 0.02, 0, -128, 127, torch.int8)
  %%xd: f32[3, 2] = quantized_decomposed.dequantize_per_tensor.default(%%xq, 0.02, 0, -128, 127, torch.int8)
  %%wd: f32[2, 2] = quantized_decomposed.dequantize_per_channel.default(%%p_w, %%p_s, %%p_z, %d, -127, 127, torch.int8)
  %%wt: f32[2, 2] = aten.permute_copy.default(%%wd, [1, 0])
  %%y: f32[3, 2] = aten.mm.default(%%xd, %%wt)
  %%yq: i8[3, 2] = quantized_decomposed.quantize_per_tensor.default(%%y, 0.01, 0, -128, 127, torch.int8)
  %%yd: f32[3, 2] = quantized_decomposed.dequantize_per_tensor.default(%%yq, 0.01, 0, -128, 127, torch.int8)
  return %%yd
}
`, hexF32(0.01, 0.02), z, axis)
	}
	p, err := ir.Parse([]byte(src(1, hexI64(0, 0))), "axis.fxir")
	if err != nil {
		t.Fatal(err)
	}
	lower(t, p, "")
	if text := ir.Print(p); !strings.Contains(text, "aten.mm") || !strings.Contains(text, "dequantize_per_channel") {
		t.Errorf("input-channel quantized weight was delegated:\n%s", text)
	}
	wantExportError(t, src(0, hexI64(0, 3)), "zp.fxir", "non-zero per-channel zero points were", "zero points")
}
