package xnnpack_test

import (
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
	"github.com/fxport/fxport/targets/executorch/internal/ettest"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// hexI4 is n int8-stored 4-bit weights spread over [-8, 7].
func hexI4(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(int8(math.Max(-8, math.Min(7, math.Round(7.5*math.Sin(float64(i*11+2)))))))
	}
	return hex.EncodeToString(b)
}

// wantDyn checks that id is an internal qdint8 value of dims with
// per-token dynamic parameters over one nonbatch dim, written by an
// XNNConvert from an fp32 value.
func wantDyn(t *testing.T, g *xnnfb.XNNGraphT, id uint32, dims []uint32) {
	t.Helper()
	q, ok := g.Xvalues[id].XvalueUnion.Value.(*xnnfb.XNNQuantizedTensorValueT)
	if !ok {
		t.Fatalf("input (id %d) is not quantized", id)
	}
	tv := q.TensorValue
	if tv.Datatype != xnnfb.XNNDatatypexnn_datatype_qdint8 || fmt.Sprint(tv.Dims) != fmt.Sprint(dims) || tv.ExternalId != math.MaxUint32 || tv.Flags != 0 || tv.ConstantBufferIdx != 0 {
		t.Errorf("input: %s %v ext %d flags %d const %d, want internal qdint8 %v", tv.Datatype, tv.Dims, tv.ExternalId, tv.Flags, tv.ConstantBufferIdx, dims)
	}
	if p, ok := q.QuantParams.Value.(*xnnfb.PerTokenDynamicQuantT); !ok || p.NumNonbatchDims != 1 {
		t.Errorf("input quant params %s %+v, want PerTokenDynamicQuant{1}", q.QuantParams.Type, q.QuantParams.Value)
	}
	cv := nodeOf(t, g, xnnfb.XNodeUnionXNNConvert).(*xnnfb.XNNNode1x1T)
	if cv.OutputId != id || cv.Flags != 0 {
		t.Errorf("convert %+v does not write the qdint8 input %d", cv, id)
	}
	if src, ok := g.Xvalues[cv.InputId].XvalueUnion.Value.(*xnnfb.XNNTensorValueT); !ok || src.Datatype != xnnfb.XNNDatatypexnn_datatype_fp32 {
		t.Errorf("convert reads %+v, want an fp32 value", g.Xvalues[cv.InputId].XvalueUnion.Value)
	}
}

// wantF32 checks that id is a plain fp32 value.
func wantF32(t *testing.T, g *xnnfb.XNNGraphT, what string, id uint32) {
	t.Helper()
	if tv, ok := g.Xvalues[id].XvalueUnion.Value.(*xnnfb.XNNTensorValueT); !ok || tv.Datatype != xnnfb.XNNDatatypexnn_datatype_fp32 {
		t.Errorf("%s (id %d) is %+v, want fp32", what, id, g.Xvalues[id].XvalueUnion.Value)
	}
}

// dynLinear is a linear with a dynamically quantized input (per tensor or
// per token) and a per-channel int8 weight [3, 4] along axis 0.
func dynLinear(perToken bool, z string) string {
	in := `  %%s: f64[1], %%z: i64[1] = quantized_decomposed.choose_qparams.tensor(%%x, -128, 127, 1.1920928955078125e-07, torch.int8)
  %%xq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.tensor(%%x, %%s, %%z, -128, 127, torch.int8)
  %%xd: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.tensor(%%xq, %%s, %%z, -128, 127, torch.int8)
`
	if perToken {
		in = `  %%s: f64[5, 1], %%z: i64[5, 1] = quantized_decomposed.choose_qparams_per_token_asymmetric.default(%%x, torch.int8)
  %%xq: i8[5, 4] = quantized_decomposed.quantize_per_token.default(%%x, %%s, %%z, -128, 127, torch.int8)
  %%xd: f32[5, 4] = quantized_decomposed.dequantize_per_token.default(%%xq, %%s, %%z, -128, 127, torch.int8, torch.float32)
`
	}
	return fmt.Sprintf(`input p_w: parameter "w"
input p_ws: constant_tensor "ws"
input p_wz: constant_tensor "wz"
input p_b: parameter "b"
input x: user_input
output user_output
weight "w": i8[3, 4] = inline("%s")
weight "ws": f32[3] = inline("%s")
weight "wz": i64[3] = inline("%s")
weight "b": f32[3] = inline("%s")
graph forward(%%p_w: i8[3, 4], %%p_ws: f32[3], %%p_wz: i64[3], %%p_b: f32[3], %%x: f32[5, 4]) {
`+in+`  %%wd: f32[3, 4] = quantized_decomposed.dequantize_per_channel.default(%%p_w, %%p_ws, %%p_wz, 0, -127, 127, torch.int8)
  %%wt: f32[4, 3] = aten.permute_copy.default(%%wd, [1, 0])
  %%y: f32[5, 3] = aten.addmm.default(%%p_b, %%xd, %%wt)
  return %%y
}
`, hexI8(12), hexF32(0.01, 0.02, 0.005), z, hexF32(0.1, -0.25, 0.05))
}

