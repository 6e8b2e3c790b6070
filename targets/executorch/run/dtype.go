package run

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// dtypeOf maps an ExecuTorch ScalarType (c10 codes) to an IR dtype: c10
// codes 0–11 are torch.export codes minus one, the rest go by table
// (pte-format.md §2.4).
func dtypeOf(st etfb.ScalarType) (ir.DType, error) {
	code := int(st)
	pt2 := -1
	switch {
	case code >= 0 && code <= 11:
		pt2 = code + 1
	default:
		m := map[int]int{15: 13, 27: 28, 24: 29, 23: 30, 26: 31, 25: 32, 28: 34, 29: 35}
		if v, ok := m[code]; ok {
			pt2 = v
		}
	}
	if pt2 >= 0 {
		if d, ok := ir.DTypeFromPT2(pt2); ok {
			return d, nil
		}
	}
	return 0, fmt.Errorf("scalar type %d (%s) has no IR dtype", code, etfb.EnumNamesScalarType[st])
}

// memoryFormatOf maps c10's MemoryFormat enum value to the IR's.
func memoryFormatOf(code int64) (ir.MemoryFormat, error) {
	switch code {
	case 0:
		return ir.ContiguousFormat, nil
	case 1:
		return ir.PreserveFormat, nil
	case 2:
		return ir.ChannelsLast, nil
	case 3:
		return ir.ChannelsLast3d, nil
	}
	return 0, fmt.Errorf("memory format code %d is unknown", code)
}
