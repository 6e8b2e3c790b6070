package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchONNXSearchsorted rewrites searchsorted as a broadcast comparison count (ONNX-P12).
var PatchONNXSearchsorted = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P12",
	Name:    "searchsorted-compare-sum",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.searchsorted"},
	Doc: `rewrite searchsorted as a count of smaller sequence entries

ONNX has no searchsorted. The insertion index of v into a sorted row is the
number of entries e with e < v (side left) or e <= v (side right, or
right=True), so the patch compares sorted_sequence.unsqueeze(-1) [..., M, 1]
with values.unsqueeze(-2) [..., 1, K] and sums dim -2 (a 1-D sequence is
compared with values.unsqueeze(-1) and summed over -1), casting to int32 for
out_int32. Unlike the Python patch, which silently ignored it, a sorter is
honoured: the sequence is first reordered with gather(sorted_sequence, -1,
sorter), which is what the sorter means. Memory is O(M*K) per row.`,
	Rewrite: rewriteSearchsorted,
})

var tpOpGather = ir.MustLookupOp("aten.gather.default")

func rewriteSearchsorted(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	seqA, vals := n.Arg("sorted_sequence"), n.Arg("self")
	if seqA.Kind != ir.ArgValue || vals.Kind != ir.ArgValue || seqA.Value.Tensor() == nil || vals.Value.Tensor() == nil {
		return nil, nil
	}
	out := n.Result().Tensor()
	if out == nil {
		return nil, nil
	}
	right := n.Arg("right").Bool()
	if s := n.Arg("side"); s.Kind == ir.ArgString {
		switch s.Str {
		case "right":
			right = true
		case "left":
			if right {
				return nil, n.Errorf("searchsorted: side=left contradicts right=True")
			}
		default:
			return nil, n.Errorf("searchsorted: side must be 'left' or 'right', got %q", s.Str)
		}
	}
	t := newTP(b, n)
	seq := seqA.Value
	detail := ""
	if s := n.Arg("sorter"); s.Kind == ir.ArgValue {
		seq = t.v(tpOpGather, ir.ValueArg(seq), ir.IntArg(-1), s)
		detail = ", sorter applied"
	}
	var res *ir.Value
	if seqA.Value.Tensor().Rank() == 1 {
		res = t.countBelow(seq, t.v(tpOpUnsqueeze, vals, ir.IntArg(-1)), right, -1)
	} else {
		s := t.v(tpOpUnsqueeze, ir.ValueArg(seq), ir.IntArg(-1))
		res = t.countBelow(s, t.v(tpOpUnsqueeze, vals, ir.IntArg(-2)), right, -2)
	}
	res = t.cast(res, out.DType)
	if t.err != nil {
		return nil, t.err
	}
	side := "left"
	if right {
		side = "right"
	}
	c.Fired(n, "count of sequence entries, side "+side+detail)
	return []*ir.Value{res}, nil
}
