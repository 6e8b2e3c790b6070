package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchCummin rewrites cummin as a triangular reduction (ET-P26).
var PatchCummin = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P26",
	Name:    "cummin-as-reduction",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.cummin", "torch.Tensor.cummin"},
	Doc: `rewrite cummin as a lower-triangular where and amin, with torch's indices

The mirror of cummax-as-reduction: amin over the prefix positions, the
index the last prefix position holding the running minimum, or the latest
NaN once a NaN has been seen. The Python patch returned all-zero indices;
these are torch's. Costs O(n^2) memory along the dim. The rewrite is shared
with ONNX-P10 (cummin-tril-mask).`,
	Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
		return rewriteCumExtreme(n, b, c, false)
	},
})
