package onnx

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// translator adapts a Lowering to pm.Translator: the ONNX-TR rows of the
// catalog are registered in pm's translation table with it, so listings and
// reports show them, and the emitter runs them through the same Builder.
type translator struct{ f Lowering }

// Translate lowers n into emitter, which must be the target's *Builder.
func (t *translator) Translate(n *ir.Node, emitter any) error {
	b, ok := emitter.(*Builder)
	if !ok {
		return fmt.Errorf("onnx translation: emitter is %T, want *onnx.Builder", emitter)
	}
	return t.f(b, n)
}

// translation registers a catalog translation with pm and in the table.
func translation(id, name, doc string, f Lowering, ops ...ir.Op) {
	pm.RegisterTranslation(&pm.Translation{ID: id, Name: name, Doc: doc, Targets: ops, Impl: &translator{f}})
	lower(17, f, ops...)
}

func init() {
	translation("ONNX-TR05", "translate-mul-scalar",
		"mul.Scalar with an explicit cast\n\nThe tensor is cast to the result dtype (an int tensor times a float scalar computes in float), and the scalar is materialized in that dtype.",
		func(b *Builder, n *ir.Node) error { return binaryOp("Mul")(b, n) }, ir.OpAtenMulScalar)
	translation("ONNX-TR06", "translate-rsub-scalar",
		"rsub.Scalar lowered directly\n\nother - alpha*self, computed in the result dtype, kept out of decomposition.",
		func(b *Builder, n *ir.Node) error {
			r := reader(b, n)
			dt := r.out(0).DType
			x, y := r.In("self", dt), r.In("other", dt)
			if al := r.Float("alpha"); al != 1 {
				a, err := b.Scalar(dt, al)
				if err != nil {
					return err
				}
				x = b.Tmp("Mul", []string{x, a})
			}
			if r.err != nil {
				return r.err
			}
			b.Emit(n.Results[0], "Sub", []string{y, x})
			return nil
		}, ir.OpAtenRsubScalar)
	translation("ONNX-TR07", "translate-repeat-interleave",
		"repeat_interleave.self_int as Unsqueeze + Tile/Expand + Reshape\n\ndim=None flattens first; each element is repeated `repeats` times along dim.",
		func(b *Builder, n *ir.Node) error {
			r := reader(b, n)
			x := r.T("self")
			rank := r.Rank("self")
			rep := r.Int("repeats")
			if r.err != nil {
				return r.err
			}
			dim := int64(0)
			if r.Has("dim") {
				dim = normDim(r.Int("dim"), rank)
			} else {
				x = b.Tmp("Reshape", []string{x, b.I64s(-1)})
				rank = 1
			}
			u := b.Tmp("Unsqueeze", []string{x, b.I64s(dim + 1)})
			reps := make([]int64, rank+1)
			for i := range reps {
				reps[i] = 1
			}
			reps[dim+1] = rep
			t := b.Tmp("Tile", []string{u, b.I64s(reps...)})
			shape, err := b.ShapeTensor(r.out(0).Shape)
			if err != nil {
				return err
			}
			b.Emit(n.Results[0], "Reshape", []string{t, shape})
			return r.err
		}, ir.OpAtenRepeatInterleaveSelfInt)
	translation("ONNX-TR08", "translate-floordiv",
		"SymInt floordiv with signed floor correction\n\nONNX Div truncates toward zero; the quotient is corrected by one where the operands' signs differ and the remainder is not zero.",
		func(b *Builder, n *ir.Node) error {
			if len(n.Args) != 2 {
				return fmt.Errorf("floordiv: want 2 operands")
			}
			r := reader(b, n)
			x, y := r.inArg(n.Args[0], "a", ir.Int64), r.inArg(n.Args[1], "b", ir.Int64)
			if r.err != nil {
				return r.err
			}
			if _, ok := n.Results[0].Type.(*ir.SymIntType); !ok {
				return fmt.Errorf("floordiv on non-integer operands is not lowered")
			}
			b.Bind(n.Results[0], b.FloorDivInt(x, y))
			return nil
		}, ir.OpOperatorFloordiv)
	translation("ONNX-TR01", "translate-bincount",
		"bincount as OneHot + ReduceSum\n\ndepth = max(max(x)+1, minlength); OneHot rows are summed over axis 0. Unlike the Python translation, weights are honoured (each row is scaled by its weight).",
		func(b *Builder, n *ir.Node) error {
			r := reader(b, n)
			dt := r.out(0).DType
			x := r.In("self", ir.Int64)
			minl := r.Int("minlength")
			if r.err != nil {
				return r.err
			}
			mx := b.Tmp("ReduceMax", []string{x, b.I64s(0)}, AttrInt("keepdims", 0))
			if b.opset < 18 {
				mx = b.Tmp("ReduceMax", []string{x}, AttrInts("axes", 0), AttrInt("keepdims", 0))
			}
			depth := b.Tmp("Max", []string{b.Tmp("Add", []string{mx, b.I64(1)}), b.I64(minl)})
			vals, err := b.Const(dt, []int64{2}, append(mustScalar(dt, 0), mustScalar(dt, 1)...))
			if err != nil {
				return err
			}
			oh := b.Tmp("OneHot", []string{x, depth, vals}, AttrInt("axis", -1))
			if r.Has("weights") {
				w := r.In("weights", dt)
				oh = b.Tmp("Mul", []string{oh, b.Tmp("Unsqueeze", []string{w, b.I64s(-1)})})
			}
			b.Emit(n.Results[0], "ReduceSum", []string{oh, b.I64s(0)}, AttrInt("keepdims", 0))
			return r.err
		}, ir.OpAtenBincount)
	translation("ONNX-TR02", "translate-index-put",
		"index_put as Where (bool mask) or ScatterND (integer indices)\n\nA single boolean mask becomes Where(mask, Expand(values), self). Integer index tensors (any number, broadcast together, None entries as full slices, adjacent or not) become one ScatterND over self transposed so the indexed dims lead, with the full index tuple built by Expand/Unsqueeze/Concat and the values brought into [B, rest] order; reduction add when accumulate. A boolean mask mixed with other indices (or with accumulate) becomes the coordinate rows of NonZero(mask), one 1-D index tensor per mask dim, in the same ScatterND.",
		lowerIndexPut, ir.OpAtenIndexPut)
}