// A linear with a dynamically quantized input (choose_qparams.tensor) and
// per-channel weights: XNNConvert fp32 → qdint8 (per-token parameters),
// XNNFullyConnected with a qcint8 filter, fp32 bias and fp32 output. The
// interpreter quantizes x with one per-tensor scale, XNNPACK per row, so
// each output may differ by Σ|w|·s_x.
func TestQD8Linear(t *testing.T) {
	// |x| ≤ 1.2: s_x ≤ 2.4/255; Σ_k |w_jk| ≤ 4·127·0.02.
	g := qlower(t, dynLinear(false, hexI64(0, 0, 0)), []int64{5, 4}, 4*127*0.02*2.4/255)
	fc := nodeOf(t, g, xnnfb.XNodeUnionXNNFullyConnected).(*xnnfb.XNNFullyConnectedT)
	wantDyn(t, g, fc.Input1Id, []uint32{5, 4})
	wantQ(t, g, "filter", fc.FilterId, xnnfb.XNNDatatypexnn_datatype_qcint8, []uint32{3, 4}, 0, []float32{0.01, 0.02, 0.005}, 0)
	wantF32(t, g, "bias", fc.BiasId)
	wantF32(t, g, "output", fc.OutputId)
	if len(g.Xnodes) != 2 {
		t.Errorf("%d nodes, want convert + fully-connected", len(g.Xnodes))
	}
}

// The per-token form (8da4w's activations) quantizes exactly as XNNPACK
// does: the delegate matches the interpreter to float rounding.
func TestQD8LinearPerToken(t *testing.T) {
	g := qlower(t, dynLinear(true, hexI64(0, 0, 0)), []int64{5, 4}, 1e-5)
	fc := nodeOf(t, g, xnnfb.XNodeUnionXNNFullyConnected).(*xnnfb.XNNFullyConnectedT)
	wantDyn(t, g, fc.Input1Id, []uint32{5, 4})
	wantQ(t, g, "filter", fc.FilterId, xnnfb.XNNDatatypexnn_datatype_qcint8, []uint32{3, 4}, 0, []float32{0.01, 0.02, 0.005}, 0)
}

// qb4wLinear is 8da4w: per-token activations, a [4, 64] weight of 4-bit
// values in groups of group columns with bf16-exact scales.
func qb4wLinear(group int, scales []float64, lo int) string {
	return fmt.Sprintf(`input p_w: parameter "w"
input p_ws: constant_tensor "ws"
input x: user_input
output user_output
weight "w": i8[4, 64] = inline("%s")
weight "ws": f32[4, %d] = inline("%s")
graph forward(%%p_w: i8[4, 64], %%p_ws: f32[4, %d], %%x: f32[3, 64]) {
  %%s: f64[3, 1], %%z: i64[3, 1] = quantized_decomposed.choose_qparams_per_token_asymmetric.default(%%x, torch.int8)
  %%xq: i8[3, 64] = quantized_decomposed.quantize_per_token.default(%%x, %%s, %%z, -128, 127, torch.int8)
  %%xd: f32[3, 64] = quantized_decomposed.dequantize_per_token.default(%%xq, %%s, %%z, -128, 127, torch.int8, torch.float32)
  %%wd: f32[4, 64] = quantized_decomposed.dequantize_per_channel_group.default(%%p_w, %%p_ws, None, %d, 7, torch.int8, %d, torch.float32)
  %%wt: f32[64, 4] = aten.permute_copy.default(%%wd, [1, 0])
  %%y: f32[3, 4] = aten.mm.default(%%xd, %%wt)
  return %%y
}
`, hexI4(256), 64/group, hexF32(scales...), 64/group, lo, group)
}

