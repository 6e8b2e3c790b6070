package xnnpack_test

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// readGenuineQS8 reads the genuine ecn_xnnpack_qs8_linear.pte (skips when absent).
func readGenuineQS8(t *testing.T) *pte.File {
	t.Helper()
	for _, rel := range []string{"../../../../shared/testdata/pte", "../../../../../shared/testdata/pte", "../../../shared/testdata/pte"} {
		p := filepath.Join(rel, "ecn_xnnpack_qs8_linear.pte")
		if _, err := os.Stat(p); err == nil {
			f, err := pte.Read(p)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Skip("genuine ecn_xnnpack_qs8_linear.pte not found")
	return nil
}

// qvalue is one XNNPACK value's serialized description.
type qvalue struct {
	Union    xnnfb.XValueUnion
	Datatype xnnfb.XNNDatatype
	Dims     []uint32
	Ext      uint32
	Flags    uint32
	Const    uint32
	Scale    float32
	ZP       int32
	Data     []byte
}

func qvalues(t *testing.T, f *pte.File) []qvalue {
	t.Helper()
	g := f.Methods[0].Delegates[0].XNNPACK.Graph
	var out []qvalue
	for i, xv := range g.Xvalues {
		tv := pte.XNNTensor(xv)
		if tv.IdOut != uint32(i) {
			t.Fatalf("value %d has id %d", i, tv.IdOut)
		}
		v := qvalue{Union: xv.XvalueUnion.Type, Datatype: tv.Datatype, Dims: tv.Dims, Ext: tv.ExternalId, Flags: tv.Flags, Const: tv.ConstantBufferIdx}
		if q, ok := xv.XvalueUnion.Value.(*xnnfb.XNNQuantizedTensorValueT); ok {
			p, ok := q.QuantParams.Value.(*xnnfb.PerTensorQuantT)
			if !ok {
				t.Fatalf("value %d: quant params %v", i, q.QuantParams.Type)
			}
			v.Scale, v.ZP = p.Scale, p.ZeroPoint
		}
		if v.Const != 0 {
			key := g.ConstantData[v.Const].NamedKey
			for _, nd := range f.Program.NamedData {
				if nd.Key == key {
					v.Data = f.Segments[nd.SegmentIndex].Data[:g.ConstantData[v.Const].Size]
				}
			}
			if v.Data == nil {
				t.Fatalf("value %d: named data %q not found", i, key)
			}
		}
		out = append(out, v)
	}
	return out
}

// qs8Source writes the IR program the genuine file was exported from: a
// PT2E-quantized Linear(8, 8) on f32[2, 8], with the genuine file's int8
// weights, its bias (the qint32 values times their scale) and its scales.
func qs8Source(t *testing.T, gv []qvalue) string {
	t.Helper()
	x, w, b, y := gv[1], gv[2], gv[3], gv[4]
	bias := make([]byte, len(b.Data))
	for i := 0; i < len(b.Data); i += 4 {
		q := int32(binary.LittleEndian.Uint32(b.Data[i:]))
		binary.LittleEndian.PutUint32(bias[i:], math.Float32bits(float32(q)*b.Scale))
	}
	fl := func(f float32) string { return strconv.FormatFloat(float64(f), 'g', -1, 64) }
	return fmt.Sprintf(`input p_weight: parameter "weight"
input p_bias: parameter "bias"
input x: user_input
output user_output
weight "weight": i8[8, 8] = inline("%s")
weight "bias": f32[8] = inline("%s")
graph forward(%%p_weight: i8[8, 8], %%p_bias: f32[8], %%x: f32[2, 8]) {
  %%xq: i8[2, 8] = quantized_decomposed.quantize_per_tensor.default(%%x, %[3]s, %[4]d, -128, 127, torch.int8)
  %%xd: f32[2, 8] = quantized_decomposed.dequantize_per_tensor.default(%%xq, %[3]s, %[4]d, -128, 127, torch.int8)
  %%wd: f32[8, 8] = quantized_decomposed.dequantize_per_tensor.default(%%p_weight, %[5]s, 0, -127, 127, torch.int8)
  %%wt: f32[8, 8] = aten.permute_copy.default(%%wd, [1, 0])
  %%y: f32[2, 8] = aten.addmm.default(%%p_bias, %%xd, %%wt)
  %%yq: i8[2, 8] = quantized_decomposed.quantize_per_tensor.default(%%y, %[6]s, %[7]d, -128, 127, torch.int8)
  %%yd: f32[2, 8] = quantized_decomposed.dequantize_per_tensor.default(%%yq, %[6]s, %[7]d, -128, 127, torch.int8)
  return %%yd
}
`, hex.EncodeToString(w.Data), hex.EncodeToString(bias), fl(x.Scale), x.ZP, fl(w.Scale), fl(y.Scale), y.ZP)
}

// TestQS8LinearMatchesGenuine lowers the hand-written quantized linear and
// compares its delegate with the genuine one value by value (kind,
// datatype, dims, external id, flags, constant slot, quantization
// parameters, constant bytes) and node by node (kind, operands, debug
// handle); then runs it against the interpreter on the unlowered program.
func TestQS8LinearMatchesGenuine(t *testing.T) {
	gf := readGenuineQS8(t)
	gv := qvalues(t, gf)
	if len(gv) != 6 {
		t.Fatalf("genuine file has %d values, want 6", len(gv))
	}
	src := qs8Source(t, gv)
	xs := make([]float64, 16)
	for i := range xs {
		xs[i] = math.Sin(float64(i*7+1)) * 0.9
	}
	c := xnnExport(t, src, "qs8", "", inputs(interp.FromFloat64(ir.Float32, []int64{2, 8}, xs)))
	wantAllDelegated(t, c.p)
	f := c.f
	if len(f.Methods[0].Delegates) != 1 {
		t.Fatalf("%d delegates, want 1", len(f.Methods[0].Delegates))
	}
	ov := qvalues(t, f)
	if len(ov) != len(gv) {
		t.Fatalf("%d values, genuine %d", len(ov), len(gv))
	}
	for i := range gv {
		if !reflect.DeepEqual(ov[i], gv[i]) {
			t.Errorf("value %d:\n got  %+v\n want %+v", i, ov[i], gv[i])
		}
	}
	og, gg := f.Methods[0].Delegates[0].XNNPACK.Graph, gf.Methods[0].Delegates[0].XNNPACK.Graph
	if len(og.Xnodes) != len(gg.Xnodes) {
		t.Fatalf("%d nodes, genuine %d", len(og.Xnodes), len(gg.Xnodes))
	}
	for i := range gg.Xnodes {
		o, g := og.Xnodes[i], gg.Xnodes[i]
		if o.XnodeUnion.Type != g.XnodeUnion.Type || o.DebugHandle != g.DebugHandle || !reflect.DeepEqual(o.XnodeUnion.Value, g.XnodeUnion.Value) {
			t.Errorf("node %d: got %s %+v handle %d, want %s %+v handle %d", i, o.XnodeUnion.Type, o.XnodeUnion.Value, o.DebugHandle,
				g.XnodeUnion.Type, g.XnodeUnion.Value, g.DebugHandle)
		}
	}
	if !reflect.DeepEqual(og.InputIds, gg.InputIds) || !reflect.DeepEqual(og.OutputIds, gg.OutputIds) || og.NumExterns != gg.NumExterns {
		t.Errorf("inputs %v outputs %v externs %d, genuine %v %v %d", og.InputIds, og.OutputIds, og.NumExterns, gg.InputIds, gg.OutputIds, gg.NumExterns)
	}

	// Numeric: the lowered file through the runner vs the interpreter on
	// the unlowered IR, within one output quantization step.
	step := float64(gv[4].Scale)
	wantWithin(t, c.run(t), c.want, within(step*1.0001), "")
	wantDistinct(t, c.want[0])
}
