package opt

import (
	"encoding/binary"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// gb builds small test graphs.
type gb struct{ g *pb.GraphProto }

func newGraph() *gb { return &gb{g: &pb.GraphProto{Name: proto.String("g")}} }

func vi(name string, et int32, dims ...int64) *pb.ValueInfoProto {
	var ds []*pb.TensorShapeProto_Dimension
	for _, d := range dims {
		if d < 0 {
			ds = append(ds, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimParam{DimParam: "s0"}})
		} else {
			ds = append(ds, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
		}
	}
	return &pb.ValueInfoProto{Name: &name, Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{ElemType: &et, Shape: &pb.TensorShapeProto{Dim: ds}}}}}
}

func (b *gb) input(name string, et int32, dims ...int64) *gb {
	b.g.Input = append(b.g.Input, vi(name, et, dims...))
	return b
}

func (b *gb) output(name string) *gb {
	b.g.Output = append(b.g.Output, vi(name, tFloat))
	return b
}

func (b *gb) node(op string, ins, outs []string, attrs ...*pb.AttributeProto) *gb {
	b.g.Node = append(b.g.Node, &pb.NodeProto{OpType: proto.String(op), Input: ins, Output: outs, Attribute: attrs, Name: proto.String("n." + outs[0])})
	return b
}

func (b *gb) constant(name string, t *tensor) *gb {
	return b.node("Constant", nil, []string{name}, &pb.AttributeProto{Name: proto.String("value"), Type: pb.AttributeProto_TENSOR.Enum(), T: t.proto()})
}

func (b *gb) ints(name string, dims []int64, vs ...int64) *gb {
	return b.constant(name, int64Tensor(dims, vs))
}

func f32Scalar(v float32) *tensor {
	t := &tensor{dt: tFloat, raw: make([]byte, 4)}
	binary.LittleEndian.PutUint32(t.raw, math.Float32bits(v))
	return t
}

func attrI(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INT.Enum(), I: &v}
}

func (b *gb) model() *pb.ModelProto {
	v := int64(8)
	return &pb.ModelProto{IrVersion: &v, Graph: b.g}
}

func optimize(t *testing.T, m *pb.ModelProto, o Options) Stats {
	t.Helper()
	st, err := Optimize(m, o)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func ops(g *pb.GraphProto) []string {
	var out []string
	for _, n := range g.Node {
		out = append(out, n.GetOpType())
	}
	return out
}

// producerOf returns the node defining name.
func producerOf(g *pb.GraphProto, name string) *pb.NodeProto {
	for _, n := range g.Node {
		for _, o := range n.Output {
			if o == name {
				return n
			}
		}
	}
	return nil
}

// constInts decodes the Constant defining name.
func constInts(t *testing.T, g *pb.GraphProto, name string) ([]int64, []int64) {
	t.Helper()
	n := producerOf(g, name)
	if n == nil {
		t.Fatalf("%s is not defined", name)
	}
	c, ok := constantValue(n)
	if !ok {
		t.Fatalf("%s is defined by %s, not a Constant", name, n.GetOpType())
	}
	return c.dims, c.ints()
}
