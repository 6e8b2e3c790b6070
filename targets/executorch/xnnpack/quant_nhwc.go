package xnnpack

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// Layout of qint8 values between quantized ops. A quantized convolution
// writes its qint8 output in NHWC only; a quantized add, sub or mul with
// such an operand (directly, or through another NHWC one) computes in NHWC
// too, transposing an NCHW qint8 operand (a static transpose keeps the
// quantization). Consumers read a producer's qint8 value (the quantize's
// result), transposed to their layout when needed, never the fp32
// dequantized one; the XNNConvert back to fp32 is written only for
// dequantized results something else reads.

// qNHWC reports whether n's quantized output exists only in NHWC.
func qNHWC(n *ir.Node) bool {
	if quantConv(n) || quantPool(n) {
		return true
	}
	if !quantAdd(n) {
		return false
	}
	for _, a := range n.Args[:2] {
		dq := a.Value.Def // dequantize(quantize(src))
		q := dq.Args[0].Value.Def
		if q == nil || q.Op != opQuant {
			continue
		}
		if src := q.Args[0].Value; src.Def != nil && qNHWC(src.Def) {
			return true
		}
	}
	return false
}

// sameRank4 checks that an NHWC binary op's operands and result share one
// rank-4 shape.
func sameRank4(n *ir.Node) string {
	out := n.Results[0].Tensor()
	if out.Rank() != 4 {
		return "an operand from a quantized convolution (NHWC) needs a rank-4 result"
	}
	for _, a := range n.Args[:2] {
		t := a.Value.Tensor()
		if t.Rank() != 4 {
			return "an operand from a quantized convolution (NHWC) needs rank-4 operands"
		}
		for i := range t.Shape {
			if !t.Shape[i].Equal(out.Shape[i]) {
				return "an operand from a quantized convolution (NHWC) needs operands of the result's shape (no broadcasting)"
			}
		}
	}
	return ""
}

// qNHWCOf returns the NHWC qint8 value of quantize q, transposing its NCHW
// qint8 value once when that is the only one.
func (s *ser) qNHWCOf(q *ir.Node, p qparams) (uint32, error) {
	r := q.Results[0]
	if id, ok := s.nhwc[r]; ok {
		return id, nil
	}
	src, ok := s.ids[r]
	if !ok {
		return 0, fmt.Errorf("%s has no qint8 value", r)
	}
	if r.Tensor().Rank() != 4 {
		return 0, fmt.Errorf("%s is not rank 4", r)
	}
	id, err := s.defineQ(r, permDims(dimsOf(r, s.env), toNHWC), internal, 0, 0, qint8Of(p))
	if err != nil {
		return 0, err
	}
	s.nhwc[r] = id
	s.transpose(src, id, toNHWC)
	return id, nil
}

// qNCHWOf returns the NCHW (as-typed) qint8 value of quantize q,
// transposing its NHWC qint8 value once when that is the only one.
func (s *ser) qNCHWOf(q *ir.Node, p qparams) (uint32, error) {
	r := q.Results[0]
	if id, ok := s.ids[r]; ok {
		return id, nil
	}
	src, ok := s.nhwc[r]
	if !ok {
		return 0, fmt.Errorf("%s has no qint8 value", r)
	}
	id, err := s.defineQ(r, dimsOf(r, s.env), internal, 0, 0, qint8Of(p))
	if err != nil {
		return 0, err
	}
	s.ids[r] = id
	s.transpose(src, id, toNCHW)
	return id, nil
}

// onlyQuantReaders reports whether dequantize d's result is read only by
// matched quantized ops through its qint8 value (and is not a region
// output), so that no fp32 form is needed.
func (s *ser) onlyQuantReaders(d *ir.Node) bool {
	r := d.Results[0]
	if _, isOut := s.outExt[r]; isOut || r.NumUses() == 0 {
		return false
	}
	for _, u := range r.Uses() {
		if u.IsReturn() {
			return false
		}
		if m := s.qfcs[u]; m != nil && m.xd == d {
			continue
		}
		if m := s.qconvs[u]; m != nil && m.xd == d {
			continue
		}
		if m := s.qpools[u]; m != nil && m.xd == d {
			continue
		}
		if s.readsAsQAdd(u, d) {
			continue
		}
		return false
	}
	return true
}
