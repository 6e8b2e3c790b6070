package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchSplitNarrows legalizes split for the CUDA backend (ET-P01).
var PatchSplitNarrows = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P01",
	Name:    "split-as-narrows",
	Backend: "executorch.cuda",
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.split", "torch.Tensor.split"},
	Doc: `rewrite split and split_with_sizes as consecutive narrows

AOTInductor has no c-shim for split_copy.Tensor, so every piece becomes
narrow(dim, start, length), start being the sum of the sizes before it.
The lengths are the piece sizes the traced result types record, built as
SymInt arithmetic when symbolic. The Python patch fell back to the original
split for a SymInt split size; here symbolic sizes are narrowed as well,
since the result types say exactly where each piece starts.`,
	Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
		out, err := etPiecesAsNarrows(n, b)
		if err != nil {
			return nil, err
		}
		c.Fired(n, "split into narrows")
		return out, nil
	},
})
