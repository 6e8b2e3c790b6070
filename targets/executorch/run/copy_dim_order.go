package run

import (
	"fmt"
	"slices"
	"strings"

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
// The out variants of pointwise ops (ir.PropPointwise on the op or its
// functional twin: torch's pointwise tag) are checked as the portable
// kernels check them (tensors_have_same_dim_order): their tensor operands
// and outs must be all in the contiguous dim order or all channels-last.
//
// Other ops are not checked.
func (m *Method) checkCopyDimOrder(op ir.Op, k *etfb.KernelCallT) error {
	if err := m.checkPointwiseDimOrders(op, k); err != nil {
		return err
	}
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

// checkPointwiseDimOrders refuses a pointwise out variant whose tensors
// are not all contiguous or all channels-last.
func (m *Method) checkPointwiseDimOrders(op ir.Op, k *etfb.KernelCallT) error {
	info := op.Info()
	if !op.Has(ir.PropOutVariant) {
		return nil
	}
	if !op.Has(ir.PropPointwise) {
		if fn := op.FunctionalTwin(); !fn.Valid() || !fn.Has(ir.PropPointwise) {
			return nil
		}
	}
	allContig, allCL := true, true
	var seen []string
	for i, a := range info.Schema.Args {
		if i >= len(k.Args) || a.Type.Base != ir.KTensor || a.Type.List {
			continue
		}
		s, ok := m.slotAt(int(k.Args[i]))
		if !ok {
			continue
		}
		allContig = allContig && identityOrder(s.dimOrder)
		allCL = allCL && channelsLastOrder(s.dimOrder)
		seen = append(seen, fmt.Sprintf("%s (value %d) %v", a.Name, k.Args[i], s.dimOrder))
	}
	if len(seen) > 1 && !allContig && !allCL {
		return fmt.Errorf("%s: tensors of different dim orders: %s; the portable kernel requires all contiguous or all channels-last (tensors_have_same_dim_order) and fails the call",
			op, strings.Join(seen, ", "))
	}
	return nil
}

// channelsLastOrder reports whether order is ExecuTorch's channels-last
// dim order (4-D {0,2,3,1}, 5-D {0,2,3,4,1}).
func channelsLastOrder(order []int) bool {
	switch len(order) {
	case 4:
		return slices.Equal(order, []int{0, 2, 3, 1})
	case 5:
		return slices.Equal(order, []int{0, 2, 3, 4, 1})
	}
	return false
}