// 8da4w: per-token qdint8 input, a qbint4 [out, in] filter with
// PerChannelGroupQuant (scales [out, in/group] flattened, channel_dim 0,
// group_size) and the values packed two per byte as v+8, even index low.
func TestQB4WLinear(t *testing.T) {
	scales := []float64{0.0625, 0.03125, 0.125, 0.25, 0.015625, 0.5, 0.09375, 0.046875}
	g := qlower(t, qb4wLinear(32, scales, -8), []int64{3, 64}, 1e-5)
	fc := nodeOf(t, g, xnnfb.XNodeUnionXNNFullyConnected).(*xnnfb.XNNFullyConnectedT)
	wantDyn(t, g, fc.Input1Id, []uint32{3, 64})
	wantF32(t, g, "output", fc.OutputId)
	if fc.BiasId != math.MaxUint32 {
		t.Errorf("bias id %d, want none", fc.BiasId)
	}
	q, ok := g.Xvalues[fc.FilterId].XvalueUnion.Value.(*xnnfb.XNNQuantizedTensorValueT)
	if !ok {
		t.Fatal("filter is not quantized")
	}
	if tv := q.TensorValue; tv.Datatype != xnnfb.XNNDatatypexnn_datatype_qbint4 || fmt.Sprint(tv.Dims) != "[4 64]" || tv.ConstantBufferIdx == 0 {
		t.Errorf("filter %s %v const %d, want a qbint4 [4 64] constant", tv.Datatype, tv.Dims, tv.ConstantBufferIdx)
	}
	p, ok := q.QuantParams.Value.(*xnnfb.PerChannelGroupQuantT)
	if !ok {
		t.Fatalf("filter quant params %s", q.QuantParams.Type)
	}
	if p.ChannelDim != 0 || p.GroupSize != 32 || p.ScaleBufferIdx != 0 || fmt.Sprint(p.Scale) != fmt.Sprint(scales) {
		t.Errorf("filter params %+v, want scales %v channel_dim 0 group 32", p, scales)
	}
	cd := g.ConstantData[q.TensorValue.ConstantBufferIdx]
	if cd.Size != 128 {
		t.Errorf("packed filter is %d bytes, want 128", cd.Size)
	}
}

// The packing itself: nibbles of the serialized named data against the
// int8 weights.
func TestQB4WPacking(t *testing.T) {
	scales := []float64{0.0625, 0.03125, 0.125, 0.25, 0.015625, 0.5, 0.09375, 0.046875}
	p := ettest.Parse(t, qb4wLinear(32, scales, -8), "qb4w.fxir")
	lower(t, p, "")
	f, _ := ettest.Emit(t, p, "qb4w.pte", emit.Options{NoMetadataMethod: true})
	g := f.Methods[0].Delegates[0].XNNPACK.Graph
	fc := nodeOf(t, g, xnnfb.XNodeUnionXNNFullyConnected).(*xnnfb.XNNFullyConnectedT)
	key := g.ConstantData[pte.XNNTensor(g.Xvalues[fc.FilterId]).ConstantBufferIdx].NamedKey
	var packed []byte
	for _, nd := range f.Program.NamedData {
		if nd.Key == key {
			packed = f.Segments[nd.SegmentIndex].Data
		}
	}
	if len(packed) < 128 {
		t.Fatalf("packed filter %q: %d bytes, want 128", key, len(packed))
	}
	packed = packed[:128]
	w, _ := hex.DecodeString(hexI4(256))
	for i, b := range packed {
		if lo, hi := int(b&15)-8, int(b>>4)-8; lo != int(int8(w[2*i])) || hi != int(int8(w[2*i+1])) {
			t.Fatalf("byte %d = %#02x holds %d, %d; weights %d, %d", i, b, lo, hi, int8(w[2*i]), int8(w[2*i+1]))
		}
	}
}

