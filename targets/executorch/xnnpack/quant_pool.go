package xnnpack

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// Quantized pooling (PT2E qint8): max_pool2d (or max_pool2d_with_indices
// with unused indices) and mean over H and W whose input is
// dequantize_per_tensor(quantize_per_tensor(_)) and whose result feeds one
// quantize_per_tensor read only by dequantizes, the pattern exir's
// MaxPool2dConfig and MeanDimConfig claim under STATIC_QUANT
// (AvgPoolingConfig is fp32 only: a quantized avg_pool2d's q/dq stay
// portable). It is written in NHWC, like the fp32 path: the qint8 input
// (XNNConvert of the fp32 source, or the NHWC qint8 output of an upstream
// quantized op, quant_nhwc.go), a qint8 XNNMaxPooling2d or
// XNNGlobalAvgPooling2d, then XNNConvert to each fp32 dequantized result
// something else reads. XNNPACK's qint8 max pooling keeps the input's
// quantization, so the output quantize must use the input's parameters (as
// PT2E's shared observers give it).

var (
	opMeanDim = ir.OpAtenMeanDim
	opMaxPool = ir.OpAtenMaxPool2d
)

// qpool is a matched quantized pooling pattern.
type qpool struct {
	qio
	kind xnnfb.XNodeUnion // XNNMaxPooling2d or XNNGlobalAvgPooling2d
}

// quantPool reports whether n is a pooling op reading a per-tensor
// dequantize (the quantized form).
func quantPool(n *ir.Node) bool {
	switch {
	case n.Op == opMaxPool, n.Op == opMeanDim, valuesOnlyMaxPool(n):
	default:
		return false
	}
	x := n.Args[0]
	return x.Kind == ir.ArgValue && x.Value.Def != nil && x.Value.Def.Op == opDequant
}

// matchQPool matches the pattern around pooling op n; the reason is empty
// on a match.
func matchQPool(n *ir.Node) (*qpool, string) {
	m := &qpool{kind: xnnfb.XNodeUnionXNNGlobalAvgPooling2d}
	if n.Op != opMeanDim {
		m.kind = xnnfb.XNodeUnionXNNMaxPooling2d
	}
	if why := matchQIn(&m.qio, n.Args[0].Value); why != "" {
		return nil, why
	}
	if why := matchQOut(&m.qio, n.Results[0], "quantized pooling"); why != "" {
		return nil, why
	}
	if m.kind == xnnfb.XNodeUnionXNNMaxPooling2d && m.x != m.yp {
		return nil, "quantized max pooling needs the output quantized like its input (XNNPACK keeps the quantization)"
	}
	return m, ""
}

// checkQPool is the quantized part of the max pooling and mean rules.
func checkQPool(n *ir.Node) string {
	if !quantPool(n) {
		return ""
	}
	_, why := matchQPool(n)
	return why
}

// quantPoolNode writes the qint8 pooling of a matched pattern in NHWC.
func (s *ser) quantPoolNode(n *ir.Node, m *qpool) error {
	in, err := s.qNHWCOf(m.xq, m.x) // quant_nhwc.go
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	out, err := s.quantOut(&m.qio, true)
	if err != nil {
		return err
	}
	if m.kind == xnnfb.XNodeUnionXNNMaxPooling2d {
		s.add(m.kind, maxPoolParams(n, in, out), s.handle, nil) // nodes_more.go
	} else {
		s.add(m.kind, &xnnfb.XNNNode1x1T{InputId: in, OutputId: out, Flags: flagKeepDims}, s.handle, nil)
	}
	return s.quantOutConverts(&m.qio, out, true)
}
