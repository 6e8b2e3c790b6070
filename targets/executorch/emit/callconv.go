package emit

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/callconv"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// writtenTensors are the tensor values a mutable argument emitted as value
// idx refers to: the tensor itself, or a TensorList's items.
func (m *method) writtenTensors(idx int32) []int32 {
	v := m.plan.Values[idx]
	if v.Val == nil {
		return nil
	}
	switch v.Val.Type {
	case etfb.KernelTypesTensor:
		return []int32{idx}
	case etfb.KernelTypesTensorList:
		return append([]int32(nil), v.Val.Value.(*etfb.TensorListT).Items...)
	}
	return nil
}

// returnSlot binds n's results to values and returns the value of the
// kernel call's return slot (callconv), or -1 when the call has none. An
// out variant's (or in-place op's) results are the tensors it writes, in
// order (mutable); other results are fresh values. Several return values
// go into one TensorList, as exir's emitter writes them.
func (m *method) returnSlot(n *ir.Node, info *ir.OpInfo, mutable []int32) (int32, error) {
	writes := n.Op.Has(ir.PropOutVariant) || n.Op.Has(ir.PropInplace) || callconv.IsOut(&info.Schema)
	vals := make([]int32, len(n.Results))
	if writes && len(mutable) == len(n.Results) {
		for i, r := range n.Results {
			vals[i] = mutable[i]
			m.index[r] = mutable[i]
		}
	} else {
		for i, r := range n.Results {
			idx, err := m.emitResult(r)
			if err != nil {
				return 0, n.Errorf("result %d: %v", i, err)
			}
			vals[i] = idx
		}
	}
	slot := callconv.ReturnSlot(&info.Schema)
	if callconv.IsOut(&info.Schema) {
		// The slot holds the out tensors, whatever the results are (a
		// Tensor[] out returns nothing).
		vals = mutable
	}
	switch slot {
	case callconv.NoSlot:
		if len(vals) != 0 {
			return 0, n.Errorf("%s returns nothing but the node has %d results", info.Name, len(vals))
		}
		return -1, nil
	case callconv.ValueSlot:
		if len(vals) != 1 {
			return 0, n.Errorf("%s returns one value but the node has %d", info.Name, len(vals))
		}
		return vals[0], nil
	}
	return m.add(&etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesTensorList, Value: &etfb.TensorListT{Items: vals}}}), nil
}
