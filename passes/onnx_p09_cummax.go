package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchONNXCummax rewrites cummax with a lower-triangular mask (ONNX-P09).
var PatchONNXCummax = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P09",
	Name:    "cummax-tril-mask",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.cummax", "torch.Tensor.cummax"},
	Doc: `rewrite cummax as a masked max over an N x N lower-triangular grid

ONNX has no running maximum. With the scanned dim moved last (length N),
grid[..., i, j] = x[..., j] is masked to j <= i by tril(ones(N, N)) (the
rest filled with the dtype's lowest value: -inf, the integer minimum or
False), and amax over j gives the values. Memory is O(N^2) per row, as in
the Python patch. Indices follow torch, not the Python patch's max(dim=-1)
(whose tie-breaking was backend-defined): the index is the largest j <= i
whose element equals the running maximum, i.e. the last occurrence on ties,
and once a NaN is seen the values are NaN and the index is that of the
latest NaN, which is what torch's kernel (x >= max, NaN sticks) computes.
Both results are moved back to the original dim.`,
	Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
		return rewriteCumExtreme(n, b, c, true)
	},
})

var (
	tpOpOnes        = ir.MustLookupOp("aten.ones.default")
	tpOpTril        = ir.MustLookupOp("aten.tril.default")
	tpOpAmax        = ir.MustLookupOp("aten.amax.default")
	tpOpAmin        = ir.MustLookupOp("aten.amin.default")
	tpOpScalarTensr = ir.MustLookupOp("aten.scalar_tensor.default")
)

// rewriteCumExtreme builds cummax (isMax) or cummin with the tril-mask
// formulation shared by ONNX-P09 and ONNX-P10.
func rewriteCumExtreme(n *ir.Node, b *ir.Builder, c *pm.Ctx, isMax bool) ([]*ir.Value, error) {
	xa := n.Arg("self")
	if xa.Kind != ir.ArgValue || xa.Value.Tensor() == nil || xa.Value.Tensor().Rank() == 0 || len(n.Results) != 2 {
		return nil, nil
	}
	x := xa.Value
	xt := x.Tensor()
	if xt.DType.IsComplex() {
		return nil, nil
	}
	d, ok := tpNormDim(n.Arg("dim").Int, xt.Rank())
	if !ok {
		return nil, n.Errorf("dim %d out of range for %s", n.Arg("dim").Int, xt)
	}
	last := int64(xt.Rank() - 1)
	t := newTP(b, n)
	xm := x
	if int64(d) != last {
		xm = t.v(tpOpMovedim, ir.ValueArg(x), ir.IntArg(int64(d)), ir.IntArg(-1))
	}
	size := t.dim(x, d)
	mask := t.v(tpOpTril, ir.ValueArg(t.kw(tpOpOnes, []ir.Arg{ir.ListArg(size, size)}, map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Bool)})))
	grid := t.v(tpOpUnsqueeze, ir.ValueArg(xm), ir.IntArg(-2))
	fill, reduce := tpLowest(xt.DType), tpOpAmax
	if !isMax {
		fill, reduce = tpHighest(xt.DType), tpOpAmin
	}
	fillT := t.kw(tpOpScalarTensr, []ir.Arg{fill}, map[string]ir.Arg{"dtype": ir.DTypeArg(xt.DType)})
	masked := t.v(tpOpWhereSelf, ir.ValueArg(mask), ir.ValueArg(grid), ir.ValueArg(fillT))
	vals := t.v(reduce, ir.ValueArg(masked), ir.IntsArg(-1))
	// The index: the largest j <= i where x[j] equals the running extreme
	// (NaN counts as equal to NaN).
	run := t.v(tpOpUnsqueeze, ir.ValueArg(vals), ir.IntArg(-1))
	eq := t.v(tpOpEqTensor, ir.ValueArg(grid), ir.ValueArg(run))
	if xt.DType.IsFloat() {
		bothNaN := t.v(tpOpLogicalAnd, ir.ValueArg(t.v(tpOpIsNaN, ir.ValueArg(grid))), ir.ValueArg(t.v(tpOpIsNaN, ir.ValueArg(run))))
		eq = t.v(tpOpLogicalOr, ir.ValueArg(eq), ir.ValueArg(bothNaN))
	}
	sel := t.v(tpOpLogicalAnd, ir.ValueArg(mask), ir.ValueArg(eq))
	j := t.kw(tpOpArange, []ir.Arg{size}, map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Int64)})
	none := t.kw(tpOpScalarTensr, []ir.Arg{ir.IntArg(-1)}, map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Int64)})
	idx := t.v(tpOpAmax, ir.ValueArg(t.v(tpOpWhereSelf, ir.ValueArg(sel), ir.ValueArg(j), ir.ValueArg(none))), ir.IntsArg(-1))
	if int64(d) != last {
		vals = t.v(tpOpMovedim, ir.ValueArg(vals), ir.IntArg(-1), ir.IntArg(int64(d)))
		idx = t.v(tpOpMovedim, ir.ValueArg(idx), ir.IntArg(-1), ir.IntArg(int64(d)))
	}
	if t.err != nil {
		return nil, t.err
	}
	c.Fired(n, "N x N tril mask over dim "+ir.IntArg(int64(d)).String())
	return []*ir.Value{vals, idx}, nil
}
