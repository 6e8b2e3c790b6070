package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchSearchsortedCompare rewrites searchsorted as a broadcast count (ET-P24).
var PatchSearchsortedCompare = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P24",
	Name:    "searchsorted-as-compare",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.searchsorted"},
	Doc: `rewrite searchsorted as a broadcast comparison and a sum

searchsorted(seq, values) is, per value, the number of elements of its row
of seq below it (seq < v for side left, seq <= v for right=True or
side="right"). A 1-D seq is compared with every value (values get a
trailing size-1 dim); an N-D seq [..., M] with values [..., K] is compared
as seq[..., None, :] against values[..., :, None]. A sorter is honoured by
gathering seq through it first (the Python patch had no sorter support).
The sum is int64, int32 with out_int32.`,
	Rewrite: etRewriteSearchsorted,
})

func etRewriteSearchsorted(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	seq, vals := n.Arg("sorted_sequence"), n.Arg("self")
	st, err := ir.ArgTensor(seq, "sorted_sequence")
	if err != nil || st.Rank() == 0 {
		return nil, nil
	}
	vt, err := ir.ArgTensor(vals, "self")
	if err != nil {
		return nil, nil
	}
	right := n.Arg("right").Bool()
	if side := n.Arg("side"); side.Kind == ir.ArgString {
		right = side.Str == "right"
	}
	sorted := seq.Value
	if s := n.Arg("sorter"); !s.IsNone() {
		sorted, err = b.Value(etOpGather, seq, ir.IntArg(int64(st.Rank()-1)), s)
		if err != nil {
			return nil, err
		}
	}
	bounds := sorted
	var x *ir.Value
	if st.Rank() == 1 {
		x, err = etInsertOnes(b, n, vals, vt.Rank())
	} else {
		if vt.Rank() != st.Rank() {
			return nil, nil
		}
		bounds, err = etInsertOnes(b, n, ir.ValueArg(sorted), st.Rank()-1)
		if err != nil {
			return nil, err
		}
		x, err = etInsertOnes(b, n, vals, vt.Rank())
	}
	if err != nil {
		return nil, err
	}
	out, err := etCountBelow(b, bounds, x, right, etIndexDType(n))
	if err != nil {
		return nil, err
	}
	if !etSameTypes(n, []*ir.Value{out}) {
		return nil, nil
	}
	c.Fired(n, "count of elements below")
	return []*ir.Value{out}, nil
}
