package onnx

import (
	"github.com/fxport/fxport/ir"
)

// reduce lowers a Reduce* op; axesAsInput is true from opset 18 on for all
// reductions (ReduceSum since 13).
func reduce(opType string, sumLike bool, dimName string) Lowering {
	return func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x := r.In("self", dt)
		rank := r.Rank("self")
		var axes []int64
		all := true
		if dimName != "" && r.Has(dimName) {
			axes = r.Ints(dimName)
			all = len(axes) == 0
		}
		keep := int64(0)
		if r.n.Op.ArgIndex("keepdim") >= 0 && r.Bool("keepdim") {
			keep = 1
		}
		if r.err != nil {
			return r.err
		}
		if all {
			axes = nil
			for i := 0; i < rank; i++ {
				axes = append(axes, int64(i))
			}
		}
		for i := range axes {
			axes[i] = normDim(axes[i], rank)
		}
		if rank == 0 {
			b.Bind(n.Results[0], x)
			return nil
		}
		if sumLike || b.opset >= 18 {
			b.Emit(n.Results[0], opType, []string{x, b.I64s(axes...)}, AttrInt("keepdims", keep))
		} else {
			b.Emit(n.Results[0], opType, []string{x}, AttrInts("axes", axes...), AttrInt("keepdims", keep))
		}
		return nil
	}
}

func init() {
	lower(17, reduce("ReduceMean", false, "dim"), "aten.mean.dim")
	lower(17, reduce("ReduceMean", false, ""), "aten.mean.default")
	lower(17, reduce("ReduceSum", true, "dim"), "aten.sum.dim_IntList")
	lower(17, reduce("ReduceSum", true, ""), "aten.sum.default")
	lower(17, reduce("ReduceMax", false, "dim"), "aten.amax.default")
	lower(17, reduce("ReduceMin", false, "dim"), "aten.amin.default")
	softmax := func(opType string) Lowering {
		return func(b *Builder, n *ir.Node) error {
			r := reader(b, n)
			dt := r.out(0).DType
			x := r.In("self", dt)
			dim := normDim(r.Int("dim"), r.Rank("self"))
			if r.err != nil {
				return r.err
			}
			b.Emit(n.Results[0], opType, []string{x}, AttrInt("axis", dim))
			return nil
		}
	}
	lower(17, softmax("Softmax"), "aten._softmax.default", "aten.softmax.int")
	lower(17, softmax("LogSoftmax"), "aten._log_softmax.default", "aten.log_softmax.int")
	arg := func(opType string) Lowering {
		return func(b *Builder, n *ir.Node) error {
			r := reader(b, n)
			x := r.T("self")
			keep := int64(0)
			if r.Bool("keepdim") {
				keep = 1
			}
			if !r.Has("dim") {
				flat := b.Tmp("Reshape", []string{x, b.I64s(-1)})
				b.Emit(n.Results[0], opType, []string{flat}, AttrInt("axis", 0), AttrInt("keepdims", keep))
				return r.err
			}
			dim := normDim(r.Int("dim"), r.Rank("self"))
			if r.err != nil {
				return r.err
			}
			b.Emit(n.Results[0], opType, []string{x}, AttrInt("axis", dim), AttrInt("keepdims", keep), AttrInt("select_last_index", 0))
			return nil
		}
	}
	lower(17, arg("ArgMax"), "aten.argmax.default")
	lower(17, arg("ArgMin"), "aten.argmin.default")
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		x := r.In("self", r.out(0).DType)
		dim := normDim(r.Int("dim"), r.Rank("self"))
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "CumSum", []string{x, b.I64(dim)})
		return nil
	}, "aten.cumsum.default")
}
