package emit

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// scalarType maps an IR dtype to ExecuTorch's ScalarType (c10 codes,
// pte-format.md §2.4: torch.export code − 1 for BYTE … BOOL, the rest by
// table).
func scalarType(d ir.DType) (etfb.ScalarType, error) {
	code := d.PT2Code()
	switch {
	case code >= 1 && code <= 12:
		return etfb.ScalarType(code - 1), nil
	}
	m := map[int]etfb.ScalarType{13: 15, 28: 27, 29: 24, 30: 23, 31: 26, 32: 25, 34: 28, 35: 29}
	if st, ok := m[code]; ok {
		return st, nil
	}
	return 0, fmt.Errorf("dtype %s has no ExecuTorch scalar type", d)
}

// memoryFormatCode is c10's MemoryFormat enum value.
func memoryFormatCode(m ir.MemoryFormat) (int64, error) {
	switch m {
	case ir.ContiguousFormat:
		return 0, nil
	case ir.PreserveFormat:
		return 1, nil
	case ir.ChannelsLast:
		return 2, nil
	case ir.ChannelsLast3d:
		return 3, nil
	}
	return 0, fmt.Errorf("memory format %v has no c10 code", m)
}

// tensorValue builds the Tensor table of t: sizes at their upper bounds
// (DYNAMIC_BOUND when any dim is symbolic), dim order, no storage yet.
func tensorValue(t *ir.TensorType, env *sym.Env) (*etfb.TensorT, error) {
	st, err := scalarType(t.DType)
	if err != nil {
		return nil, err
	}
	info, err := deviceInfo(t.Device) // CPU or CUDA (cuda_delegate.go)
	if err != nil {
		return nil, err
	}
	tv := &etfb.TensorT{ScalarType: st, Sizes: make([]int32, len(t.Shape)), DimOrder: make([]byte, len(t.Shape)), ExtraTensorInfo: info}
	for i, d := range t.Shape {
		v, ok := d.Const()
		if !ok {
			if env == nil {
				return nil, fmt.Errorf("dim %d (%s) is symbolic and the program has no range constraints", i, d)
			}
			b := env.UpperBound(d)
			if !b.IsFinite() {
				return nil, fmt.Errorf("dim %d (%s) has no finite upper bound; run widen-symbol-ranges (ET-PF01)", i, d)
			}
			v = b.V
			tv.ShapeDynamism = etfb.TensorShapeDynamismDYNAMIC_BOUND
		}
		if v < 0 || v > 1<<31-1 {
			return nil, fmt.Errorf("dim %d is %d, outside int32", i, v)
		}
		tv.Sizes[i] = int32(v)
	}
	for i := range tv.DimOrder {
		tv.DimOrder[i] = byte(i)
	}
	if t.DimOrder != nil {
		if len(t.DimOrder) != len(t.Shape) {
			return nil, fmt.Errorf("dim order %v for rank %d", t.DimOrder, len(t.Shape))
		}
		for i, d := range t.DimOrder {
			tv.DimOrder[i] = byte(d)
		}
	}
	return tv, nil
}

func evInt(v int64) *etfb.EValueT {
	return &etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesInt, Value: &etfb.IntT{IntVal: v}}}
}
func evDouble(v float64) *etfb.EValueT {
	return &etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesDouble, Value: &etfb.DoubleT{DoubleVal: v}}}
}
func evBool(v bool) *etfb.EValueT {
	return &etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesBool, Value: &etfb.BoolT{BoolVal: v}}}
}
func evString(s string) *etfb.EValueT {
	return &etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesString, Value: &etfb.StringT{StringVal: s}}}
}
func evNull() *etfb.EValueT {
	return &etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesNull, Value: &etfb.NullT{}}}
}
func evTensor(t *etfb.TensorT) *etfb.EValueT {
	return &etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesTensor, Value: t}}
}
