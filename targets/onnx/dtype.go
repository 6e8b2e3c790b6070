package onnx

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// elemType maps an IR dtype to its ONNX TensorProto.DataType.
func elemType(dt ir.DType) (pb.TensorProto_DataType, error) {
	switch dt {
	case ir.Bool:
		return pb.TensorProto_BOOL, nil
	case ir.Uint8:
		return pb.TensorProto_UINT8, nil
	case ir.Int8:
		return pb.TensorProto_INT8, nil
	case ir.Int16:
		return pb.TensorProto_INT16, nil
	case ir.Int32:
		return pb.TensorProto_INT32, nil
	case ir.Int64:
		return pb.TensorProto_INT64, nil
	case ir.Uint16:
		return pb.TensorProto_UINT16, nil
	case ir.Uint32:
		return pb.TensorProto_UINT32, nil
	case ir.Uint64:
		return pb.TensorProto_UINT64, nil
	case ir.Float16:
		return pb.TensorProto_FLOAT16, nil
	case ir.BFloat16:
		return pb.TensorProto_BFLOAT16, nil
	case ir.Float32:
		return pb.TensorProto_FLOAT, nil
	case ir.Float64:
		return pb.TensorProto_DOUBLE, nil
	case ir.Complex64:
		return pb.TensorProto_COMPLEX64, nil
	case ir.Complex128:
		return pb.TensorProto_COMPLEX128, nil
	case ir.Float8E4M3FN:
		return pb.TensorProto_FLOAT8E4M3FN, nil
	case ir.Float8E5M2:
		return pb.TensorProto_FLOAT8E5M2, nil
	case ir.Float8E4M3FNUZ:
		return pb.TensorProto_FLOAT8E4M3FNUZ, nil
	case ir.Float8E5M2FNUZ:
		return pb.TensorProto_FLOAT8E5M2FNUZ, nil
	case ir.Float8E8M0FNU:
		return pb.TensorProto_FLOAT8E8M0, nil
	}
	return 0, fmt.Errorf("dtype %s has no ONNX element type", dt)
}

// minIRForType is the IR version a data type needs.
func minIRForType(t pb.TensorProto_DataType) int64 {
	switch t {
	case pb.TensorProto_FLOAT8E4M3FN, pb.TensorProto_FLOAT8E4M3FNUZ, pb.TensorProto_FLOAT8E5M2, pb.TensorProto_FLOAT8E5M2FNUZ:
		return 9
	case pb.TensorProto_INT4, pb.TensorProto_UINT4:
		return 10
	case pb.TensorProto_FLOAT4E2M1:
		return 11
	case pb.TensorProto_FLOAT8E8M0:
		return 12
	}
	return 3
}

// irVersionForOpset is the IR version stamped for a default-domain opset
// (onnx's VERSION_TABLE).
func irVersionForOpset(opset int) int64 {
	switch {
	case opset <= 18:
		return 8
	case opset <= 20:
		return 9
	case opset <= 22:
		return 10
	case opset == 23:
		return 11
	case opset == 24:
		return 12
	}
	return 13
}

// ElemType is the ONNX TensorProto.DataType code of an IR dtype.
func ElemType(dt ir.DType) (int32, error) {
	et, err := elemType(dt)
	return int32(et), err
}
