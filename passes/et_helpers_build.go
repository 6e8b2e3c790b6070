package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// Small builders shared by the ExecuTorch legalizations. They never build
// ops another ExecuTorch patch targets unconditionally (unsqueeze, split,
// topk, argsort), so a second run of the patch stage finds nothing to do.

var (
	etOpToCopy   = ir.OpAten_ToCopy
	etOpArange   = ir.OpAtenArange
	etOpWhere    = ir.OpAtenWhereSelf
	etOpSumDim   = ir.OpAtenSumDimIntList
	etOpEqTensor = ir.OpAtenEqTensor
	etOpLtTensor = ir.OpAtenLtTensor
	etOpLeTensor = ir.OpAtenLeTensor
	etOpGather   = ir.OpAtenGather
	etOpClone    = ir.OpAtenClone
	etOpAmax     = ir.OpAtenAmax
	etOpAmin     = ir.OpAtenAmin
)

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
