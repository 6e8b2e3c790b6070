package xnnpack

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// Quantized add (PT2E qint8): both operands of aten.add.Tensor (alpha 1)
// are dequantize_per_tensor(quantize_per_tensor(_)) and its result feeds
// one quantize_per_tensor whose users are dequantizes. It is written as a
// qint8 XNNAdd reading the operands' qint8 values (XNNConvert of their
// fp32 sources, or the qint8 output of an upstream quantized op) with the
// output quantization, then XNNConvert to each fp32 dequantized result.

var opAddT = ir.MustLookupOp("aten.add.Tensor")

// qadd is the matched pattern: qio holds the first operand and the output
// side, bq / bd / b the second operand.
type qadd struct {
	qio
	bq, bd *ir.Node
	b      qparams
}

// quantAdd reports whether n is an add whose operands are both per-tensor
// dequantizes (the quantized form).
func quantAdd(n *ir.Node) bool {
	if n.Op != opAddT || len(n.Args) < 2 {
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
	if a, ok := number(n.Arg("alpha")); !ok || a != 1 {
		return nil, "alpha must be 1"
	}
	m := &qadd{}
	var other qio
	for i, io := range []*qio{&m.qio, &other} {
		if why := matchQIn(io, n.Args[i].Value); why != "" {
			return nil, fmt.Sprintf("operand %d: %s", i, why)
		}
		// A quantized convolution's qint8 output exists only in NHWC.
		if src := io.xq.Args[0].Value; src.Def != nil && quantConv(src.Def) {
			return nil, fmt.Sprintf("operand %d is a quantized convolution's (NHWC) output", i)
		}
	}
	m.bq, m.bd, m.b = other.xq, other.xd, other.x
	if why := matchQOut(&m.qio, n.Results[0], "quantized add"); why != "" {
		return nil, why
	}
	return m, ""
}

// checkAdd is the add rule: alpha 1, and the whole pattern when both
// operands are dequantized.
func checkAdd(c *checker, n *ir.Node) string {
	if quantAdd(n) {
		_, why := matchQAdd(n)
		return why
	}
	return checkAlphaOne(c, n)
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
		id, ok := s.ids[q.Results[0]]
		if !ok {
			return fmt.Errorf("operand %d: %s has no qint8 value", i, q.Results[0])
		}
		in[i] = id
	}
	out, err := s.quantOut(&m.qio, false)
	if err != nil {
		return err
	}
	s.add(xnnfb.XNodeUnionXNNAdd, &xnnfb.XNNNode2x1T{Input1Id: in[0], Input2Id: in[1], OutputId: out}, s.handle, nil)
	return s.quantOutConverts(&m.qio, out, false)
}
