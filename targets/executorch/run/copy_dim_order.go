package run

import (
	"fmt"
	"slices"

	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

var (
	opCloneOut    = ir.OpAtenCloneOut
	opEtCopyIndex = ir.OpExecutorchPrimEtCopyIndexTensor
)

// checkCopyDimOrder refuses the byte copies whose dim orders the runtime
// does not reconcile (the emitter's loop copies; the lowering pass
// loop-carry-copies makes their dim orders agree), where the runner's
// kernels, which copy logically, would hide the mismatch:
//
//   - aten::clone.out(self, memory_format, out): the portable kernel
//     requires self and out to have the same dim order;
//   - executorch_prim::et_copy_index(copy_to, copy_from, index): it copies
//     copy_from's bytes as row index of copy_to, so copy_to's rows must be
//     contiguous blocks (its dim order starts with dim 0) laid out in
//     copy_from's dim order.
//
// Other ops are not checked.
func (m *Method) checkCopyDimOrder(op ir.Op, k *etfb.KernelCallT) error {
	switch {
	case op == opCloneOut && len(k.Args) >= 3:
		self, okS := m.slotAt(int(k.Args[0]))
		out, okO := m.slotAt(int(k.Args[2]))
		if okS && okO && !slices.Equal(self.dimOrder, out.dimOrder) {
			return fmt.Errorf("aten::clone.out: self (value %d) has dim order %v, out (value %d) %v; the portable kernel requires them equal", k.Args[0], self.dimOrder, k.Args[2], out.dimOrder)
		}
	case op == opEtCopyIndex && len(k.Args) >= 2:
		to, okT := m.slotAt(int(k.Args[0]))
		from, okF := m.slotAt(int(k.Args[1]))
		if !okT || !okF || len(to.dimOrder) != len(from.dimOrder)+1 {
			return nil
		}
		row := make([]int, 0, len(from.dimOrder))
		for _, d := range to.dimOrder[1:] {
			row = append(row, d-1)
		}
		if to.dimOrder[0] != 0 || !slices.Equal(row, from.dimOrder) {
			return fmt.Errorf("executorch_prim::et_copy_index: copy_to (value %d, dim order %v) does not hold copy_from (value %d, dim order %v) as contiguous rows; the kernel copies bytes", k.Args[0], to.dimOrder, k.Args[1], from.dimOrder)
		}
	}
	return nil
}

// slotAt is value vi's tensor slot, if it is one.
func (m *Method) slotAt(vi int) (*slot, bool) {
	if vi < 0 || vi >= len(m.vals) {
		return nil, false
	}
	s, ok := m.vals[vi].(*slot)
	return s, ok
}
