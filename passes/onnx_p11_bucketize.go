package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchONNXBucketize rewrites bucketize as a broadcast comparison count (ONNX-P11).
var PatchONNXBucketize = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P11",
	Name:    "bucketize-compare-sum",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.bucketize"},
	Doc: `rewrite bucketize as a count of smaller boundaries

ONNX has no bucketize. For sorted 1-D boundaries, bucketize(x) is the number
of boundaries b with b < x (right=False) or b <= x (right=True), so the
patch compares boundaries against x.unsqueeze(-1) and sums the last dim,
then casts to int32 when out_int32 is set. Empty boundaries give a sum over
an empty dim, zeros, which is torch's answer, so the Python special case is
not needed. Like torch, the result for unsorted boundaries is unspecified
(here: the count, where torch's binary search gives some other index).`,
	Rewrite: rewriteBucketize,
})

func rewriteBucketize(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	x, bounds := n.Arg("self"), n.Arg("boundaries")
	if x.Kind != ir.ArgValue || bounds.Kind != ir.ArgValue || bounds.Value.Tensor() == nil || bounds.Value.Tensor().Rank() != 1 {
		return nil, nil
	}
	out := n.Result().Tensor()
	if out == nil {
		return nil, nil
	}
	right := n.Arg("right").Bool()
	t := newTP(b, n)
	res := t.countBelow(bounds.Value, t.v(tpOpUnsqueeze, x, ir.IntArg(-1)), right, -1)
	res = t.cast(res, out.DType)
	if t.err != nil {
		return nil, t.err
	}
	side := "left"
	if right {
		side = "right"
	}
	c.Fired(n, "count of boundaries, side "+side)
	return []*ir.Value{res}, nil
}

// countBelow sums (seq < vals) (or <= when right) over dim: the insertion
// index of each value into a sorted sequence.
func (t *tpBuilder) countBelow(seq, vals *ir.Value, right bool, dim int64) *ir.Value {
	cmp := tpOpLtTensor
	if right {
		cmp = tpOpLeTensor
	}
	mask := t.v(cmp, ir.ValueArg(seq), ir.ValueArg(vals))
	return t.v(tpOpSumDim, ir.ValueArg(mask), ir.IntsArg(dim))
}