// Near misses: a group size that is not a multiple of 32, a range that is
// not 4-bit and a per-tensor weight behind a dynamic input stay portable;
// non-zero weight zero points are an error naming them.
func TestQD8Rejected(t *testing.T) {
	portable := func(name, src string) {
		t.Helper()
		p, err := ir.Parse([]byte(src), name)
		if err != nil {
			t.Fatal(err)
		}
		lower(t, p, "")
		if text := ir.Print(p); strings.Contains(text, "executorch_call_delegate") && !strings.Contains(text, "aten.mm") && !strings.Contains(text, "aten.addmm") {
			t.Errorf("%s: delegated:\n%s", name, text)
		}
	}
	portable("group16.fxir", qb4wLinear(16, make([]float64, 16), -8))
	portable("range.fxir", qb4wLinear(32, []float64{1, 1, 1, 1, 1, 1, 1, 1}, -16))
	pt := strings.Replace(dynLinear(false, hexI64(0, 0, 0)), "quantized_decomposed.dequantize_per_channel.default(%p_w, %p_ws, %p_wz, 0, -127, 127, torch.int8)",
		"quantized_decomposed.dequantize_per_tensor.default(%p_w, 0.01, 0, -127, 127, torch.int8)", 1)
	portable("pertensor.fxir", pt)

	wantExportError(t, dynLinear(false, hexI64(0, 2, 0)), "zp.fxir", "non-zero per-channel zero points were", "zero points", "addmm")
}

// A linear of rank 3 (decompose-to-core's view_copy, mm, view_copy) with
// per-token activations: the views fold into the fully-connected node,
// whose qdint8 input keeps the [2, 3, 4] shape (one token per row).
func TestQD8LinearRank3(t *testing.T) {
	src := qd8Rank3Src()
	g := qlower(t, src, []int64{2, 3, 4}, 1e-5)
	fc := nodeOf(t, g, xnnfb.XNodeUnionXNNFullyConnected).(*xnnfb.XNNFullyConnectedT)
	wantDyn(t, g, fc.Input1Id, []uint32{2, 3, 4})
	if len(g.Xnodes) != 2 {
		t.Errorf("%d nodes, want convert + fully-connected (views folded)", len(g.Xnodes))
	}
	if d := pte.XNNTensor(g.Xvalues[fc.OutputId]).Dims; fmt.Sprint(d) != "[2 3 3]" {
		t.Errorf("output dims %v, want [2 3 3]", d)
	}
}

// Excluding any config of the pattern leaves all of it outside the
// delegate (no half-claimed dynamic quantization).
func TestQD8Excluded(t *testing.T) {
	for _, cfg := range []string{"", "QuantizedPerTensorConfig", "DeQuantizedPerTensorConfig", "DeQuantizedPerChannelConfig", "AddmmConfig"} {
		t.Run(cfg, func(t *testing.T) {
			p, err := ir.Parse([]byte(dynLinear(false, hexI64(0, 0, 0))), "x.fxir")
			if err != nil {
				t.Fatal(err)
			}
			var ex []string
			if cfg != "" {
				ex = []string{cfg}
			}
			res, err := xnnpack.Run(p, xnnpack.Options{Exclude: ex})
			if err != nil {
				t.Fatal(err)
			}
			if cfg == "" {
				if len(res.Partitions) != 1 || res.Partitions[0].Nodes != 6 {
					t.Errorf("partitions %+v, want one of 6 nodes:\n%s", res.Partitions, ir.Print(p))
				}
				return
			}
			if len(res.Partitions) != 0 {
				t.Errorf("%d partitions with %s excluded:\n%s", len(res.Partitions), cfg, ir.Print(p))
			}
		})
	}
}
