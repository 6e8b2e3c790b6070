package pte

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// Element returns element i (in Data's physical order, i < Numel; the
// tensor must pass Check) of a tensor of a
// numeric or bool scalar type as a float64 (integers wider than 2^53 lose
// precision) and its text; ok is false for the quantized and packed types.
func (t *BundledTensorData) Element(i int64) (v float64, text string, ok bool) {
	le := binary.LittleEndian
	d := t.Data
	switch t.ScalarType {
	case etfb.ScalarTypeBOOL:
		if d[i] != 0 {
			return 1, "true", true
		}
		return 0, "false", true
	case etfb.ScalarTypeBYTE:
		return intElem(int64(d[i]))
	case etfb.ScalarTypeCHAR:
		return intElem(int64(int8(d[i])))
	case etfb.ScalarTypeSHORT:
		return intElem(int64(int16(le.Uint16(d[2*i:]))))
	case etfb.ScalarTypeUINT16:
		return intElem(int64(le.Uint16(d[2*i:])))
	case etfb.ScalarTypeINT:
		return intElem(int64(int32(le.Uint32(d[4*i:]))))
	case etfb.ScalarTypeUINT32:
		return intElem(int64(le.Uint32(d[4*i:])))
	case etfb.ScalarTypeLONG:
		return intElem(int64(le.Uint64(d[8*i:])))
	case etfb.ScalarTypeUINT64:
		u := le.Uint64(d[8*i:])
		return float64(u), strconv.FormatUint(u, 10), true
	case etfb.ScalarTypeHALF:
		return floatElem(halfToFloat(le.Uint16(d[2*i:])), 32)
	case etfb.ScalarTypeBFLOAT16:
		return floatElem(float64(math.Float32frombits(uint32(le.Uint16(d[2*i:]))<<16)), 32)
	case etfb.ScalarTypeFLOAT:
		return floatElem(float64(math.Float32frombits(le.Uint32(d[4*i:]))), 32)
	case etfb.ScalarTypeDOUBLE:
		return floatElem(math.Float64frombits(le.Uint64(d[8*i:])), 64)
	}
	return 0, "", false
}

func intElem(x int64) (float64, string, bool) {
	return float64(x), strconv.FormatInt(x, 10), true
}

func floatElem(x float64, bits int) (float64, string, bool) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x, formatFloat(x), true
	}
	return x, strconv.FormatFloat(x, 'g', -1, bits), true
}

// halfToFloat decodes an IEEE 754 binary16 value.
func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

// IsFloat reports a floating-point scalar type (compared with tolerances).
func IsFloat(st etfb.ScalarType) bool {
	switch st {
	case etfb.ScalarTypeHALF, etfb.ScalarTypeBFLOAT16, etfb.ScalarTypeFLOAT, etfb.ScalarTypeDOUBLE:
		return true
	}
	return false
}

// String prints a bundled value: a tensor as its type, dim order and the
// first elements, a scalar as its kind and value.
func (v BundledValue) String() string {
	switch v.Kind {
	case BundledTensor:
		return "Tensor " + v.Tensor.String()
	case BundledInt:
		return fmt.Sprintf("Int %d", v.Int)
	case BundledBool:
		return fmt.Sprintf("Bool %t", v.Bool)
	case BundledDouble:
		return "Double " + formatFloat(v.Double)
	}
	return v.Kind.String()
}

// summaryElems is how many elements String prints before eliding the rest.
const summaryElems = 8

func (t *BundledTensorData) String() string {
	s := scalarName(t.ScalarType) + dims(t.Sizes)
	if len(t.DimOrder) > 0 {
		s += " dim_order " + dims(t.DimOrder)
	}
	n := t.Numel()
	s += " ["
	for i := int64(0); i < n && i < summaryElems; i++ {
		_, txt, ok := t.Element(i)
		if !ok {
			return s[:len(s)-2] + fmt.Sprintf(" <%d bytes>", len(t.Data))
		}
		if i > 0 {
			s += " "
		}
		s += txt
	}
	if n > summaryElems {
		s += fmt.Sprintf(" … %d more", n-summaryElems)
	}
	return s + "]"
}
