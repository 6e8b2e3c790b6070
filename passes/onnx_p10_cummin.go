package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchONNXCummin rewrites cummin with a lower-triangular mask (ONNX-P10).
var PatchONNXCummin = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P10",
	Name:    "cummin-tril-mask",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.cummin", "torch.Tensor.cummin"},
	Doc: `rewrite cummin as a masked min over an N x N lower-triangular grid

The mirror of ONNX-P09 (cummax-tril-mask): the masked-out part of the grid
is filled with the dtype's highest value (+inf, the integer maximum, or True
for bool) and amin gives the values. Indices follow torch: the last j <= i
whose element equals the running minimum, and the latest NaN once one is
seen. Memory is O(N^2) per row.`,
	Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
		return rewriteCumExtreme(n, b, c, false)
	},
})
