package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// FixIndexPutLastDim rewrites x[..., idx] = scalar as a mask and where (ONNX-FX13).
var FixIndexPutLastDim = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ONNX-FX13",
	Name:    fixIndexPutLastDimName,
	Backend: pm.BackendONNX,
	Targets: []ir.Op{ir.OpAtenIndexPut},
	Doc: `rewrite x[..., idx] = scalar (index_put on the last dim) as where(arange == idx, v, x)

The ONNX translation of index_put drops the write under dynamic shapes
when only the last dim is indexed. Applies when every index but the last is
None, the last is an integer tensor of rank 0 or 1, the value is a 0-d
tensor and accumulate is False. The rewrite walks back through full slices
of x (start 0, step 1, same shape) to their base, builds
mask = any(arange(L) == idx mod L) over the last dim of size L and returns
where(mask, value cast to x's dtype, base).

Differences from Python: negative indices are normalised (idx mod L), as
torch's indexing does; rank-1 index tensors set every listed column.
The in-place form (index_put_) is ONNX-FX04's target; FX04 builds this
replacement and rewires the later readers of the base and of the slices.`,
	Fix: fixIndexPutLastDim,
})

const fixIndexPutLastDimName = "fix-index-put-last-dim"

var (
	fxOpRemainderTensor = ir.OpAtenRemainderTensor
	fxOpAnyDim          = ir.OpAtenAnyDim
)

func fixIndexPutLastDim(n *ir.Node, c *pm.Ctx) (bool, error) {
	self, _ := edit.TensorOperand(n.Arg("self"))
	if self == nil {
		return false, nil
	}
	chain := edit.FullViewChain(self)
	base := chain[len(chain)-1]
	if !lastDimScalarWrite(n, base) {
		return false, nil
	}
	v, err := buildLastDimWrite(edit.FixBuilder(n, fixIndexPutLastDimName), n, base)
	if err != nil {
		return false, err
	}
	n.Result().ReplaceAllUsesWith(v)
	return true, n.Erase()
}

// lastDimScalarWrite reports whether index_put(_) node n writes a 0-d value
// at integer indices of the last dim only, with accumulate False, into a
// full view of the contiguous tensor base.
func lastDimScalarWrite(n *ir.Node, base *ir.Value) bool {
	self, st := edit.TensorOperand(n.Arg("self"))
	if self == nil || st.Rank() == 0 {
		return false
	}
	if acc := n.Arg("accumulate"); acc.Kind != ir.ArgBool || acc.Bool() {
		return false
	}
	idxs := n.Arg("indices")
	if idxs.Kind != ir.ArgList || len(idxs.List) != st.Rank() {
		return false
	}
	for _, a := range idxs.List[:st.Rank()-1] {
		if !a.IsNone() {
			return false
		}
	}
	_, it := edit.TensorOperand(idxs.List[st.Rank()-1])
	if it == nil || !it.DType.IsInteger() || it.Rank() > 1 {
		return false
	}
	_, vt := edit.TensorOperand(n.Arg("values"))
	if vt == nil || vt.Rank() != 0 {
		return false
	}
	bt := base.Tensor()
	return bt.IsContiguous() && len(n.Results) == 1 && ir.TypeEqual(n.Result().Type, base.Type)
}

// buildLastDimWrite builds where(any(arange(L) == idx mod L), value, base).
func buildLastDimWrite(b *ir.Builder, n *ir.Node, base *ir.Value) (*ir.Value, error) {
	bt := base.Tensor()
	idxs := n.Arg("indices").List
	idx, it := edit.TensorOperand(idxs[len(idxs)-1])
	size, err := edit.SymSizeOf(b, base, bt.Rank()-1)
	if err != nil {
		return nil, err
	}
	ar, err := b.CallKw(edit.OpArange, []ir.Arg{size}, map[string]ir.Arg{"dtype": ir.DTypeArg(it.DType)})
	if err != nil {
		return nil, err
	}
	l, err := edit.ScalarAsTensor(b, size, it.DType)
	if err != nil {
		return nil, err
	}
	norm, err := b.Value(fxOpRemainderTensor, ir.ValueArg(idx), ir.ValueArg(l))
	if err != nil {
		return nil, err
	}
	var mask *ir.Value
	if it.Rank() == 0 {
		mask, err = b.Value(edit.OpEqTensor, ir.ValueArg(ar.Result()), ir.ValueArg(norm))
	} else {
		var col *ir.Value
		col, err = b.Value(edit.OpUnsqueeze, ir.ValueArg(norm), ir.IntArg(-1))
		if err == nil {
			var hits *ir.Value
			hits, err = b.Value(edit.OpEqTensor, ir.ValueArg(ar.Result()), ir.ValueArg(col))
			if err == nil {
				mask, err = b.Value(fxOpAnyDim, ir.ValueArg(hits), ir.IntArg(0))
			}
		}
	}
	if err != nil {
		return nil, err
	}
	val, _ := edit.TensorOperand(n.Arg("values"))
	val, err = edit.CastTo(b, val, bt.DType)
	if err != nil {
		return nil, err
	}
	return b.Value(edit.OpWhereSelf, ir.ValueArg(mask), ir.ValueArg(val), ir.ValueArg(base))
}
