package onnx

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/fxport/fxport/internal/ort"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// RunORT runs the model in ONNX Runtime on inputs (one per graph input, in
// order) and returns the outputs in graph order. Rank-0 inputs and outputs,
// which the Go binding cannot carry, travel as shape [1] through a wrapper
// model with a Reshape at each end; the model itself is not changed.
func (m *Model) RunORT(inputs []ort.Tensor) ([]ort.Tensor, error) {
	if len(inputs) != len(m.Inputs) {
		return nil, fmt.Errorf("model has %d inputs, got %d tensors", len(m.Inputs), len(inputs))
	}
	data, err := m.Marshal()
	if err != nil {
		return nil, err
	}
	mp := &pb.ModelProto{}
	if err := proto.Unmarshal(data, mp); err != nil {
		return nil, err
	}
	g := mp.Graph
	var pre []*pb.NodeProto
	ins := make([]ort.Tensor, len(inputs))
	for i, in := range inputs {
		in.Name = m.Inputs[i]
		if len(in.Shape) == 0 {
			outer := in.Name + "__rank1"
			scalarShape := in.Name + "__rank0_shape"
			pre = append(pre,
				&pb.NodeProto{OpType: strPtr("Constant"), Output: []string{scalarShape}, Attribute: []*pb.AttributeProto{AttrTensor("value", &pb.TensorProto{Dims: []int64{0}, DataType: int32Ptr(int32(pb.TensorProto_INT64)), RawData: []byte{}})}},
				&pb.NodeProto{OpType: strPtr("Reshape"), Input: []string{outer, scalarShape}, Output: []string{in.Name}})
			g.Input[i].Name = &outer
			g.Input[i].Type.GetTensorType().Shape = &pb.TensorShapeProto{Dim: []*pb.TensorShapeProto_Dimension{{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: 1}}}}
			in.Name = outer
			in.Shape = []int64{1}
		}
		ins[i] = in
	}
	g.Node = append(pre, g.Node...)
	names := make([]string, len(g.Output))
	scalarOut := make([]bool, len(g.Output))
	for i, o := range g.Output {
		names[i] = o.GetName()
		if sh := o.GetType().GetTensorType().GetShape(); sh != nil && len(sh.Dim) == 0 {
			outer := names[i] + "__rank1"
			g.Node = append(g.Node, &pb.NodeProto{OpType: strPtr("Reshape"), Input: []string{names[i], "__ort_shape1"}, Output: []string{outer}})
			names[i] = outer
			scalarOut[i] = true
			o.Name = &outer
			sh.Dim = []*pb.TensorShapeProto_Dimension{{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: 1}}}
		}
	}
	g.Node = append([]*pb.NodeProto{{OpType: strPtr("Constant"), Output: []string{"__ort_shape1"}, Attribute: []*pb.AttributeProto{AttrTensor("value", &pb.TensorProto{Dims: []int64{1}, DataType: int32Ptr(int32(pb.TensorProto_INT64)), RawData: encodeI64s([]int64{1})})}}}, g.Node...)
	wrapped, err := marshal(mp)
	if err != nil {
		return nil, err
	}
	outs, err := ort.Run(wrapped, ins, names)
	if err != nil {
		return nil, err
	}
	for i := range outs {
		if scalarOut[i] {
			outs[i].Shape = nil
		}
		outs[i].Name = m.Outputs[i]
	}
	return outs, nil
}

// Diff is the comparison of one output with its reference.
type Diff struct {
	Name           string
	MaxAbs, MaxRel float64
	Err            string // shape or dtype mismatch
}

// Compare compares got with want elementwise: max absolute error, and max
// relative error |g-w| / max(|w|, tiny). NaNs must match positions.
func Compare(name string, got []float64, gotShape []int64, want []float64, wantShape []int64) Diff {
	d := Diff{Name: name}
	if fmt.Sprint(gotShape) != fmt.Sprint(wantShape) {
		d.Err = fmt.Sprintf("shape %v, want %v", gotShape, wantShape)
		return d
	}
	for i := range want {
		g, w := got[i], want[i]
		if math.IsNaN(w) || math.IsNaN(g) {
			if math.IsNaN(w) != math.IsNaN(g) {
				d.Err = fmt.Sprintf("element %d: got %g, want %g", i, g, w)
				return d
			}
			continue
		}
		if math.IsInf(w, 0) || math.IsInf(g, 0) {
			if g != w {
				d.Err = fmt.Sprintf("element %d: got %g, want %g", i, g, w)
				return d
			}
			continue
		}
		a := math.Abs(g - w)
		d.MaxAbs = math.Max(d.MaxAbs, a)
		d.MaxRel = math.Max(d.MaxRel, a/math.Max(math.Abs(w), 1e-12))
	}
	return d
}

// OK reports whether the diff is within tol (absolute, or relative).
func (d Diff) OK(tol float64) bool {
	return d.Err == "" && (d.MaxAbs <= tol || d.MaxRel <= tol)
}
