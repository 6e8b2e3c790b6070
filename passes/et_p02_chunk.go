package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchChunkNarrows legalizes chunk for the CUDA backend (ET-P02).
var PatchChunkNarrows = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P02",
	Name:    "chunk-as-narrows",
	Backend: "executorch.cuda",
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.chunk", "torch.Tensor.chunk"},
	Doc: `rewrite chunk as consecutive narrows

chunk(n) is split(ceil(size / n)), which AOTInductor cannot lower (no
split_copy c-shim); each chunk becomes a narrow at the running offset with
the size its result type records. Same result as the Python patch, which
routed chunk through its patched split.`,
	Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
		out, err := etPiecesAsNarrows(n, b)
		if err != nil {
			return nil, err
		}
		c.Fired(n, "chunk into narrows")
		return out, nil
	},
})
