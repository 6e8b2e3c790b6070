package xnnpack_test

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// qaddSrc: x and x·x quantized with different parameters, added, the sum
// requantized and added again to the first operand (a chained quantized
// add reading the first add's qint8 output).
const qaddSrc = `input x: user_input
output user_output
graph forward(%x: f32[2, 3, 4]) {
  %aq: i8[2, 3, 4] = quantized_decomposed.quantize_per_tensor.default(%x, 0.01, 4, -128, 127, torch.int8)
  %ad: f32[2, 3, 4] = quantized_decomposed.dequantize_per_tensor.default(%aq, 0.01, 4, -128, 127, torch.int8)
  %m: f32[2, 3, 4] = aten.mul.Tensor(%x, %x)
  %bq: i8[2, 3, 4] = quantized_decomposed.quantize_per_tensor.default(%m, 0.012, -100, -128, 127, torch.int8)
  %bd: f32[2, 3, 4] = quantized_decomposed.dequantize_per_tensor.default(%bq, 0.012, -100, -128, 127, torch.int8)
  %s: f32[2, 3, 4] = aten.add.Tensor(%ad, %bd)
  %sq: i8[2, 3, 4] = quantized_decomposed.quantize_per_tensor.default(%s, 0.02, -20, -128, 127, torch.int8)
  %sd: f32[2, 3, 4] = quantized_decomposed.dequantize_per_tensor.default(%sq, 0.02, -20, -128, 127, torch.int8)
  %t: f32[2, 3, 4] = aten.add.Tensor(%sd, %ad)
  %tq: i8[2, 3, 4] = quantized_decomposed.quantize_per_tensor.default(%t, 0.025, 7, -128, 127, torch.int8)
  %td: f32[2, 3, 4] = quantized_decomposed.dequantize_per_tensor.default(%tq, 0.025, 7, -128, 127, torch.int8)
  return %td
}
`

// Quantized adds run as qint8 XNNAdd nodes (operands and output qint8 with
// the pattern's parameters) within one output quantization step of the
// interpreter on the unlowered IR.
func TestQS8Add(t *testing.T) {
	g := qlower(t, qaddSrc, []int64{2, 3, 4}, 0.025)
	var adds []*xnnfb.XNNNode2x1T
	for _, n := range g.Xnodes {
		if n.XnodeUnion.Type == xnnfb.XNodeUnionXNNAdd {
			adds = append(adds, n.XnodeUnion.Value.(*xnnfb.XNNNode2x1T))
		}
	}
	if len(adds) != 2 {
		t.Fatalf("%d XNNAdd nodes, want 2", len(adds))
	}
	qi8 := xnnfb.XNNDatatypexnn_datatype_qint8
	d := []uint32{2, 3, 4}
	wantQ(t, g, "add 1 operand 1", adds[0].Input1Id, qi8, d, 0.01, nil, 0)
	wantQ(t, g, "add 1 operand 2", adds[0].Input2Id, qi8, d, 0.012, nil, 0)
	wantQ(t, g, "add 1 output", adds[0].OutputId, qi8, d, 0.02, nil, 0)
	if adds[1].Input1Id != adds[0].OutputId || adds[1].Input2Id != adds[0].Input1Id {
		t.Errorf("add 2 reads %d, %d; want add 1's output %d and operand %d", adds[1].Input1Id, adds[1].Input2Id, adds[0].OutputId, adds[0].Input1Id)
	}
	wantQ(t, g, "add 2 output", adds[1].OutputId, qi8, d, 0.025, nil, 0)
	for _, c := range []struct {
		id uint32
		zp int32
	}{{adds[0].Input2Id, -100}, {adds[0].OutputId, -20}, {adds[1].OutputId, 7}} {
		if zp := g.Xvalues[c.id].XvalueUnion.Value.(*xnnfb.XNNQuantizedTensorValueT).QuantParams.Value.(*xnnfb.PerTensorQuantT).ZeroPoint; zp != c.zp {
			t.Errorf("value %d: zero point %d, want %d", c.id, zp, c.zp)
		}
	}
}

// An add with only one dequantized operand, or with alpha ≠ 1, leaves the
// quantize/dequantize nodes on portable kernels.
func TestQS8AddRejected(t *testing.T) {
	for name, edit := range map[string][2]string{
		"alpha":       {"aten.add.Tensor(%ad, %bd)", "aten.add.Tensor(%ad, %bd, alpha=2)"},
		"one-operand": {"aten.add.Tensor(%ad, %bd)", "aten.add.Tensor(%ad, %m)"},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := ir.Parse([]byte(strings.Replace(qaddSrc, edit[0], edit[1], 1)), "q.fxir")
			if err != nil {
				t.Fatal(err)
			}
			lower(t, p, "")
			found := false
			for _, n := range p.Main.Nodes() {
				found = found || n.Op.Info().Name == "quantized_decomposed.dequantize_per_tensor.out" // portable kernel
			}
			if !found {
				t.Fatalf("quantized add pattern was delegated:\n%s", ir.Print(p))
			}
		})
	}
}
