package ir

import "fmt"

// DType is a tensor element type. The values are fxport's own; conversions to
// torch.export's ScalarType codes and to ONNX/ExecuTorch codes live with the
// code that reads or writes those formats.
type DType uint8

// The element types torch knows. Undefined is the zero value.
const (
	Undefined DType = iota
	Bool
	Uint8
	Int8
	Int16
	Int32
	Int64
	Uint16
	Uint32
	Uint64
	Float16
	BFloat16
	Float32
	Float64
	Complex32
	Complex64
	Complex128
	Float8E4M3FN
	Float8E5M2
	Float8E4M3FNUZ
	Float8E5M2FNUZ
	Float8E8M0FNU
	Float4E2M1FNx2
	QInt8
	QUInt8
	QInt32
	Bits16
	Bits1x8
	numDTypes
)

type dtypeInfo struct {
	name    string // torch name without the "torch." prefix
	abbr    string // torch/utils/_dtype_abbrs.py abbreviation, used in IR text
	bits    int    // storage bits per element
	kind    dtypeKind
	pt2Code int // torch.export ScalarType code, -1 when torch.export has none
}

type dtypeKind uint8

const (
	kindOther dtypeKind = iota
	kindBool
	kindUnsigned
	kindSigned
	kindFloat
	kindComplex
)

var dtypeTable = [numDTypes]dtypeInfo{
	Undefined:      {"undefined", "?", 0, kindOther, 0},
	Bool:           {"bool", "b8", 8, kindBool, 12},
	Uint8:          {"uint8", "u8", 8, kindUnsigned, 1},
	Int8:           {"int8", "i8", 8, kindSigned, 2},
	Int16:          {"int16", "i16", 16, kindSigned, 3},
	Int32:          {"int32", "i32", 32, kindSigned, 4},
	Int64:          {"int64", "i64", 64, kindSigned, 5},
	Uint16:         {"uint16", "u16", 16, kindUnsigned, 28},
	Uint32:         {"uint32", "u32", 32, kindUnsigned, 34},
	Uint64:         {"uint64", "u64", 64, kindUnsigned, 35},
	Float16:        {"float16", "f16", 16, kindFloat, 6},
	BFloat16:       {"bfloat16", "bf16", 16, kindFloat, 13},
	Float32:        {"float32", "f32", 32, kindFloat, 7},
	Float64:        {"float64", "f64", 64, kindFloat, 8},
	Complex32:      {"complex32", "c32", 32, kindComplex, 9},
	Complex64:      {"complex64", "c64", 64, kindComplex, 10},
	Complex128:     {"complex128", "c128", 128, kindComplex, 11},
	Float8E4M3FN:   {"float8_e4m3fn", "f8e4m3fn", 8, kindFloat, 29},
	Float8E5M2:     {"float8_e5m2", "f8e5m2", 8, kindFloat, 30},
	Float8E4M3FNUZ: {"float8_e4m3fnuz", "f8e4m3fnuz", 8, kindFloat, 31},
	Float8E5M2FNUZ: {"float8_e5m2fnuz", "f8e5m2fnuz", 8, kindFloat, 32},
	Float8E8M0FNU:  {"float8_e8m0fnu", "f8e8m0fnu", 8, kindFloat, 33},
	Float4E2M1FNx2: {"float4_e2m1fn_x2", "f4e2m1fnx2", 8, kindOther, -1},
	QInt8:          {"qint8", "qi8", 8, kindOther, -1},
	QUInt8:         {"quint8", "qu8", 8, kindOther, -1},
	QInt32:         {"qint32", "qi32", 32, kindOther, -1},
	Bits16:         {"bits16", "b16", 16, kindOther, -1},
	Bits1x8:        {"bits1x8", "b1x8", 8, kindOther, -1},
}

var (
	dtypeByAbbr = map[string]DType{}
	dtypeByName = map[string]DType{}
	dtypeByPT2  = map[int]DType{}
)

func init() {
	for d := Bool; d < numDTypes; d++ {
		info := dtypeTable[d]
		dtypeByAbbr[info.abbr] = d
		dtypeByName[info.name] = d
		if info.pt2Code >= 0 {
			dtypeByPT2[info.pt2Code] = d
		}
	}
	// torch aliases that appear in printed programs.
	for alias, d := range map[string]DType{
		"float": Float32, "double": Float64, "half": Float16, "long": Int64, "int": Int32,
		"short": Int16, "cfloat": Complex64, "cdouble": Complex128, "chalf": Complex32,
		"complex": Complex64,
	} {
		dtypeByName[alias] = d
	}
}

// String returns torch's name of the dtype, e.g. "float32".
func (d DType) String() string {
	if d >= numDTypes {
		return fmt.Sprintf("DType(%d)", uint8(d))
	}
	return dtypeTable[d].name
}

