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
	lower(17, reduce("ReduceMean", false, "dim"), ir.OpAtenMeanDim)
	lower(17, reduce("ReduceMean", false, ""), ir.OpAtenMean)
	lower(17, reduce("ReduceSum", true, "dim"), ir.OpAtenSumDimIntList)
	lower(17, reduce("ReduceSum", true, ""), ir.OpAtenSum)
	lower(17, reduce("ReduceMax", false, "dim"), ir.OpAtenAmax)
	lower(17, reduce("ReduceMin", false, "dim"), ir.OpAtenAmin)
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
	lower(17, softmax("Softmax"), ir.OpAten_Softmax, ir.OpAtenSoftmaxInt)
	lower(17, softmax("LogSoftmax"), ir.OpAten_LogSoftmax, ir.OpAtenLogSoftmaxInt)
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
	lower(17, arg("ArgMax"), ir.OpAtenArgmax)
	lower(17, arg("ArgMin"), ir.OpAtenArgmin)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		x := r.In("self", r.out(0).DType)
		dim := normDim(r.Int("dim"), r.Rank("self"))
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "CumSum", []string{x, b.I64(dim)})
		return nil
	}, ir.OpAtenCumsum)
}
