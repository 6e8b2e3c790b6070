package passes

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// Small builders shared by the ExecuTorch legalizations. They never build
// ops another ExecuTorch patch targets unconditionally (unsqueeze, split,
// topk, argsort), so a second run of the patch stage finds nothing to do.

var (
	etOpReshape  = ir.MustLookupOp("aten.reshape.default")
	etOpToCopy   = ir.MustLookupOp("aten._to_copy.default")
	etOpArange   = ir.MustLookupOp("aten.arange.default")
	etOpWhere    = ir.MustLookupOp("aten.where.self")
	etOpSumDim   = ir.MustLookupOp("aten.sum.dim_IntList")
	etOpEqTensor = ir.MustLookupOp("aten.eq.Tensor")
	etOpLtTensor = ir.MustLookupOp("aten.lt.Tensor")
	etOpLeTensor = ir.MustLookupOp("aten.le.Tensor")
	etOpGather   = ir.MustLookupOp("aten.gather.default")
	etOpClone    = ir.MustLookupOp("aten.clone.default")
	etOpAmax     = ir.MustLookupOp("aten.amax.default")
	etOpAmin     = ir.MustLookupOp("aten.amin.default")
)

// etShapeArg materializes a shape as a SymInt[] argument.
func etShapeArg(b *ir.Builder, at *ir.Node, shape []sym.Expr) (ir.Arg, error) {
	l := make([]ir.Arg, len(shape))
	for i, d := range shape {
		a, err := etSymArg(b, at, d)
		if err != nil {
			return ir.Arg{}, err
		}
		l[i] = a
	}
	return ir.ListArg(l...), nil
}

// etReshape builds reshape(v, shape); a reshape to v's own shape is v.
func etReshape(b *ir.Builder, at *ir.Node, v ir.Arg, shape []sym.Expr) (*ir.Value, error) {
	if t := v.Value.Tensor(); t != nil && t.IsContiguous() && len(t.Shape) == len(shape) {
		same := true
		for i := range shape {
			same = same && t.Shape[i].Equal(shape[i])
		}
		if same {
			return v.Value, nil
		}
	}
	s, err := etShapeArg(b, at, shape)
	if err != nil {
		return nil, err
	}
	return b.Value(etOpReshape, v, s)
}

// etInsertOnes reshapes v so that size-1 dims sit at the given positions of
// the result (positions in increasing order, counted in the result's rank).
// It is unsqueeze spelled as reshape.
func etInsertOnes(b *ir.Builder, at *ir.Node, v ir.Arg, pos ...int) (*ir.Value, error) {
	t, err := ir.ArgTensor(v, "input")
	if err != nil {
		return nil, err
	}
	rank := t.Rank() + len(pos)
	shape := make([]sym.Expr, 0, rank)
	src, p := 0, 0
	for i := 0; i < rank; i++ {
		if p < len(pos) && pos[p] == i {
			shape = append(shape, sym.Const(1))
			p++
			continue
		}
		if src >= t.Rank() {
			return nil, fmt.Errorf("bad insert positions %v for rank %d", pos, t.Rank())
		}
		shape = append(shape, t.Shape[src])
		src++
	}
	return etReshape(b, at, v, shape)
}

// etCast builds _to_copy(v, dtype=dt), or returns v when it already has dt.
func etCast(b *ir.Builder, v *ir.Value, dt ir.DType) (*ir.Value, error) {
	if t := v.Tensor(); t != nil && t.DType == dt {
		return v, nil
	}
	n, err := b.CallKw(etOpToCopy, []ir.Arg{ir.ValueArg(v)}, map[string]ir.Arg{"dtype": ir.DTypeArg(dt)})
	if err != nil {
		return nil, err
	}
	return n.Result(), nil
}

// etArange builds arange(n, dtype=dt).
func etArange(b *ir.Builder, at *ir.Node, n sym.Expr, dt ir.DType) (*ir.Value, error) {
	a, err := etSymArg(b, at, n)
	if err != nil {
		return nil, err
	}
	r, err := b.CallKw(etOpArange, []ir.Arg{a}, map[string]ir.Arg{"dtype": ir.DTypeArg(dt)})
	if err != nil {
		return nil, err
	}
	return r.Result(), nil
}

// etSameTypes reports whether the replacements have the result types of n.
func etSameTypes(n *ir.Node, vs []*ir.Value) bool {
	for i, v := range vs {
		if v != nil && !ir.TypeEqual(v.Type, n.Results[i].Type) {
			return false
		}
	}
	return true
}