// Abbr returns the short spelling used in IR text and torch's annotated dumps ("f32").
func (d DType) Abbr() string {
	if d >= numDTypes {
		return "?"
	}
	return dtypeTable[d].abbr
}

// Bits is the storage size of one element in bits (float4_e2m1fn_x2 packs two values in 8).
func (d DType) Bits() int { return dtypeTable[d%numDTypes].bits }

// Size is the storage size of one element in bytes.
func (d DType) Size() int { return (d.Bits() + 7) / 8 }

// IsFloat reports real floating types, float8 variants included.
func (d DType) IsFloat() bool { return d < numDTypes && dtypeTable[d].kind == kindFloat }

// IsComplex reports complex types.
func (d DType) IsComplex() bool { return d < numDTypes && dtypeTable[d].kind == kindComplex }

// IsInteger reports signed and unsigned integer types (not bool).
func (d DType) IsInteger() bool {
	return d < numDTypes && (dtypeTable[d].kind == kindSigned || dtypeTable[d].kind == kindUnsigned)
}

// IsSigned reports signed integer types.
func (d DType) IsSigned() bool { return d < numDTypes && dtypeTable[d].kind == kindSigned }

// IsBool reports the bool type.
func (d DType) IsBool() bool { return d == Bool }

// PT2Code is torch.export's ScalarType code for d, or -1.
func (d DType) PT2Code() int {
	if d >= numDTypes {
		return -1
	}
	return dtypeTable[d].pt2Code
}

// DTypeFromAbbr looks up an abbreviation such as "f32" or "bf16".
func DTypeFromAbbr(s string) (DType, bool) { d, ok := dtypeByAbbr[s]; return d, ok }

// DTypeFromName looks up a torch dtype name, with or without "torch." ("torch.float32", "float").
func DTypeFromName(s string) (DType, bool) {
	if len(s) > 6 && s[:6] == "torch." {
		s = s[6:]
	}
	d, ok := dtypeByName[s]
	return d, ok
}

// DTypeFromPT2 maps a torch.export ScalarType code to a DType.
func DTypeFromPT2(code int) (DType, bool) { d, ok := dtypeByPT2[code]; return d, ok }

// AllDTypes lists every defined dtype in declaration order.
func AllDTypes() []DType {
	out := make([]DType, 0, numDTypes-1)
	for d := Bool; d < numDTypes; d++ {
		out = append(out, d)
	}
	return out
}

// ToComplex returns the complex type whose parts are d (float32 → complex64).
func (d DType) ToComplex() DType {
	switch d {
	case Float16:
		return Complex32
	case Float64:
		return Complex128
	}
	return Complex64
}

// ToReal returns the real part type of a complex type (complex64 → float32); other types unchanged.
func (d DType) ToReal() DType {
	switch d {
	case Complex32:
		return Float16
	case Complex64:
		return Float32
	case Complex128:
		return Float64
	}
	return d
}

// Layout is torch.layout; the numbers are torch.export's codes.
type Layout uint8

// Layouts known to torch.export.
const (
	LayoutUnknown Layout = iota
	LayoutSparseCoo
	LayoutSparseCsr
	LayoutSparseCsc
	LayoutSparseBsr
	LayoutSparseBsc
	LayoutMkldnn
	LayoutStrided
)

var layoutNames = [...]string{"unknown", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "_mkldnn", "strided"}

func (l Layout) String() string {
	if int(l) < len(layoutNames) {
		return layoutNames[l]
	}
	return fmt.Sprintf("Layout(%d)", uint8(l))
}

// LayoutFromName parses "strided" or "torch.strided".
func LayoutFromName(s string) (Layout, bool) {
	if len(s) > 6 && s[:6] == "torch." {
		s = s[6:]
	}
	for i, n := range layoutNames {
		if n == s {
			return Layout(i), true
		}
	}
	return 0, false
}

// MemoryFormat is torch.memory_format; the numbers are torch.export's codes.
type MemoryFormat uint8

// Memory formats known to torch.export.
const (
	MemoryFormatUnknown MemoryFormat = iota
	ContiguousFormat
	ChannelsLast
	ChannelsLast3d
	PreserveFormat
)

var memoryFormatNames = [...]string{"unknown", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format"}

func (m MemoryFormat) String() string {
	if int(m) < len(memoryFormatNames) {
		return memoryFormatNames[m]
	}
	return fmt.Sprintf("MemoryFormat(%d)", uint8(m))
}

// MemoryFormatFromName parses "channels_last" or "torch.channels_last".
func MemoryFormatFromName(s string) (MemoryFormat, bool) {
	if len(s) > 6 && s[:6] == "torch." {
		s = s[6:]
	}
	for i, n := range memoryFormatNames {
		if n == s {
			return MemoryFormat(i), true
		}
	}
	return 0, false
}