func mustScalar(dt ir.DType, v float64) []byte {
	b, _ := encodeScalar(dt, v)
	return b
}

func lowerIndexPut(b *Builder, n *ir.Node) error {
	r := reader(b, n)
	dt := r.out(0).DType
	x := r.In("self", dt)
	vals := r.In("values", dt)
	acc := r.Bool("accumulate")
	l := r.Arg("indices")
	if r.err != nil {
		return r.err
	}
	self := r.Shape("self")
	if r.err != nil {
		return r.err
	}
	if len(l.List) > len(self) {
		return fmt.Errorf("index_put with %d indices on a rank-%d tensor", len(l.List), len(self))
	}
	// One boolean mask without accumulate is a Where; everything else
	// (integer indices, masks mixed with them, masks with accumulate, whose
	// duplicate-free positions still need the values in [N, rest] order)
	// goes through ScatterND.
	if acc || len(l.List) != 1 || l.List[0].IsNone() || l.List[0].Value.Tensor() == nil || l.List[0].Value.Tensor().DType != ir.Bool {
		return lowerIndexPutInts(b, n, x, vals, acc, l.List, len(self))
	}
	it := l.List[0].Value.Tensor()
	iv, err := b.Value(l.List[0].Value)
	if err != nil {
		return err
	}
	// Broadcast the mask to self's rank (trailing dims), values to self.
	m := iv
	if extra := len(self) - it.Rank(); extra > 0 {
		axes := make([]int64, extra)
		for i := range axes {
			axes[i] = int64(it.Rank() + i)
		}
		m = b.Tmp("Unsqueeze", []string{m, b.I64s(axes...)})
	}
	shape := b.Tmp("Shape", []string{x})
	v := b.Tmp("Expand", []string{vals, shape})
	b.Emit(n.Results[0], "Where", []string{m, v, x})
	return nil
}
