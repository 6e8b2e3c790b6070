package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

var (
	etOpTril    = ir.MustLookupOp("aten.tril.default")
	etOpOnes    = ir.MustLookupOp("aten.ones.default")
	etOpIsnan   = ir.MustLookupOp("aten.isnan.default")
	etOpLogAnd  = ir.MustLookupOp("aten.logical_and.default")
	etOpWhereSc = ir.MustLookupOp("aten.where.ScalarOther")
)

// etCumExtremum rewrites cummax (max=true) or cummin along dim as a
// lower-triangular reduction with torch's indices. With n the size of dim,
// i the output position (dim d) and j the prefix position (a new dim d+1):
//
//	X_j   = x with a size-1 dim at d        (x[..., j, ...] on dim d+1)
//	X_i   = x with a size-1 dim at d+1      (x[..., i, ...] on dim d)
//	T     = tril(ones(n, n)) as bool, j <= i, shaped for dims d, d+1
//	vals  = amax/amin over d+1 of where(T, X_j, X_i)
//	last  = amax over d+1 of where(T and X_j == vals_i, j, -1)
//
// Masked positions take X_i, which every prefix contains, so no dtype
// sentinel is needed. torch returns the last position of the running
// extremum (it compares with >= / <=), which is last. For floating inputs a
// NaN makes the running value NaN from its first occurrence on, with that
// first NaN's index: where(isnan(vals), amin over d+1 of where(T and
// isnan(X_j), j, n), last).
func etCumExtremum(n *ir.Node, b *ir.Builder, c *pm.Ctx, max bool) ([]*ir.Value, error) {
	self := n.Arg("self")
	t, err := ir.ArgTensor(self, "self")
	if err != nil || t.Rank() == 0 || t.DType.IsComplex() {
		return nil, nil
	}
	d, err := etNormDim(n.Arg("dim"), t.Rank())
	if err != nil {
		return nil, err
	}
	size := t.Shape[d]
	xj, err := etInsertOnes(b, n, self, d)
	if err != nil {
		return nil, err
	}
	xi, err := etInsertOnes(b, n, self, d+1)
	if err != nil {
		return nil, err
	}
	// T[i, j] = j <= i, shaped [n, n, 1, …] for the dims after d+1.
	sz, err := etSymArg(b, n, size)
	if err != nil {
		return nil, err
	}
	ones, err := b.CallKw(etOpOnes, []ir.Arg{ir.ListArg(sz, sz)}, map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Bool)})
	if err != nil {
		return nil, err
	}
	tri, err := b.Value(etOpTril, ir.ValueArg(ones.Result()))
	if err != nil {
		return nil, err
	}
	trail := make([]sym.Expr, 0, 2+t.Rank()-d-1)
	trail = append(trail, size, size)
	for range t.Shape[d+1:] {
		trail = append(trail, sym.Const(1))
	}
	mask, err := etReshape(b, n, ir.ValueArg(tri), trail)
	if err != nil {
		return nil, err
	}
	w, err := b.Value(etOpWhere, ir.ValueArg(mask), ir.ValueArg(xj), ir.ValueArg(xi))
	if err != nil {
		return nil, err
	}
	red := etOpAmin
	if max {
		red = etOpAmax
	}
	vals, err := b.Value(red, ir.ValueArg(w), ir.IntsArg(int64(d+1)))
	if err != nil {
		return nil, err
	}
	// j along dim d+1: arange(n) shaped [n, 1, …].
	ar, err := etArange(b, n, size, ir.Int64)
	if err != nil {
		return nil, err
	}
	jshape := append([]sym.Expr{size}, trail[2:]...)
	j, err := etReshape(b, n, ir.ValueArg(ar), jshape)
	if err != nil {
		return nil, err
	}
	vi, err := etInsertOnes(b, n, ir.ValueArg(vals), d+1)
	if err != nil {
		return nil, err
	}
	eq, err := b.Value(etOpEqTensor, ir.ValueArg(xj), ir.ValueArg(vi))
	if err != nil {
		return nil, err
	}
	hit, err := b.Value(etOpLogAnd, ir.ValueArg(mask), ir.ValueArg(eq))
	if err != nil {
		return nil, err
	}
	wj, err := b.Value(etOpWhereSc, ir.ValueArg(hit), ir.ValueArg(j), ir.IntArg(-1))
	if err != nil {
		return nil, err
	}
	idx, err := b.Value(etOpAmax, ir.ValueArg(wj), ir.IntsArg(int64(d+1)))
	if err != nil {
		return nil, err
	}
	if t.DType.IsFloat() {
		nanj, err := b.Value(etOpIsnan, ir.ValueArg(xj))
		if err != nil {
			return nil, err
		}
		nanHit, err := b.Value(etOpLogAnd, ir.ValueArg(mask), ir.ValueArg(nanj))
		if err != nil {
			return nil, err
		}
		sa, err := etSymArg(b, n, size)
		if err != nil {
			return nil, err
		}
		wn, err := b.Value(etOpWhereSc, ir.ValueArg(nanHit), ir.ValueArg(j), sa)
		if err != nil {
			return nil, err
		}
		first, err := b.Value(etOpAmin, ir.ValueArg(wn), ir.IntsArg(int64(d+1)))
		if err != nil {
			return nil, err
		}
		nanv, err := b.Value(etOpIsnan, ir.ValueArg(vals))
		if err != nil {
			return nil, err
		}
		idx, err = b.Value(etOpWhere, ir.ValueArg(nanv), ir.ValueArg(first), ir.ValueArg(idx))
		if err != nil {
			return nil, err
		}
	}
	out := []*ir.Value{vals, idx}
	if !etSameTypes(n, out) {
		return nil, nil
	}
	c.Fired(n, "triangular reduction")
	return out, nil
}
