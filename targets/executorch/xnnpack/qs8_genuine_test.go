package xnnpack_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/run"
)

// TestGenuineQS8LinearValues runs the genuine ecn_xnnpack_qs8_linear.pte
// with targets/executorch/run and checks every output against an
// independent integer computation from the file's own constants and
// quantization parameters: quantize the input, accumulate
// Σ (x_q − zp_x)·w_q + b_q in int32, requantize with s_x·s_w / s_y and
// dequantize. Only an exact .5 tie of the requantization may round
// either way.
func TestGenuineQS8LinearValues(t *testing.T) {
	var path string
	for _, rel := range []string{"../../../../shared/testdata/pte", "../../../../../shared/testdata/pte", "../../../shared/testdata/pte"} {
		if _, err := os.Stat(filepath.Join(rel, "ecn_xnnpack_qs8_linear.pte")); err == nil {
			path = filepath.Join(rel, "ecn_xnnpack_qs8_linear.pte")
			break
		}
	}
	if path == "" {
		t.Skip("genuine ecn_xnnpack_qs8_linear.pte not found")
	}
	f, err := pte.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	g := f.Methods[0].Delegates[0].XNNPACK.Graph
	// The file's structure: Convert → qint8 FC (qint8 filter, qint32 bias) → Convert.
	var kinds []xnnfb.XNodeUnion
	for _, n := range g.Xnodes {
		kinds = append(kinds, n.XnodeUnion.Type)
	}
	want := []xnnfb.XNodeUnion{xnnfb.XNodeUnionXNNConvert, xnnfb.XNodeUnionXNNFullyConnected, xnnfb.XNodeUnionXNNConvert}
	if len(kinds) != 3 || kinds[0] != want[0] || kinds[1] != want[1] || kinds[2] != want[2] {
		t.Fatalf("nodes %v, want %v", kinds, want)
	}
	fc := g.Xnodes[1].XnodeUnion.Value.(*xnnfb.XNNFullyConnectedT)
	type qv struct {
		dims  []uint32
		scale float64
		zp    int64
		data  []byte
	}
	value := func(id uint32) qv {
		for _, xv := range g.Xvalues {
			q, ok := xv.XvalueUnion.Value.(*xnnfb.XNNQuantizedTensorValueT)
			if !ok || q.TensorValue.IdOut != id {
				continue
			}
			p, ok := q.QuantParams.Value.(*xnnfb.PerTensorQuantT)
			if !ok {
				t.Fatalf("value %d: not per-tensor quantized", id)
			}
			v := qv{dims: q.TensorValue.Dims, scale: float64(p.Scale), zp: int64(p.ZeroPoint)}
			if idx := q.TensorValue.ConstantBufferIdx; idx != 0 {
				key := g.ConstantData[idx].NamedKey
				for _, nd := range f.Program.NamedData {
					if nd.Key == key {
						v.data = f.Segments[nd.SegmentIndex].Data
					}
				}
				if v.data == nil {
					t.Fatalf("value %d: named data %s not found", id, key)
				}
			}
			return v
		}
		t.Fatalf("no quantized value %d", id)
		return qv{}
	}
	xq, w, b, yq := value(fc.Input1Id), value(fc.FilterId), value(fc.BiasId), value(fc.OutputId)
	rows, in, out := int(xq.dims[0]), int(xq.dims[1]), int(w.dims[0])
	if int(w.dims[1]) != in || len(w.data) < out*in || len(b.data) < 4*out {
		t.Fatalf("filter %v (%d bytes), bias %d bytes for input %v", w.dims, len(w.data), len(b.data), xq.dims)
	}
	// Inputs on the input's quantization grid (so quantizing them is exact).
	xs := make([]float64, rows*in)
	xint := make([]int64, rows*in)
	for i := range xs {
		xint[i] = int64((i*37)%200) - 100
		xs[i] = float64(xint[i]-xq.zp) * xq.scale
	}
	outs, err := run.Run(f, []interp.Value{interp.FromFloat64(ir.Float32, []int64{int64(rows), int64(in)}, xs)}, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := outs[0].(*interp.Tensor).Float64s()
	mult := xq.scale * w.scale / yq.scale
	for r := 0; r < rows; r++ {
		for o := 0; o < out; o++ {
			acc := int64(int32(binary.LittleEndian.Uint32(b.data[4*o:])))
			for k := 0; k < in; k++ {
				acc += (xint[r*in+k] - xq.zp) * int64(int8(w.data[o*in+k]))
			}
			pre := float64(acc)*mult + float64(yq.zp)
			lo, hi := math.Floor(pre), math.Ceil(pre)
			q := math.RoundToEven(pre)
			clamp := func(v float64) float64 { return math.Max(-128, math.Min(127, v)) }
			ok := false
			for _, c := range []float64{q, lo, hi} {
				if c != q && math.Abs(pre-math.Floor(pre)-0.5) > 1e-4 {
					continue // only a tie may round the other way
				}
				want := (clamp(c) - float64(yq.zp)) * yq.scale
				ok = ok || math.Abs(got[r*out+o]-want) <= 1e-6
			}
			if !ok {
				t.Errorf("y[%d][%d] = %g, want %g (acc %d)", r, o, got[r*out+o], (clamp(q)-float64(yq.zp))*yq.scale, acc)
			}
		}
	}
}
