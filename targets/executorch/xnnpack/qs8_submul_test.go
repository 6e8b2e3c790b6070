package xnnpack_test

import (
	"testing"

	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// Quantized sub and mul run as qint8 XNNSubtract / XNNMultiply nodes
// within one output quantization step of the interpreter; the fp32 x·x
// stays an fp32 XNNMultiply.
func TestQS8SubMul(t *testing.T) {
	g := qlower(t, qsubmulSrc, []int64{2, 3, 4}, 0.025)
	sub := nodeOf(t, g, xnnfb.XNodeUnionXNNSubtract).(*xnnfb.XNNNode2x1T)
	var muls []*xnnfb.XNNNode2x1T
	for _, n := range g.Xnodes {
		if n.XnodeUnion.Type == xnnfb.XNodeUnionXNNMultiply {
			muls = append(muls, n.XnodeUnion.Value.(*xnnfb.XNNNode2x1T))
		}
	}
	if len(muls) != 2 {
		t.Fatalf("%d XNNMultiply nodes, want 2 (fp32 x·x and the quantized mul)", len(muls))
	}
	qi8 := xnnfb.XNNDatatypexnn_datatype_qint8
	d := []uint32{2, 3, 4}
	wantQ(t, g, "sub operand 1", sub.Input1Id, qi8, d, 0.01, nil, 0)
	wantQ(t, g, "sub operand 2", sub.Input2Id, qi8, d, 0.012, nil, 0)
	wantQ(t, g, "sub output", sub.OutputId, qi8, d, 0.02, nil, 0)
	wantF32(t, g, "x·x", muls[0].OutputId)
	qm := muls[1]
	if qm.Input1Id != sub.OutputId || qm.Input2Id != sub.Input1Id {
		t.Errorf("mul reads %d, %d; want the sub's output %d and operand %d", qm.Input1Id, qm.Input2Id, sub.OutputId, sub.Input1Id)
	}
	wantQ(t, g, "mul output", qm.OutputId, qi8, d, 0.025, nil, 0)
	if zp := g.Xvalues[qm.OutputId].XvalueUnion.Value.(*xnnfb.XNNQuantizedTensorValueT).QuantParams.Value.(*xnnfb.PerTensorQuantT).ZeroPoint; zp != 7 {
		t.Errorf("mul output zero point %d, want 7", zp)
	}
}

// A sub with alpha ≠ 1 or a mul with one dequantized operand leaves the
// quantize/dequantize nodes on portable kernels.
func TestQS8SubMulRejected(t *testing.T) {
	wantQDQPortable(t, qsubmulSrc, map[string][2]string{
		"sub-alpha":       {"aten.sub.Tensor(%ad, %bd)", "aten.sub.Tensor(%ad, %bd, alpha=2)"},
		"mul-one-operand": {"aten.mul.Tensor(%sd, %ad)", "aten.mul.Tensor(%sd, %m)"},
	})
}
