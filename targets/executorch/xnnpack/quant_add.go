package xnnpack

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// Quantized add, sub and mul (PT2E qint8): both operands of
// aten.add.Tensor / aten.sub.Tensor (alpha 1) or aten.mul.Tensor are
// dequantize_per_tensor(quantize_per_tensor(_)) and the result feeds one
// quantize_per_tensor whose users are dequantizes. It is written as a qint8
// XNNAdd / XNNSubtract / XNNMultiply reading the operands' qint8 values
// (XNNConvert of their fp32 sources, or the qint8 output of an upstream
// quantized op) with the output quantization, then XNNConvert to each fp32
// dequantized result.

var (
	opAddT = ir.OpAtenAddTensor
	opSubT = ir.OpAtenSubTensor
	opMulT = ir.OpAtenMulTensor
)

// qbinKinds are the XNNPACK nodes of the quantized binary ops.
var qbinKinds = map[ir.Op]xnnfb.XNodeUnion{opAddT: xnnfb.XNodeUnionXNNAdd, opSubT: xnnfb.XNodeUnionXNNSubtract, opMulT: xnnfb.XNodeUnionXNNMultiply}

// qadd is the matched pattern: qio holds the first operand and the output
// side, bq / bd / b the second operand.
type qadd struct {
	qio
	bq, bd *ir.Node
	b      qparams
	kind   xnnfb.XNodeUnion // XNNAdd, XNNSubtract or XNNMultiply
	nhwc   bool             // an operand exists only in NHWC (quant_nhwc.go): computed in NHWC
}

// quantAdd reports whether n is an add, sub or mul whose operands are both
// per-tensor dequantizes (the quantized form).
func quantAdd(n *ir.Node) bool {
	if _, ok := qbinKinds[n.Op]; !ok || len(n.Args) < 2 {
		return false
	}
	for _, a := range n.Args[:2] {
		if a.Kind != ir.ArgValue || a.Value.Def == nil || a.Value.Def.Op != opDequant {
			return false
		}
	}
	return true
}

// matchQAdd matches the pattern around add n; the reason is empty on a
// match.
func matchQAdd(n *ir.Node) (*qadd, string) {
	if n.Op != opMulT {
		if a, ok := number(n.Arg("alpha")); !ok || a != 1 {
			return nil, "alpha must be 1"
		}
	}
	m := &qadd{kind: qbinKinds[n.Op]}
	var other qio
	for i, io := range []*qio{&m.qio, &other} {
		if why := matchQIn(io, n.Args[i].Value); why != "" {
			return nil, fmt.Sprintf("operand %d: %s", i, why)
		}
		// A quantized convolution's qint8 output exists only in NHWC.
		if src := io.xq.Args[0].Value; src.Def != nil && qNHWC(src.Def) {
			m.nhwc = true
		}
	}
	if m.nhwc {
		if why := sameRank4(n); why != "" {
			return nil, why
		}
	}
	m.bq, m.bd, m.b = other.xq, other.xd, other.x
	if why := matchQOut(&m.qio, n.Results[0], "quantized "+n.Op.Info().Name); why != "" {
		return nil, why
	}
	return m, ""
}

// checkAdd is the add and sub rule: alpha 1, and the whole pattern when
// both operands are dequantized.
func checkAdd(c *checker, n *ir.Node) string {
	if quantAdd(n) {
		_, why := matchQAdd(n)
		return why
	}
	return checkAlphaOne(c, n)
}

// checkMul is the mul rule: the whole pattern when both operands are
// dequantized.
func checkMul(c *checker, n *ir.Node) string {
	if quantAdd(n) {
		_, why := matchQAdd(n)
		return why
	}
	return ""
}

// readsAsQAdd reports whether u is a quantized add reading dequantize d.
func (s *ser) readsAsQAdd(u, d *ir.Node) bool {
	m := s.qadds[u]
	return m != nil && (m.xd == d || m.bd == d)
}

// quantAddNode writes the qint8 XNNAdd of a matched pattern.
func (s *ser) quantAddNode(m *qadd) error {
	var in [2]uint32
	for i, q := range []*ir.Node{m.xq, m.bq} {
		p := []qparams{m.x, m.b}[i]
		var err error
		if m.nhwc {
			in[i], err = s.qNHWCOf(q, p)
		} else {
			in[i], err = s.qNCHWOf(q, p)
		}
		if err != nil {
			return fmt.Errorf("operand %d: %w", i, err)
		}
	}
	out, err := s.quantOut(&m.qio, m.nhwc)
	if err != nil {
		return err
	}
	s.add(m.kind, &xnnfb.XNNNode2x1T{Input1Id: in[0], Input2Id: in[1], OutputId: out}, s.handle, nil)
	return s.quantOutConverts(&m.qio, out, m.nhwc)
}
