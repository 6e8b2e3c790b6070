package xnnpack_test

import (
	"testing"

	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

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
	wantQDQPortable(t, qaddSrc, map[string][2]string{
		"alpha":       {"aten.add.Tensor(%ad, %bd)", "aten.add.Tensor(%ad, %bd, alpha=2)"},
		"one-operand": {"aten.add.Tensor(%ad, %bd)", "aten.add.Tensor(%ad, %m)"},
	})
}
