package run

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// opETView is ExecuTorch's aliasing view prim op (exir's memory.view).
var opETView = ir.OpExecutorchPrimEtView

// etView runs executorch_prim::et_view.default(self, size, out) as the
// runtime's kernel does: out gets the size list's shape (one -1 resolved
// from self's element count) and its data pointer is set to self's bytes,
// so out aliases self and nothing is copied. The checks are the kernel's:
// same dtype, out's rank equal to the size list's length, equal element
// counts; and, because the bytes are reinterpreted in place, both tensors
// must have the default dim order. A static out must get its declared
// shape, a dynamic one a shape within its bound.
func (m *Method) etView(k *etfb.KernelCallT) error {
	if len(k.Args) != 3 {
		return fmt.Errorf("executorch_prim::et_view: %d arguments, want self, size, out", len(k.Args))
	}
	for _, a := range k.Args {
		if a < 0 || int(a) >= len(m.vals) {
			return fmt.Errorf("executorch_prim::et_view: value index %d out of range", a)
		}
	}
	self, ok1 := m.vals[k.Args[0]].(*slot)
	out, ok2 := m.vals[k.Args[2]].(*slot)
	if !ok1 || !ok2 {
		return fmt.Errorf("executorch_prim::et_view: self (value %d) and out (value %d) must be tensors", k.Args[0], k.Args[2])
	}
	sv, err := m.value(int(k.Args[1]))
	if err != nil {
		return fmt.Errorf("executorch_prim::et_view: size: %w", err)
	}
	items, ok := sv.([]any)
	if !ok {
		return fmt.Errorf("executorch_prim::et_view: size (value %d) is not an int list", k.Args[1])
	}
	if self.dt != out.dt {
		return fmt.Errorf("executorch_prim::et_view: self is %s, out is %s", self.dt, out.dt)
	}
	if len(items) != len(out.sizes) {
		return fmt.Errorf("executorch_prim::et_view: %d sizes for a rank-%d out", len(items), len(out.sizes))
	}
	if !identityOrder(self.dimOrder) || !identityOrder(out.dimOrder) {
		return fmt.Errorf("executorch_prim::et_view: self (dim order %v) and out (dim order %v) must be contiguous", self.dimOrder, out.dimOrder)
	}
	if self.mem == nil {
		return fmt.Errorf("executorch_prim::et_view: self (value %d) has no memory", k.Args[0])
	}
	shape, err := viewShape(items, numel(self.shape))
	if err != nil {
		return fmt.Errorf("executorch_prim::et_view: %w", err)
	}
	for i, d := range shape {
		if (out.dyn == etfb.TensorShapeDynamismSTATIC && d != out.sizes[i]) || d > out.sizes[i] {
			return fmt.Errorf("executorch_prim::et_view: shape %v for out of declared sizes %v (%s)", shape, out.sizes, etfb.EnumNamesTensorShapeDynamism[out.dyn])
		}
	}
	need := numel(shape) * int64(out.dt.Size())
	if int64(len(self.mem)) < need {
		return fmt.Errorf("executorch_prim::et_view: self holds %d bytes, the view needs %d", len(self.mem), need)
	}
	out.mem = self.mem[:need:need]
	out.shape = shape
	return nil
}

// viewShape resolves the size list of a view of n elements: at most one -1
// (inferred; not with a zero size), other sizes non-negative, the product n.
func viewShape(items []any, n int64) ([]int64, error) {
	shape := make([]int64, len(items))
	infer, prod, zeros := -1, int64(1), 0
	for i, it := range items {
		d, ok := it.(int64)
		if !ok {
			return nil, fmt.Errorf("size item %d is not an int", i)
		}
		switch {
		case d == -1 && infer >= 0:
			return nil, fmt.Errorf("at most one view dim can be -1")
		case d == -1:
			infer = i
			continue
		case d < 0:
			return nil, fmt.Errorf("negative size %d", d)
		case d == 0:
			zeros++
		}
		shape[i] = d
		prod *= d
	}
	if infer >= 0 {
		if zeros > 0 || prod == 0 {
			return nil, fmt.Errorf("cannot infer a -1 dim with a zero dim")
		}
		shape[infer] = n / prod
		prod *= shape[infer]
	}
	if prod != n {
		return nil, fmt.Errorf("view of %v (%d elements) of a %d-element tensor", shape, prod, n)
	}
	return shape, nil
}
