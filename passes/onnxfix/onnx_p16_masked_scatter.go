package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// PatchONNXMaskedScatter rewrites masked_scatter as cumsum + gather + where (ONNX-P16).
var PatchONNXMaskedScatter = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P16",
	Name:    "masked-scatter-gather",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.Tensor.masked_scatter"},
	Doc: `rewrite masked_scatter as a cumsum-indexed gather and a where

torchlib lowers masked_scatter to ScatterND, which fails in onnxruntime for
the shapes vision-language models produce. The patch broadcasts the mask to
self's shape (expand_as), flattens it, numbers the True positions with
cumsum - 1 (clamped at 0 so False positions read a valid index), gathers
those positions from the flattened source (index_select), keeps self where
the mask is False and reshapes back: the k-th True position in row-major
order receives source.flatten()[k], which is torch's semantics. As in the
Python patch, an all-False mask with an empty source reads index 0 of an
empty tensor (an out-of-range Gather at runtime) where torch returns self
unchanged.`,
	Rewrite: rewriteMaskedScatter,
})

var (
	tpOpExpandAs    = ir.OpAtenExpandAs
	tpOpCumsum      = ir.OpAtenCumsum
	tpOpClampMin    = ir.OpAtenClampMin
	tpOpSubScalar   = ir.OpAtenSubScalar
	tpOpIndexSelect = ir.OpAtenIndexSelect
)

func rewriteMaskedScatter(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	self, mask, src := n.Arg("self"), n.Arg("mask"), n.Arg("source")
	if self.Kind != ir.ArgValue || mask.Kind != ir.ArgValue || src.Kind != ir.ArgValue {
		return nil, nil
	}
	st, mt := self.Value.Tensor(), mask.Value.Tensor()
	if st == nil || mt == nil || src.Value.Tensor() == nil {
		return nil, nil
	}
	t := edit.NewBuilder(b, n)
	m := mask.Value
	if !ir.TypeEqual(mt.WithDType(st.DType), st) {
		m = t.V(tpOpExpandAs, ir.ValueArg(m), self)
	}
	flat := ir.ListArg(ir.IntArg(-1))
	fm := t.V(edit.OpReshape, ir.ValueArg(m), flat)
	pos := t.Kw(tpOpCumsum, []ir.Arg{ir.ValueArg(fm), ir.IntArg(0)}, map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Int64)})
	pos = t.V(tpOpClampMin, ir.ValueArg(t.V(tpOpSubScalar, ir.ValueArg(pos), ir.IntArg(1))), ir.IntArg(0))
	picked := t.V(tpOpIndexSelect, ir.ValueArg(t.V(edit.OpReshape, src, flat)), ir.IntArg(0), ir.ValueArg(pos))
	mixed := t.V(edit.OpWhereSelf, ir.ValueArg(fm), ir.ValueArg(picked), ir.ValueArg(t.V(edit.OpReshape, self, flat)))
	out := t.V(edit.OpReshape, ir.ValueArg(mixed), t.Shape(self.Value))
	if t.Err != nil {
		return nil, t.Err
	}
	c.Fired(n, "gathered by mask cumsum")
	return []*ir.Value{out}, nil
}
