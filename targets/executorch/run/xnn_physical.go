package run

import "github.com/fxport/fxport/interp"

// The XNNPACK runtime reads and writes a delegate's external tensors as raw
// memory: a channels-last argument (dim order [0, 2, 3, 1]) is an NHWC
// tensor to the delegate graph, whose external value is declared with NHWC
// dims (exir's ConvertMemoryFormat visitor). The emulator keeps values in
// logical order, so it permutes an external tensor into its physical order
// on the way in and back on the way out.

// physicalIn returns slot value vi's tensor x in memory order (x itself
// for a contiguous slot or a non-slot value).
func (m *Method) physicalIn(vi int, x *interp.Tensor) (*interp.Tensor, error) {
	s, ok := m.vals[vi].(*slot)
	if !ok || identityOrder(s.dimOrder) || len(s.dimOrder) != x.Rank() {
		return x, nil
	}
	perm := make([]int64, len(s.dimOrder))
	for i, d := range s.dimOrder {
		perm[i] = int64(d)
	}
	return permute(x, perm)
}

// logicalOut maps a delegate result v, in slot vi's memory order, back to
// logical order (v itself for a contiguous slot or a non-slot value).
func (m *Method) logicalOut(vi int, v *interp.Tensor) (*interp.Tensor, error) {
	s, ok := m.vals[vi].(*slot)
	if !ok || identityOrder(s.dimOrder) || len(s.dimOrder) != v.Rank() {
		return v, nil
	}
	inv := make([]int64, len(s.dimOrder))
	for p, d := range s.dimOrder {
		inv[d] = int64(p)
	}
	return permute(v, inv)
}
