package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchCummax rewrites cummax as a triangular reduction (ET-P25).
var PatchCummax = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P25",
	Name:    "cummax-as-reduction",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.cummax", "torch.Tensor.cummax"},
	Doc: `rewrite cummax as a lower-triangular where and amax, with torch's indices

cummax has only a portable kernel that edge lowering refuses to delegate;
the rewrite pairs every position i with every prefix position j <= i on a
new dim, reduces it with amax, and finds the index as the last prefix
position holding the running maximum (torch's tie rule), or the latest NaN
once a NaN has been seen. The Python patch returned all-zero indices; these
are torch's. Costs O(n^2) memory along the dim. The rewrite is shared with
ONNX-P09 (cummax-tril-mask).`,
	Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
		return rewriteCumExtreme(n, b, c, true)
	},
})
