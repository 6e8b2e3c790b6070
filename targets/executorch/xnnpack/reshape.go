package xnnpack

import "github.com/fxport/fxport/ir"

// reshapeDims is XNNStaticReshape's new_shape for a view_copy, squeeze or
// unsqueeze node. A view_copy with a literal size list writes the list as
// exir's view_copy visitor does, torch's -1 (inferred dim) as XNNPACK's 0,
// even when the result's size is static; otherwise (squeeze, unsqueeze:
// ET-P16) the result's dims, 0 for a dynamic one. A size list holding
// SymInt values never gets here: exir's ViewCopyConfig rejects symbolic
// reshapes ("Symbolic reshape is not supported"), and so does the support
// rule (such an operand is not a tensor).
func reshapeDims(n *ir.Node) []uint32 {
	if n.Op == opView {
		if size := n.Arg("size"); size.Kind == ir.ArgList {
			out := make([]uint32, 0, len(size.List))
			for _, e := range size.List {
				if e.Kind != ir.ArgInt || e.Int < -1 {
					out = nil
					break
				}
				if e.Int == -1 {
					out = append(out, 0)
				} else {
					out = append(out, uint32(e.Int))
				}
			}
			if out != nil && len(out) == n.Results[0].Tensor().Rank() {
				return out
			}
		}
	}
	t := n.Results[0].Tensor()
	shape := make([]uint32, t.Rank())
	for i, d := range t.Shape {
		if k, ok := d.Const(); ok {
			shape[i] = uint32(k)
		}
	}
	return shape
}
