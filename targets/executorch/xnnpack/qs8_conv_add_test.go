package xnnpack_test

import (
	"testing"

	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// A quantized convolution's NHWC qint8 output added to a quantized fp32
// convolution result (qint8 NCHW, transposed), the sum feeding another
// quantized convolution: the add runs in NHWC on qint8 values and the
// dequantized intermediates get no fp32 XNNConvert.
func TestQS8ConvAdd(t *testing.T) {
	src := qs8ConvAddSrc()
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
	src := qs8AddLinearSrc()
	// One step of the sum (0.02) moves the output by at most 4·127·0.01·0.02.
	g := qlower(t, src, []int64{5, 4}, 4*127*0.01*0.02+0.03)
	add := nodeOf(t, g, xnnfb.XNodeUnionXNNAdd).(*xnnfb.XNNNode2x1T)
	fc := nodeOf(t, g, xnnfb.XNodeUnionXNNFullyConnected).(*xnnfb.XNNFullyConnectedT)
	if fc.Input1Id != add.OutputId {
		t.Errorf("fully-connected reads %d, want the add's qint8 output %d", fc.Input1Id, add.OutputId)
	}
	wantQ(t, g, "fc input", fc.Input1Id, xnnfb.XNNDatatypexnn_datatype_qint8, []uint32{5, 4}, 0.02, nil, 0)
}
