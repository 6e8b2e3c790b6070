package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// FixFillDiagonal rewrites 2-D fill_diagonal_ as a mask and where (ONNX-FX06).
var FixFillDiagonal = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ONNX-FX06",
	Name:    fixFillDiagonalName,
	Backend: pm.BackendONNX,
	Targets: []ir.Op{ir.OpAtenFillDiagonal_},
	Doc: `rewrite 2-D aten.fill_diagonal_ as where(diagonal mask, full_like(x, v), x)

ONNX has no fill_diagonal_. For an R×C tensor the mask is
arange(R)[:, None] == arange(C). With wrap=True, torch keeps filling every
(C+1)-th element of the flattened tensor, so on a tall matrix (R > C + 1)
the diagonal restarts every C + 1 rows; the mask is then
(arange(R)[:, None] - arange(C)) mod (C + 1) == 0, which is the same set.
The Python fix ignored wrap; fxport implements it, and uses the short mask
when the Env proves R ≤ C + 1. Later readers of x read the result (the op
was in place). Tensors of rank other than 2 are an error: torch requires
all dims equal there and no ONNX lowering is provided.`,
	Fix: fixFillDiagonal,
})

const fixFillDiagonalName = "fix-fill-diagonal"

var (
	fxOpFillArange    = ir.OpAtenArange
	fxOpFillSub       = ir.OpAtenSubTensor
	fxOpFillRemainder = ir.OpAtenRemainderTensor
	fxOpPyAdd         = ir.OpOperatorAdd
)

func fixFillDiagonal(n *ir.Node, c *pm.Ctx) (bool, error) {
	self, st := edit.TensorOperand(n.Arg("self"))
	if self == nil {
		return false, nil
	}
	if st.Rank() != 2 {
		return false, n.Errorf("fill_diagonal_ on a rank-%d tensor is not supported for ONNX (ONNX-FX06 handles 2-D only)", st.Rank())
	}
	wrap := n.Arg("wrap")
	b := edit.FixBuilder(n, fixFillDiagonalName)
	rows, err := edit.SymSizeOf(b, self, 0)
	if err != nil {
		return false, err
	}
	cols, err := edit.SymSizeOf(b, self, 1)
	if err != nil {
		return false, err
	}
	long := ir.DTypeArg(ir.Int64)
	r, err := b.CallKw(fxOpFillArange, []ir.Arg{rows}, map[string]ir.Arg{"dtype": long})
	if err != nil {
		return false, err
	}
	rc, err := b.Value(edit.OpUnsqueeze, ir.ValueArg(r.Result()), ir.IntArg(1))
	if err != nil {
		return false, err
	}
	cr, err := b.CallKw(fxOpFillArange, []ir.Arg{cols}, map[string]ir.Arg{"dtype": long})
	if err != nil {
		return false, err
	}
	needWrap := wrap.Kind == ir.ArgBool && wrap.Bool() &&
		!edit.ProgramEnv(n).StaticallyKnownTrue(sym.Le(st.Shape[0], sym.Add(st.Shape[1], sym.Const(1))))
	var mask *ir.Value
	if !needWrap {
		mask, err = b.Value(edit.OpEqTensor, ir.ValueArg(rc), ir.ValueArg(cr.Result()))
	} else {
		mask, err = fxWrappedDiagonalMask(b, rc, cr.Result(), cols)
	}
	if err != nil {
		return false, err
	}
	full, err := b.Value(edit.OpFullLike, ir.ValueArg(self), n.Arg("fill_value"))
	if err != nil {
		return false, err
	}
	v, err := b.Value(edit.OpWhereSelf, ir.ValueArg(mask), ir.ValueArg(full), ir.ValueArg(self))
	if err != nil {
		return false, err
	}
	if needWrap {
		c.Fired(n, "wrap=True on a possibly tall matrix: diagonal restarts every C + 1 rows")
	}
	return true, edit.ReplaceInplace(n, v, edit.FullViewChain(self)...)
}

// fxWrappedDiagonalMask builds (rows[:, None] - cols) mod (C + 1) == 0.
func fxWrappedDiagonalMask(b *ir.Builder, rc, cr *ir.Value, cols ir.Arg) (*ir.Value, error) {
	diff, err := b.Value(fxOpFillSub, ir.ValueArg(rc), ir.ValueArg(cr))
	if err != nil {
		return nil, err
	}
	var period ir.Arg
	if cols.Kind == ir.ArgInt {
		period = ir.IntArg(cols.Int + 1)
	} else {
		p, err := b.Value(fxOpPyAdd, cols, ir.IntArg(1))
		if err != nil {
			return nil, err
		}
		period = ir.ValueArg(p)
	}
	pt, err := edit.ScalarAsTensor(b, period, ir.Int64)
	if err != nil {
		return nil, err
	}
	rem, err := b.Value(fxOpFillRemainder, ir.ValueArg(diff), ir.ValueArg(pt))
	if err != nil {
		return nil, err
	}
	return b.Value(edit.OpEqScalar, ir.ValueArg(rem), ir.IntArg(0))
}
