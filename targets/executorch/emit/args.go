package emit

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// arg emits one kernel-call argument of schema type t (pte-format.md §4.2)
// and returns its value index. Operands refer to their existing value;
// every literal gets a fresh value (exir does not deduplicate them).
func (m *method) arg(t ir.SchemaType, a ir.Arg) (int32, error) {
	if a.Kind == ir.ArgNone {
		if t.Base == ir.KTensor && !t.Optional && !t.List {
			// A plain Tensor slot holding None: an empty BYTE tensor.
			return m.add(evTensor(&etfb.TensorT{ScalarType: etfb.ScalarTypeBYTE, Sizes: []int32{0}, DimOrder: []byte{0}})), nil
		}
		return m.add(evNull()), nil
	}
	if a.Kind == ir.ArgValue {
		return m.operand(a.Value)
	}
	if !t.List {
		if a.Kind == ir.ArgInt && (t.Base == ir.KFloat || t.Base == ir.KSymFloat) {
			// The kernel reads a float argument with EValue::toDouble,
			// which refuses an Int.
			return m.add(evDouble(float64(a.Int))), nil
		}
		return m.literal(a)
	}
	if a.Kind != ir.ArgList {
		return 0, fmt.Errorf("%s expects a list, got %s", t, a)
	}
	switch t.Base {
	case ir.KInt, ir.KSymInt:
		// Boxed: items are indices of separately emitted Int values.
		items := make([]int64, len(a.List))
		for i, e := range a.List {
			idx, err := m.arg(ir.SchemaType{Base: t.Base}, e)
			if err != nil {
				return 0, fmt.Errorf("item %d: %w", i, err)
			}
			if k := m.plan.Values[idx].Val.Type; k != etfb.KernelTypesInt {
				return 0, fmt.Errorf("item %d of an int list is a %s value", i, etfb.EnumNamesKernelTypes[k])
			}
			items[i] = int64(idx)
		}
		return m.add(&etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesIntList, Value: &etfb.IntListT{Items: items}}}), nil
	case ir.KFloat, ir.KSymFloat:
		items := make([]float64, len(a.List))
		for i, e := range a.List {
			switch e.Kind {
			case ir.ArgFloat:
				items[i] = e.Float
			case ir.ArgInt:
				items[i] = float64(e.Int)
			default:
				return 0, fmt.Errorf("item %d of a float list is %s (only literals are supported)", i, e)
			}
		}
		return m.add(&etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesDoubleList, Value: &etfb.DoubleListT{Items: items}}}), nil
	case ir.KBool, ir.KSymBool:
		items := make([]bool, len(a.List))
		for i, e := range a.List {
			if e.Kind != ir.ArgBool {
				return 0, fmt.Errorf("item %d of a bool list is %s (only literals are supported)", i, e)
			}
			items[i] = e.Bool()
		}
		return m.add(&etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesBoolList, Value: &etfb.BoolListT{Items: items}}}), nil
	case ir.KTensor:
		items := make([]int32, len(a.List))
		for i, e := range a.List {
			if e.Kind == ir.ArgNone && t.ElemOptional {
				items[i] = -1
				continue
			}
			if e.Kind != ir.ArgValue {
				return 0, fmt.Errorf("item %d of a tensor list is %s", i, e)
			}
			idx, err := m.operand(e.Value)
			if err != nil {
				return 0, fmt.Errorf("item %d: %w", i, err)
			}
			items[i] = idx
		}
		if t.ElemOptional {
			return m.add(&etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesOptionalTensorList, Value: &etfb.OptionalTensorListT{Items: items}}}), nil
		}
		return m.add(&etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesTensorList, Value: &etfb.TensorListT{Items: items}}}), nil
	}
	return 0, fmt.Errorf("list of %s is not supported by the emitter", ir.SchemaType{Base: t.Base})
}

// operand is the value index of an already emitted IR value.
func (m *method) operand(v *ir.Value) (int32, error) {
	idx, ok := m.index[v]
	if !ok {
		return 0, fmt.Errorf("%s is used before it is emitted", v)
	}
	return idx, nil
}

// literal emits a fresh scalar value for a literal argument.
func (m *method) literal(a ir.Arg) (int32, error) {
	switch a.Kind {
	case ir.ArgInt:
		return m.add(evInt(a.Int)), nil
	case ir.ArgFloat:
		return m.add(evDouble(a.Float)), nil
	case ir.ArgBool:
		return m.add(evBool(a.Bool())), nil
	case ir.ArgString:
		return m.add(evString(a.Str)), nil
	case ir.ArgNone:
		return m.add(evNull()), nil
	case ir.ArgDType:
		st, err := scalarType(a.DType())
		if err != nil {
			return 0, err
		}
		return m.add(evInt(int64(st))), nil
	case ir.ArgLayout:
		if ir.Layout(a.Int) != ir.LayoutStrided {
			return 0, fmt.Errorf("layout %s: only torch.strided is supported", a)
		}
		return m.add(evInt(0)), nil
	case ir.ArgMemoryFormat:
		c, err := memoryFormatCode(ir.MemoryFormat(a.Int))
		if err != nil {
			return 0, err
		}
		return m.add(evInt(c)), nil
	}
	return 0, fmt.Errorf("argument %s (%s) cannot be emitted", a, a.Kind)
}
