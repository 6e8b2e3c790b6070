package emit

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// opETView is the aliasing view replace-view-copy-with-view makes (exir's
// memory.view).
var opETView = ir.OpExecutorchPrimEtView

// emitView emits an et_view node as exir's _emit_view does. A view of static
// shape whose storage is planned (its base's) needs no instruction: its
// value aliases the base's bytes by its allocation alone. Otherwise (a
// symbolic shape, or a base without planned storage) it is the kernel call
// executorch_prim::et_view.default(self, size, out), the operator named with
// the explicit overload "default" (the runtime looks up
// "executorch_prim::et_view.default"), size a boxed IntList, and out a
// fresh tensor value whose allocation is its base's (the planner puts the
// view in its base's storage class), so the kernel's pointing out at self's
// bytes copies nothing. An out whose recorded allocation differs from its
// base's means the plan is stale or the view was not planned with its
// base: an error.
func (m *method) emitView(n *ir.Node) error {
	if len(n.Args) != 2 || n.Args[0].Kind != ir.ArgValue || len(n.Results) != 1 {
		return n.Errorf("et_view: want (self, size) and one result")
	}
	self, err := m.operand(n.Args[0].Value)
	if err != nil {
		return n.Errorf("argument \"self\": %v", err)
	}
	base, ok := m.plan.Values[self].Val.Value.(*etfb.TensorT)
	if !ok {
		return n.Errorf("et_view of a non-tensor value %d", self)
	}
	if base.AllocationInfo == nil && base.DataBufferIdx > 0 {
		return n.Errorf("et_view of constant %s is not supported (replace-view-copy-with-view keeps views of constants as view_copy)", n.Args[0].Value)
	}
	// exir's _emit_view elides a static, memory-planned view: only its
	// value is emitted (it points at its base's bytes), no size list and
	// no kernel.
	elide := base.AllocationInfo != nil && isStatic(n.Results[0].Type)
	var size int32
	if !elide {
		if size, err = m.arg(ir.SchemaType{Base: ir.KInt, List: true}, n.Args[1]); err != nil {
			return n.Errorf("argument \"size\": %v", err)
		}
	}
	out, err := m.emitResult(n.Results[0])
	if err != nil {
		return n.Errorf("result: %v", err)
	}
	view := m.plan.Values[out].Val.Value.(*etfb.TensorT)
	if !sameAllocation(base.AllocationInfo, view.AllocationInfo) {
		return n.Errorf("et_view result %s is planned at %s, its base %s at %s; they must share storage (re-run plan-memory)",
			n.Results[0], allocString(view.AllocationInfo), n.Args[0].Value, allocString(base.AllocationInfo))
	}
	if elide {
		return nil
	}
	// et_view is registered with its overload spelled out
	// (executorch_prim::et_view.default), unlike the ops of operatorIndex.
	info := ir.OpExecutorchPrimEtView.Info()
	name := info.Namespace + "::" + info.Base
	key := name + "." + info.Overload
	op, ok := m.ops[key]
	if !ok {
		m.plan.Operators = append(m.plan.Operators, &etfb.OperatorT{Name: name, Overload: info.Overload})
		op = int32(len(m.plan.Operators) - 1)
		m.ops[key] = op
	}
	m.chain.Instructions = append(m.chain.Instructions, &etfb.InstructionT{InstrArgs: &etfb.InstructionArgumentsT{
		Type:  etfb.InstructionArgumentsKernelCall,
		Value: &etfb.KernelCallT{OpIndex: op, Args: []int32{self, size, out}},
	}})
	return nil
}

// isStatic reports whether t is a tensor type whose dims are all constants.
func isStatic(t ir.Type) bool {
	tt, ok := t.(*ir.TensorType)
	if !ok {
		return false
	}
	for _, d := range tt.Shape {
		if _, ok := d.Const(); !ok {
			return false
		}
	}
	return true
}

func sameAllocation(a, b *etfb.AllocationDetailsT) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.MemoryId == b.MemoryId && a.MemoryOffsetLow == b.MemoryOffsetLow && a.MemoryOffsetHigh == b.MemoryOffsetHigh
}

func allocString(a *etfb.AllocationDetailsT) string {
	if a == nil {
		return "no planned storage"
	}
	return fmt.Sprintf("memory %d offset %d", a.MemoryId, uint64(a.MemoryOffsetLow)|uint64(a.MemoryOffsetHigh)<<32)
}
