package edit

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

// The lower-triangular rewrite of cummax/cummin, shared by ONNX-P09/ET-P25
// (cummax) and ONNX-P10/ET-P26 (cummin).

var (
	cumOpOnes = ir.OpAtenOnes
	cumOpAmax = ir.OpAtenAmax
	cumOpAmin = ir.OpAtenAmin
	OpTril    = ir.OpAtenTril // also ET-P06's causal mask
)

// CumExtreme rewrites cummax (isMax) or cummin along dim as a
// lower-triangular reduction with torch's indices. With N the size of dim
// d, i the output position (dim d) and j the prefix position (a new dim
// d+1):
//
//	Xj   = x with a size-1 dim at d         (x[..., j, ...] on dim d+1)
//	Xi   = x with a size-1 dim at d+1       (x[..., i, ...] on dim d)
//	T    = tril(ones(N, N)) as bool, j <= i, shaped [N, N, 1, ...]
//	vals = amax/amin over d+1 of where(T, Xj, Xi)
//	hit  = T and (Xj == vals_i, or both NaN for floats)
//	idx  = amax over d+1 of where(hit, j, -1)
//
// Masked positions take Xi, which every prefix contains, so no dtype
// sentinel is needed (a sentinel cannot be spelled for uint64's maximum).
// torch compares with >= / <=, so the index is the last prefix position
// holding the running extremum; a NaN makes the running value NaN from
// there on, and torch's CPU kernel takes every new NaN, so the index is the
// latest NaN. hit always holds position j of the extremum itself, so the
// -1 never survives the reduction. Memory is O(N^2) along the dim.
func CumExtreme(n *ir.Node, b *ir.Builder, c *pm.Ctx, isMax bool) ([]*ir.Value, error) {
	xt, err := ir.ArgTensor(n.Arg("self"), "self")
	if err != nil || xt.Rank() == 0 || xt.DType.IsComplex() || len(n.Results) != 2 {
		return nil, nil
	}
	x := n.Arg("self").Value
	d, err := NormDim(n.Arg("dim"), xt.Rank())
	if err != nil {
		return nil, n.Errorf("%w", err)
	}
	t := NewBuilder(b, n)
	xj, xi := t.insertOnes(x, d), t.insertOnes(x, d+1)
	size, err := SymArg(b, n, xt.Shape[d])
	if err != nil {
		return nil, err
	}
	ones := t.Kw(cumOpOnes, []ir.Arg{ir.ListArg(size, size)}, map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Bool)})
	trail := xt.Rank() - d - 1 // dims after d, which the mask and j broadcast over
	mask := t.trailingOnes(t.V(OpTril, ir.ValueArg(ones)), trail)
	red := cumOpAmin
	if isMax {
		red = cumOpAmax
	}
	vals := t.V(red, ir.ValueArg(t.V(OpWhereSelf, ir.ValueArg(mask), ir.ValueArg(xj), ir.ValueArg(xi))), ir.IntsArg(int64(d+1)))
	vi := t.insertOnes(vals, d+1)
	eq := t.V(OpEqTensor, ir.ValueArg(xj), ir.ValueArg(vi))
	if xt.DType.IsFloat() {
		bothNaN := t.V(OpLogicalAnd, ir.ValueArg(t.V(tpOpIsNaN, ir.ValueArg(xj))), ir.ValueArg(t.V(tpOpIsNaN, ir.ValueArg(vi))))
		eq = t.V(tpOpLogicalOr, ir.ValueArg(eq), ir.ValueArg(bothNaN))
	}
	hit := t.V(OpLogicalAnd, ir.ValueArg(mask), ir.ValueArg(eq))
	j := t.trailingOnes(t.Kw(tpOpArange, []ir.Arg{size}, map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Int64)}), trail)
	none := t.Kw(tpOpScalarTens, []ir.Arg{ir.IntArg(-1)}, map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Int64)})
	idx := t.V(cumOpAmax, ir.ValueArg(t.V(OpWhereSelf, ir.ValueArg(hit), ir.ValueArg(j), ir.ValueArg(none))), ir.IntsArg(int64(d+1)))
	if t.Err != nil {
		return nil, t.Err
	}
	out := []*ir.Value{vals, idx}
	if !SameTypes(n, out) {
		return nil, nil
	}
	c.Fired(n, "N x N tril mask over dim "+ir.IntArg(int64(d)).String())
	return out, nil
}

// trailingOnes reshapes v with k size-1 dims appended.
func (t *Builder) trailingOnes(v *ir.Value, k int) *ir.Value {
	if t.Err != nil || k == 0 {
		return v
	}
	vt := v.Tensor()
	shape := append([]sym.Expr{}, vt.Shape...)
	for range k {
		shape = append(shape, sym.Const(1))
	}
	r, err := Reshape(t.b, t.n, ir.ValueArg(v), shape)
	if err != nil {
		t.Err = err
	}
	return r
}
