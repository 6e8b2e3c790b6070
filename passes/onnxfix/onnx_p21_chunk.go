package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// PatchONNXChunkDynamic rewrites chunk on a dynamic dim as narrows (ONNX-P21).
var PatchONNXChunkDynamic = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P21",
	Name:    "chunk-dynamic-narrows",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.chunk", "torch.Tensor.chunk"},
	Doc: `rewrite chunk along a dynamic dim as one narrow per piece

chunk along a dim whose size is symbolic lowers to SplitToSequence, which
onnxscript's InlinePass rejects. The traced node has a static number of
pieces; the patch replaces it by narrows computed as torch does: the piece
size is ceil(size / chunks) = (size + chunks - 1) // chunks, piece i starts
at i * piece and the last piece takes what remains (so chunk may give fewer
than chunks pieces, exactly as the traced node records); a single chunk is
the input itself. Chunks along a
static dim are left alone.`,
	Rewrite: rewriteChunkDynamic,
})

func rewriteChunkDynamic(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	xa := n.Arg("self")
	if xa.Kind != ir.ArgValue || xa.Value.Tensor() == nil || xa.Value.Tensor().Rank() == 0 {
		return nil, nil
	}
	x := xa.Value
	d, ok := edit.NormDimLit(n.Arg("dim").Int, x.Tensor().Rank())
	if !ok {
		return nil, nil
	}
	if _, static := x.Tensor().Shape[d].Const(); static {
		return nil, nil
	}
	chunks := n.Arg("chunks").Int
	if chunks <= 0 {
		return nil, n.Errorf("chunk expects chunks > 0, got %d", chunks)
	}
	if len(n.Results) == 1 {
		c.Fired(n, "one chunk: the input itself")
		return []*ir.Value{x}, nil
	}
	t := edit.NewBuilder(b, n)
	size := t.Dim(x, d)
	piece := t.Arith(edit.OpPyFloorDiv, t.Add(size, ir.IntArg(chunks-1)), ir.IntArg(chunks))
	last := len(n.Results) - 1
	var starts, lengths []ir.Arg
	for i := range n.Results {
		start := t.Mul(piece, ir.IntArg(int64(i)))
		starts = append(starts, start)
		if i == last {
			lengths = append(lengths, t.Sub(size, start))
		} else {
			lengths = append(lengths, piece)
		}
	}
	res := t.Narrows(x, d, starts, lengths)
	if t.Err != nil {
		return nil, t.Err
	}
	c.Fired(n, tpPieces(len(res)))
	return res, nil
}
