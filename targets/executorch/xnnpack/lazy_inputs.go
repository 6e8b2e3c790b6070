package xnnpack

import "github.com/fxport/fxport/ir"

// Runtime inputs of a delegate get their external ids from the call's
// operand order but are defined as XNNPACK values where a node first reads
// them, as exir's node visitors define a placeholder's value on first use
// (djl_mixed_xnnpack_portable_stress_mlp.pte: the second branch's inputs,
// external ids 2 and 3, are values 18 and 19, after the first branch's
// nodes); input_ids lists them in definition order.

// lazyInput defines runtime input v on its first read and reports whether
// v is a runtime input at all.
func (s *ser) lazyInput(v *ir.Value) (uint32, bool, error) {
	ext, ok := s.inExt[v]
	if !ok {
		return 0, false, nil
	}
	dims := dimsOf(v, s.env)
	if isCL(v) { // dimorder_copy.go: its memory holds NHWC
		dims = permDims(dims, toNHWC)
	}
	id, err := s.define(v, dims, ext, flagInput, 0)
	if err != nil {
		return 0, true, err
	}
	delete(s.inExt, v)
	if isCL(v) {
		s.nhwc[v] = id
	} else {
		s.ids[v] = id
	}
	s.g.InputIds = append(s.g.InputIds, id)
	return id, true, nil
}

// defineUnread defines the runtime inputs no node read (in external-id
// order), so every external id has a value.
func (s *ser) defineUnread(inputs []*ir.Value) error {
	for _, v := range inputs {
		if _, _, err := s.lazyInput(v); err != nil {
			return err
		}
	}
	return nil
}
