package onnxfix

import (
	"strconv"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// PatchONNXSplitSymInt rewrites a split with symbolic sizes as narrows (ONNX-P20).
var PatchONNXSplitSymInt = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P20",
	Name:    "split-symint-narrows",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.split", "torch.Tensor.split"},
	Doc: `rewrite split with a SymInt size as one narrow per piece

A split whose size is a SymInt lowers to SplitToSequence, whose constant
folding crashes the ONNX optimizer. The traced node already has a static
number of pieces (shape inference requires it), so the patch replaces it
by that many narrow(x, dim, start, length) nodes: for split.Tensor piece i
starts at i*size and has the size (the last piece takes what remains); for
split_with_sizes the starts are the running sums of the sizes. Starts and
lengths that are not literals become SymInt arithmetic (operator.mul/add/
sub on the size). Splits whose sizes are all literals are left alone: ONNX
Split handles them.`,
	Rewrite: rewriteSplitSymInt,
})

var opSplitWithSizes = ir.OpAtenSplitWithSizes

func rewriteSplitSymInt(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	xa := n.Arg("self")
	if xa.Kind != ir.ArgValue || xa.Value.Tensor() == nil || xa.Value.Tensor().Rank() == 0 {
		return nil, nil
	}
	x := xa.Value
	d, ok := edit.NormDimLit(n.Arg("dim").Int, x.Tensor().Rank())
	if !ok {
		return nil, nil
	}
	t := edit.NewBuilder(b, n)
	var starts, lengths []ir.Arg
	if n.Op == opSplitWithSizes {
		sizes := n.Arg("split_sizes").List
		if !tpAnyValue(sizes) || len(sizes) != len(n.Results) {
			return nil, nil
		}
		start := ir.IntArg(0)
		for i, s := range sizes {
			if i > 0 {
				start = t.Add(start, sizes[i-1])
			}
			starts, lengths = append(starts, start), append(lengths, s)
		}
	} else {
		s := n.Arg("split_size")
		if s.Kind != ir.ArgValue {
			return nil, nil
		}
		se, _ := edit.SymExpr(s)
		last := len(n.Results) - 1
		for i, r := range n.Results {
			starts = append(starts, t.Mul(s, ir.IntArg(int64(i))))
			rt := r.Tensor()
			if rt == nil {
				return nil, nil
			}
			l := rt.Shape[d]
			lc, lconst := l.Const()
			switch {
			case lconst:
				lengths = append(lengths, ir.IntArg(lc))
			case se.IsValid() && l.Equal(se):
				lengths = append(lengths, s)
			case i == last:
				lengths = append(lengths, t.Sub(t.Dim(x, d), t.Mul(s, ir.IntArg(int64(last)))))
			default:
				return nil, n.Errorf("split: piece %d has size %s, not the split size %s", i, l, se)
			}
		}
	}
	res := t.Narrows(x, d, starts, lengths)
	if t.Err != nil {
		return nil, t.Err
	}
	c.Fired(n, tpPieces(len(res)))
	return res, nil
}

func tpAnyValue(args []ir.Arg) bool {
	for _, a := range args {
		if a.Kind == ir.ArgValue {
			return true
		}
	}
	return false
}

func tpPieces(k int) string {
	if k == 1 {
		return "1 narrow"
	}
	return strconv.Itoa(k) + " narrows"
}
