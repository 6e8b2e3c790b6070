package ort

import (
	"encoding/binary"
	"fmt"
	"math"

	ortgo "github.com/yalue/onnxruntime_go"
)

// Run loads a serialized ModelProto and runs it once on inputs (matched to
// the graph inputs by Name), returning the outputs named in outputNames, in
// that order. Rank-0 tensors and empty tensors are not supported by the
// binding; callers reshape them (see targets/onnx's harness).
func Run(model []byte, inputs []Tensor, outputNames []string) ([]Tensor, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	runMu.Lock()
	defer runMu.Unlock()
	names := make([]string, len(inputs))
	vals := make([]ortgo.Value, len(inputs))
	defer func() {
		for _, v := range vals {
			if v != nil {
				v.Destroy()
			}
		}
	}()
	for i, in := range inputs {
		names[i] = in.Name
		if len(in.Shape) == 0 {
			return nil, fmt.Errorf("input %q: rank-0 tensors are not supported by the ONNX Runtime binding", in.Name)
		}
		if Numel(in.Shape) == 0 {
			return nil, fmt.Errorf("input %q: empty tensors are not supported by the ONNX Runtime binding", in.Name)
		}
		if want := int(Numel(in.Shape)) * ElemSize(in.Type); ElemSize(in.Type) == 0 || want != len(in.Data) {
			return nil, fmt.Errorf("input %q: %d bytes, want %d for type %d shape %v", in.Name, len(in.Data), want, in.Type, in.Shape)
		}
		v, err := ortgo.NewCustomDataTensor(ortgo.NewShape(in.Shape...), append([]byte(nil), in.Data...), ortgo.TensorElementDataType(in.Type))
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", in.Name, err)
		}
		vals[i] = v
	}
	opts, err := ortgo.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	if err := opts.SetIntraOpNumThreads(1); err != nil {
		return nil, err
	}
	sess, err := ortgo.NewDynamicAdvancedSessionWithONNXData(model, names, outputNames, opts)
	if err != nil {
		return nil, fmt.Errorf("loading model in ONNX Runtime: %w", err)
	}
	defer sess.Destroy()
	outs := make([]ortgo.Value, len(outputNames))
	if err := sess.Run(vals, outs); err != nil {
		return nil, fmt.Errorf("running model in ONNX Runtime: %w", err)
	}
	res := make([]Tensor, len(outs))
	for i, o := range outs {
		t, err := fromValue(o)
		o.Destroy()
		if err != nil {
			return nil, fmt.Errorf("output %q: %w", outputNames[i], err)
		}
		t.Name = outputNames[i]
		res[i] = t
	}
	return res, nil
}

func fromValue(v ortgo.Value) (Tensor, error) {
	shape := []int64(v.GetShape())
	le := binary.LittleEndian
	switch t := v.(type) {
	case *ortgo.Tensor[float32]:
		return enc(TypeFloat, shape, t.GetData(), 4, func(b []byte, x float32) { le.PutUint32(b, math.Float32bits(x)) }), nil
	case *ortgo.Tensor[float64]:
		return enc(TypeDouble, shape, t.GetData(), 8, func(b []byte, x float64) { le.PutUint64(b, math.Float64bits(x)) }), nil
	case *ortgo.Tensor[int64]:
		return enc(TypeInt64, shape, t.GetData(), 8, func(b []byte, x int64) { le.PutUint64(b, uint64(x)) }), nil
	case *ortgo.Tensor[int32]:
		return enc(TypeInt32, shape, t.GetData(), 4, func(b []byte, x int32) { le.PutUint32(b, uint32(x)) }), nil
	case *ortgo.Tensor[int16]:
		return enc(TypeInt16, shape, t.GetData(), 2, func(b []byte, x int16) { le.PutUint16(b, uint16(x)) }), nil
	case *ortgo.Tensor[int8]:
		return enc(TypeInt8, shape, t.GetData(), 1, func(b []byte, x int8) { b[0] = byte(x) }), nil
	case *ortgo.Tensor[uint8]:
		return enc(TypeUint8, shape, t.GetData(), 1, func(b []byte, x uint8) { b[0] = x }), nil
	case *ortgo.Tensor[uint16]:
		return enc(TypeUint16, shape, t.GetData(), 2, func(b []byte, x uint16) { le.PutUint16(b, x) }), nil
	case *ortgo.Tensor[uint32]:
		return enc(TypeUint32, shape, t.GetData(), 4, func(b []byte, x uint32) { le.PutUint32(b, x) }), nil
	case *ortgo.Tensor[uint64]:
		return enc(TypeUint64, shape, t.GetData(), 8, func(b []byte, x uint64) { le.PutUint64(b, x) }), nil
	case *ortgo.Tensor[bool]:
		return enc(TypeBool, shape, t.GetData(), 1, func(b []byte, x bool) {
			if x {
				b[0] = 1
			}
		}), nil
	case *ortgo.CustomDataTensor:
		return Tensor{Type: int32(t.DataType()), Shape: shape, Data: append([]byte(nil), t.GetData()...)}, nil
	}
	return Tensor{}, fmt.Errorf("unsupported output value %T", v)
}

func enc[T any](typ int32, shape []int64, data []T, size int, put func([]byte, T)) Tensor {
	b := make([]byte, len(data)*size)
	for i, x := range data {
		put(b[i*size:], x)
	}
	return Tensor{Type: typ, Shape: shape, Data: b}
}
