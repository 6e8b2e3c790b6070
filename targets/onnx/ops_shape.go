package onnx

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// identity lowers ops that are the identity on values (views, copies, detach).
func identity(b *Builder, n *ir.Node) error {
	r := reader(b, n)
	x := r.T("self")
	if r.err != nil {
		return r.err
	}
	b.Bind(n.Results[0], x)
	return nil
}

// reshapeTo reshapes to the result's own shape (symbolic dims computed).
func reshapeTo(b *Builder, n *ir.Node) error {
	r := reader(b, n)
	x := r.T("self")
	if r.err != nil {
		return r.err
	}
	shape, err := b.ShapeTensor(r.out(0).Shape)
	if err != nil {
		return err
	}
	b.Emit(n.Results[0], "Reshape", []string{x, shape})
	return nil
}

func transpose(b *Builder, n *ir.Node, perm []int64) {
	r := reader(b, n)
	x := r.T("self")
	b.Emit(n.Results[0], "Transpose", []string{x}, AttrInts("perm", perm...))
}

func init() {
	lower(17, identity, ir.OpAtenClone, ir.OpAtenDetach, ir.OpAtenAlias,
		ir.OpAtenLiftFreshCopy, ir.OpAtenContiguous)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		x := r.In("self", r.out(0).DType)
		if r.err != nil {
			return r.err
		}
		b.Bind(n.Results[0], x)
		return nil
	}, ir.OpAten_ToCopy)
	lower(17, reshapeTo, ir.OpAtenView, ir.OpAten_UnsafeView, ir.OpAtenReshape,
		ir.OpAtenFlattenUsingInts, ir.OpAtenSqueeze, ir.OpAtenSqueezeDim, ir.OpAtenSqueezeDims,
		ir.OpAtenUnsqueeze)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		rank := r.Rank("self")
		if rank < 2 {
			return identity(b, n)
		}
		transpose(b, n, []int64{1, 0})
		return r.err
	}, ir.OpAtenT)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		rank := r.Rank("self")
		perm := r.Ints("dims")
		for i := range perm {
			perm[i] = normDim(perm[i], rank)
		}
		if r.err != nil {
			return r.err
		}
		transpose(b, n, perm)
		return r.err
	}, ir.OpAtenPermute)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		rank := r.Rank("self")
		d0, d1 := normDim(r.Int("dim0"), rank), normDim(r.Int("dim1"), rank)
		if r.err != nil {
			return r.err
		}
		perm := make([]int64, rank)
		for i := range perm {
			perm[i] = int64(i)
		}
		perm[d0], perm[d1] = perm[d1], perm[d0]
		transpose(b, n, perm)
		return r.err
	}, ir.OpAtenTransposeInt)
	lower(17, func(b *Builder, n *ir.Node) error {
		// expand: -1 keeps a dim; Expand broadcasts, so -1 becomes 1.
		r := reader(b, n)
		x := r.T("self")
		sizes := r.Arg("size")
		if r.err != nil {
			return r.err
		}
		l := sizes
		if sizes.Kind == ir.ArgList {
			l = ir.Arg{Kind: ir.ArgList}
			for _, el := range sizes.List {
				if el.Kind == ir.ArgInt && el.Int == -1 {
					el = ir.IntArg(1)
				}
				l.List = append(l.List, el)
			}
		}
		shape, err := b.IntList(l)
		if err != nil {
			return err
		}
		b.Emit(n.Results[0], "Expand", []string{x, shape})
		return nil
	}, ir.OpAtenExpand)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		rank := r.out(0).Rank()
		a := r.Arg("tensors")
		var ins []string
		for i, v := range a.Values() {
			ins = append(ins, r.inArg(ir.ValueArg(v), fmt.Sprintf("tensors[%d]", i), dt))
		}
		dim := normDim(r.Int("dim"), rank)
		if r.err != nil {
			return r.err
		}
		if n.Op == ir.OpAtenStack {
			for i := range ins {
				ins[i] = b.Tmp("Unsqueeze", []string{ins[i], b.I64s(dim)})
			}
		}
		b.Emit(n.Results[0], "Concat", ins, AttrInt("axis", dim))
		return nil
	}, ir.OpAtenCat, ir.OpAtenStack)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		x := r.T("self")
		rank := r.Rank("self")
		dim := normDim(r.Int("dim"), rank)
		start, end, step := ir.IntArg(0), ir.IntArg(1<<62), r.Arg("step")
		if r.Has("start") {
			start = r.Arg("start")
		}
		if r.Has("end") {
			end = r.Arg("end")
		}
		if r.err != nil {
			return r.err
		}
		s, err := b.IntList(start)
		if err != nil {
			return err
		}
		e, err := b.IntList(end)
		if err != nil {
			return err
		}
		st, err := b.IntList(step)
		if err != nil {
			return err
		}
		b.Emit(n.Results[0], "Slice", []string{x, s, e, b.I64s(dim), st})
		return nil
	}, ir.OpAtenSliceTensor)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		x := r.T("self")
		dim := normDim(r.Int("dim"), r.Rank("self"))
		idx := r.Arg("index")
		if r.err != nil {
			return r.err
		}
		var i string
		if idx.Kind == ir.ArgInt {
			i = b.I64(idx.Int)
		} else {
			v, err := b.Value(idx.Value)
			if err != nil {
				return err
			}
			i = v
		}
		b.Emit(n.Results[0], "Gather", []string{x, i}, AttrInt("axis", dim))
		return nil
	}, ir.OpAtenSelectInt)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		x := r.T("self")
		rank := r.Rank("self")
		dim := normDim(r.Int("dim"), rank)
		if r.err != nil {
			return r.err
		}
		var sizes []int64
		for _, res := range n.Results {
			t := res.Tensor()
			if t == nil {
				return fmt.Errorf("split result %%%s is not a tensor", res.Name)
			}
			c, ok := t.Shape[dim].Const()
			if !ok {
				return fmt.Errorf("split along a symbolic dim (%s) is not lowered", t.Shape[dim])
			}
			sizes = append(sizes, c)
		}
		results := make([]*ir.Value, len(n.Results))
		for i, res := range n.Results {
			if res.NumUses() > 0 {
				results[i] = res
			}
		}
		b.EmitN(results, "Split", []string{x, b.I64s(sizes...)}, AttrInt("axis", dim))
		return nil
	}, ir.OpAtenSplitTensor, ir.OpAtenSplitWithSizes, ir.OpAtenChunk, ir.OpAtenUnsafeSplitTensor, ir.OpAtenUnsafeSplitWithSizes)
	lower(17, func(b *Builder, n *ir.Node) error {
		// sym_size.int: 0-d INT64 from Shape + Gather.
		r := reader(b, n)
		x := r.T("self")
		dim := normDim(r.Int("dim"), r.Rank("self"))
		if r.err != nil {
			return r.err
		}
		// A size the IR knows as a symbol of a graph input reuses that
		// symbol's one Shape/Gather (Builder.SymInt) instead of its own.
		if t, ok := n.Results[0].Type.(*ir.SymIntType); ok && t.Expr.IsValid() {
			if name, ok := t.Expr.Name(); ok {
				if _, known := b.symSrc[name]; known {
					v, err := b.SymInt(t.Expr)
					if err != nil {
						return err
					}
					b.Bind(n.Results[0], v)
					return nil
				}
			}
		}
		shape := b.Tmp("Shape", []string{x})
		b.Emit(n.Results[0], "Gather", []string{shape, b.I64(dim)}, AttrInt("axis", 0))
		return nil
	}, ir.OpAtenSymSizeInt)
	symBin := func(opType string) Lowering {
		return func(b *Builder, n *ir.Node) error {
			if len(n.Args) != 2 {
				return fmt.Errorf("%s: want 2 operands", n.Op)
			}
			r := reader(b, n)
			x := r.inArg(n.Args[0], "a", ir.Int64)
			y := r.inArg(n.Args[1], "b", ir.Int64)
			if r.err != nil {
				return r.err
			}
			if _, ok := n.Results[0].Type.(*ir.SymIntType); !ok {
				return fmt.Errorf("%s on non-SymInt operands is not lowered", n.Op)
			}
			b.Emit(n.Results[0], opType, []string{x, y})
			return nil
		}
	}
	lower(17, symBin("Add"), ir.OpOperatorAdd)
	lower(17, symBin("Sub"), ir.OpOperatorSub)
	lower(17, symBin("Mul"), ir.OpOperatorMul)
}

func init() {
	lower(17, func(b *Builder, n *ir.Node) error {
		// flip: Slice with step -1 on each dim.
		r := reader(b, n)
		x := r.T("self")
		rank := r.Rank("self")
		dims := r.Ints("dims")
		if r.err != nil {
			return r.err
		}
		if len(dims) == 0 {
			return identity(b, n)
		}
		var starts, ends, axes, steps []int64
		for _, d := range dims {
			starts = append(starts, -1)
			ends = append(ends, -(1 << 62))
			axes = append(axes, normDim(d, rank))
			steps = append(steps, -1)
		}
		b.Emit(n.Results[0], "Slice", []string{x, b.I64s(starts...), b.I64s(ends...), b.I64s(axes...), b.I64s(steps...)})
		return nil
	}, ir.OpAtenFlip)
}
