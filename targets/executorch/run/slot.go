package run

import (
	"fmt"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// slot is a tensor value of a method: its declared type and its memory.
// mem is a window of a planned arena (planned tensors), a private copy of
// constant bytes, or a buffer allocated when the value is first bound
// (unplanned inputs and outputs); nil until then.
type slot struct {
	index    int // value index, for errors
	dt       ir.DType
	sizes    []int64 // declared sizes (the upper bound when dynamic)
	shape    []int64 // current sizes
	dimOrder []int
	dyn      etfb.TensorShapeDynamism
	mem      []byte
	planned  bool
	constant bool
}

func numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

func identityOrder(o []int) bool {
	for i, d := range o {
		if d != i {
			return false
		}
	}
	return true
}

func toValues(xs []int64) []interp.Value {
	out := make([]interp.Value, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// permute runs aten.permute on t.
func permute(t *interp.Tensor, perm []int64) (*interp.Tensor, error) {
	outs, err := interp.RunOp(ir.OpAtenPermute, []interp.Value{t, toValues(perm)})
	if err != nil {
		return nil, err
	}
	return outs[0].(*interp.Tensor), nil
}

// read decodes the slot's current contents as a fresh tensor (a copy: a
// later write to the arena does not change it).
func (s *slot) read() (*interp.Tensor, error) {
	if s.mem == nil {
		return nil, fmt.Errorf("value %d: tensor has no memory (an unbound input or a value read before it is written)", s.index)
	}
	n := numel(s.shape)
	size := int64(s.dt.Size())
	if n*size > int64(len(s.mem)) {
		return nil, fmt.Errorf("value %d: shape %v needs %d bytes, has %d", s.index, s.shape, n*size, len(s.mem))
	}
	phys := make([]int64, len(s.shape))
	for i, d := range s.dimOrder {
		phys[i] = s.shape[d]
	}
	t, err := interp.FromBytes(s.dt, phys, s.mem[:n*size])
	if err != nil {
		return nil, fmt.Errorf("value %d: %w", s.index, err)
	}
	if identityOrder(s.dimOrder) {
		return t, nil
	}
	inv := make([]int64, len(s.dimOrder))
	for p, d := range s.dimOrder {
		inv[d] = int64(p)
	}
	return permute(t, inv)
}

// write stores r (converted to the slot's dtype) into the slot's memory,
// resizing a dynamic tensor within its bound and allocating memory for an
// unplanned one.
func (s *slot) write(r *interp.Tensor) error {
	if s.constant {
		return fmt.Errorf("value %d: write to a constant tensor", s.index)
	}
	if len(r.Shape) != len(s.sizes) {
		return fmt.Errorf("value %d: result of rank %d (shape %v) for a rank-%d tensor %v", s.index, len(r.Shape), r.Shape, len(s.sizes), s.sizes)
	}
	size := int64(s.dt.Size())
	need := numel(r.Shape) * size
	switch {
	case s.dyn == etfb.TensorShapeDynamismSTATIC:
		for i := range r.Shape {
			if r.Shape[i] != s.sizes[i] {
				return fmt.Errorf("value %d: result shape %v for a static tensor of shape %v", s.index, r.Shape, s.sizes)
			}
		}
	case s.dyn == etfb.TensorShapeDynamismDYNAMIC_BOUND && s.planned:
		for i := range r.Shape {
			if r.Shape[i] > s.sizes[i] {
				return fmt.Errorf("value %d: result shape %v exceeds the upper bound %v", s.index, r.Shape, s.sizes)
			}
		}
	}
	if s.mem == nil || (!s.planned && int64(len(s.mem)) < need) {
		s.mem = make([]byte, need)
	}
	if int64(len(s.mem)) < need {
		return fmt.Errorf("value %d: result shape %v needs %d bytes, the planned window holds %d", s.index, r.Shape, need, len(s.mem))
	}
	if r.DType != s.dt {
		r = r.To(s.dt)
	}
	logical := append([]int64(nil), r.Shape...)
	if !identityOrder(s.dimOrder) {
		perm := make([]int64, len(s.dimOrder))
		for i, d := range s.dimOrder {
			perm[i] = int64(d)
		}
		var err error
		if r, err = permute(r, perm); err != nil {
			return fmt.Errorf("value %d: %w", s.index, err)
		}
	}
	copy(s.mem, r.Bytes())
	s.shape = logical
	return nil
}
