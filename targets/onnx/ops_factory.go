package onnx

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// constantOfShape fills shape (a 1-D INT64 value) with v in dtype dt; the
// value attribute always carries the dtype (ONNX-P13).
func (b *Builder) constantOfShape(res *ir.Value, shape string, dt ir.DType, v float64) error {
	data, err := encodeScalar(dt, v)
	if err != nil {
		return err
	}
	et, err := elemType(dt)
	if err != nil {
		return err
	}
	t := &pb.TensorProto{Dims: []int64{1}, DataType: int32Ptr(int32(et)), RawData: data}
	b.Emit(res, "ConstantOfShape", []string{shape}, AttrTensor("value", t))
	return nil
}

func fillLike(val float64, valArg string) Lowering {
	return func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		out := r.out(0)
		v := val
		if valArg != "" {
			v = r.Float(valArg)
		}
		if r.err != nil {
			return r.err
		}
		shape, err := b.ShapeTensor(out.Shape)
		if err != nil {
			return err
		}
		return b.constantOfShape(n.Results[0], shape, out.DType, v)
	}
}

func init() {
	lower(17, fillLike(0, ""), ir.OpAtenZerosLike, ir.OpAtenZeros, ir.OpAtenNewZeros,
		ir.OpAtenEmptyMemoryFormat, ir.OpAtenEmptyPermuted, ir.OpAtenEmptyLike, ir.OpAtenNewEmpty)
	lower(17, fillLike(1, ""), ir.OpAtenOnesLike, ir.OpAtenOnes, ir.OpAtenNewOnes)
	lower(17, fillLike(0, "fill_value"), ir.OpAtenFull, ir.OpAtenFullLike, ir.OpAtenNewFull)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		s, err := b.Scalar(r.out(0).DType, r.Float("s"))
		if err != nil {
			return err
		}
		if r.err != nil {
			return r.err
		}
		b.Bind(n.Results[0], s)
		return nil
	}, ir.OpAtenScalarTensor)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		start, step := ir.IntArg(0), ir.IntArg(1)
		if n.Op.ArgIndex("start") >= 0 {
			start = r.Arg("start")
		}
		if n.Op.ArgIndex("step") >= 0 {
			step = r.Arg("step")
		}
		end := r.Arg("end")
		if r.err != nil {
			return r.err
		}
		if !(dt == ir.Float32 || dt == ir.Float64 || dt == ir.Int16 || dt == ir.Int32 || dt == ir.Int64) {
			return fmt.Errorf("arange of dtype %s is not lowered", dt)
		}
		s, e, st := r.inArg(start, "start", dt), r.inArg(end, "end", dt), r.inArg(step, "step", dt)
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "Range", []string{s, e, st})
		return nil
	}, ir.OpAtenArange, ir.OpAtenArangeStart, ir.OpAtenArangeStartStep)
	tri := func(upper int64) Lowering {
		return func(b *Builder, n *ir.Node) error {
			r := reader(b, n)
			x := r.In("self", r.out(0).DType)
			k := r.Int("diagonal")
			if r.err != nil {
				return r.err
			}
			b.Emit(n.Results[0], "Trilu", []string{x, b.I64(k)}, AttrInt("upper", upper))
			return nil
		}
	}
	lower(17, tri(0), ir.OpAtenTril)
	lower(17, tri(1), ir.OpAtenTriu)
}
