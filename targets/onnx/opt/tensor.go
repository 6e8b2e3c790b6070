package opt

import (
	"encoding/binary"
	"math"

	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// ONNX element types the folder handles (TensorProto.DataType).
const (
	tFloat    = int32(pb.TensorProto_FLOAT)
	tUint8    = int32(pb.TensorProto_UINT8)
	tInt8     = int32(pb.TensorProto_INT8)
	tUint16   = int32(pb.TensorProto_UINT16)
	tInt16    = int32(pb.TensorProto_INT16)
	tInt32    = int32(pb.TensorProto_INT32)
	tInt64    = int32(pb.TensorProto_INT64)
	tBool     = int32(pb.TensorProto_BOOL)
	tFloat16  = int32(pb.TensorProto_FLOAT16)
	tDouble   = int32(pb.TensorProto_DOUBLE)
	tUint32   = int32(pb.TensorProto_UINT32)
	tUint64   = int32(pb.TensorProto_UINT64)
	tBfloat16 = int32(pb.TensorProto_BFLOAT16)
)

// elemSize is the byte size of a fixed-size element type (0: unsupported).
func elemSize(dt int32) int {
	switch dt {
	case tUint8, tInt8, tBool:
		return 1
	case tUint16, tInt16, tFloat16, tBfloat16:
		return 2
	case tFloat, tInt32, tUint32:
		return 4
	case tInt64, tDouble, tUint64:
		return 8
	}
	return 0
}

// tensor is a known constant value: element type, dims and little-endian
// contiguous bytes.
type tensor struct {
	dt   int32
	dims []int64
	raw  []byte
}

func numel(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	return n
}

func (t *tensor) numel() int64 { return numel(t.dims) }

// fromProto decodes a TensorProto whose data is inline; ok is false for
// external or pending data and for element types the folder does not know.
func fromProto(tp *pb.TensorProto) (*tensor, bool) {
	if tp == nil || tp.GetDataLocation() == pb.TensorProto_EXTERNAL || len(tp.ExternalData) > 0 {
		return nil, false
	}
	dt := tp.GetDataType()
	es := elemSize(dt)
	if es == 0 {
		return nil, false
	}
	for _, d := range tp.Dims {
		if d < 0 {
			return nil, false
		}
	}
	n := numel(tp.Dims)
	t := &tensor{dt: dt, dims: append([]int64{}, tp.Dims...)}
	switch {
	case int64(len(tp.RawData)) == n*int64(es):
		t.raw = tp.RawData
	case len(tp.RawData) > 0:
		return nil, false
	case dt == tInt64 && int64(len(tp.Int64Data)) == n:
		t.raw = make([]byte, 8*n)
		for i, v := range tp.Int64Data {
			binary.LittleEndian.PutUint64(t.raw[8*i:], uint64(v))
		}
	case (dt == tInt32 || dt == tInt16 || dt == tInt8 || dt == tUint8 || dt == tUint16 || dt == tBool) && int64(len(tp.Int32Data)) == n:
		t.raw = make([]byte, int64(es)*n)
		for i, v := range tp.Int32Data {
			putInt(t.raw, dt, i, int64(v))
		}
	case dt == tFloat && int64(len(tp.FloatData)) == n:
		t.raw = make([]byte, 4*n)
		for i, v := range tp.FloatData {
			binary.LittleEndian.PutUint32(t.raw[4*i:], math.Float32bits(v))
		}
	case dt == tDouble && int64(len(tp.DoubleData)) == n:
		t.raw = make([]byte, 8*n)
		for i, v := range tp.DoubleData {
			binary.LittleEndian.PutUint64(t.raw[8*i:], math.Float64bits(v))
		}
	case n == 0:
		t.raw = []byte{}
	default:
		return nil, false
	}
	return t, true
}

// proto encodes the tensor as raw data.
func (t *tensor) proto() *pb.TensorProto {
	dt := t.dt
	raw := append([]byte{}, t.raw...)
	return &pb.TensorProto{Dims: append([]int64{}, t.dims...), DataType: &dt, RawData: raw}
}

// isInt reports an integer element type the arithmetic folder computes on.
func isInt(dt int32) bool { return dt == tInt64 || dt == tInt32 }

// isIndex reports an element type usable as indices/axes/shape operands.
func isIndex(dt int32) bool { return dt == tInt64 || dt == tInt32 }

// intAt reads element i of an integer or bool tensor as int64.
func intAt(raw []byte, dt int32, i int) int64 {
	switch dt {
	case tInt64:
		return int64(binary.LittleEndian.Uint64(raw[8*i:]))
	case tUint64:
		return int64(binary.LittleEndian.Uint64(raw[8*i:]))
	case tInt32:
		return int64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
	case tUint32:
		return int64(binary.LittleEndian.Uint32(raw[4*i:]))
	case tInt16:
		return int64(int16(binary.LittleEndian.Uint16(raw[2*i:])))
	case tUint16:
		return int64(binary.LittleEndian.Uint16(raw[2*i:]))
	case tInt8:
		return int64(int8(raw[i]))
	case tUint8, tBool:
		return int64(raw[i])
	}
	panic("opt: intAt on a non-integer element type")
}

// putInt writes v (wrapped to the type's width) as element i.
func putInt(raw []byte, dt int32, i int, v int64) {
	switch dt {
	case tInt64, tUint64:
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	case tInt32, tUint32:
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(v))
	case tInt16, tUint16:
		binary.LittleEndian.PutUint16(raw[2*i:], uint16(v))
	case tInt8, tUint8:
		raw[i] = byte(v)
	case tBool:
		if v != 0 {
			raw[i] = 1
		} else {
			raw[i] = 0
		}
	default:
		panic("opt: putInt on a non-integer element type")
	}
}

// ints decodes an index tensor.
func (t *tensor) ints() []int64 {
	n := int(t.numel())
	out := make([]int64, n)
	for i := range out {
		out[i] = intAt(t.raw, t.dt, i)
	}
	return out
}

func int64Tensor(dims []int64, vs []int64) *tensor {
	t := &tensor{dt: tInt64, dims: dims, raw: make([]byte, 8*len(vs))}
	for i, v := range vs {
		putInt(t.raw, tInt64, i, v)
	}
	return t
}

// strides of a contiguous tensor, in elements.
func strides(dims []int64) []int64 {
	s := make([]int64, len(dims))
	acc := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= dims[i]
	}
	return s
}
