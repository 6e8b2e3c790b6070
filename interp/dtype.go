package interp

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
)

// domain is the storage class of a dtype.
type domain uint8

const (
	domNone    domain = iota // no storage (unsupported dtype)
	domFloat                 // float64 values rounded to the dtype
	domInt                   // int64 values wrapped to the dtype (bool is 0/1)
	domComplex               // complex128 values
)

func domainOf(dt ir.DType) domain {
	switch dt {
	case ir.Float16, ir.BFloat16, ir.Float32, ir.Float64:
		return domFloat
	case ir.Bool, ir.Uint8, ir.Int8, ir.Int16, ir.Int32, ir.Int64, ir.Uint16, ir.Uint32, ir.Uint64:
		return domInt
	case ir.Complex64, ir.Complex128:
		return domComplex
	}
	return domNone
}

// SupportedDType reports whether tensors of dt can be interpreted.
func SupportedDType(dt ir.DType) bool { return domainOf(dt) != domNone }

func checkDType(dt ir.DType) error {
	if domainOf(dt) == domNone {
		return fmt.Errorf("dtype %s is not supported by the interpreter", dt)
	}
	return nil
}

// roundFloat rounds x to a value of the float dtype dt.
func roundFloat(dt ir.DType, x float64) float64 {
	switch dt {
	case ir.Float32:
		return float64(float32(x))
	case ir.Float16:
		return roundF16(x)
	case ir.BFloat16:
		return roundBF16(x)
	}
	return x
}

// wrapInt wraps x to the integer dtype dt (two's complement; bool is x != 0).
func wrapInt(dt ir.DType, x int64) int64 {
	switch dt {
	case ir.Bool:
		if x != 0 {
			return 1
		}
		return 0
	case ir.Uint8:
		return int64(uint8(x))
	case ir.Int8:
		return int64(int8(x))
	case ir.Int16:
		return int64(int16(x))
	case ir.Int32:
		return int64(int32(x))
	case ir.Uint16:
		return int64(uint16(x))
	case ir.Uint32:
		return int64(uint32(x))
	}
	return x
}

// floatToInt converts a float to the integer dtype dt the way C++'s
// static_cast does on x86 (truncation toward zero); NaN and values out of
// the int64 range give math.MinInt64 before wrapping. Bool is x != 0.
func floatToInt(dt ir.DType, x float64) int64 {
	if dt == ir.Bool {
		if x != 0 {
			return 1
		}
		return 0
	}
	if dt == ir.Uint64 && x >= 9.223372036854775807e18 && x < 1.8446744073709551615e19 {
		return int64(uint64(x))
	}
	if math.IsNaN(x) || x >= 9.223372036854775807e18 || x < -9.223372036854775808e18 {
		return wrapInt(dt, math.MinInt64)
	}
	return wrapInt(dt, int64(x))
}

// intToFloat converts an int stored for dtype src to a float64.
func intToFloat(src ir.DType, x int64) float64 {
	if src == ir.Uint64 {
		return float64(uint64(x))
	}
	return float64(x)
}

// isFloatDT reports float dtypes the interpreter computes with.
func isFloatDT(dt ir.DType) bool { return domainOf(dt) == domFloat }

// isIntDT reports integer dtypes (bool excluded).
func isIntDT(dt ir.DType) bool { return domainOf(dt) == domInt && dt != ir.Bool }

// toFloatDType is torch's rule for ops that need a float result: floats
// stay, everything else becomes the default float dtype.
func toFloatDType(dt ir.DType) ir.DType {
	if isFloatDT(dt) || dt.IsComplex() {
		return dt
	}
	return ir.DefaultFloat
}

var (
	negInf = math.Inf(-1)
	posInf = math.Inf(1)
)

// minIntOf and maxIntOf are the value range of an integer dtype.
func minIntOf(dt ir.DType) int64 {
	switch dt {
	case ir.Int8:
		return math.MinInt8
	case ir.Int16:
		return math.MinInt16
	case ir.Int32:
		return math.MinInt32
	case ir.Int64:
		return math.MinInt64
	}
	return 0
}

func maxIntOf(dt ir.DType) int64 {
	switch dt {
	case ir.Bool:
		return 1
	case ir.Uint8:
		return math.MaxUint8
	case ir.Int8:
		return math.MaxInt8
	case ir.Int16:
		return math.MaxInt16
	case ir.Uint16:
		return math.MaxUint16
	case ir.Int32:
		return math.MaxInt32
	case ir.Uint32:
		return math.MaxUint32
	}
	return math.MaxInt64
}
