package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
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

The mirror of ONNX-P09 (cummax-tril-mask): amin over the prefix positions
gives the values. Indices follow torch: the last j <= i whose element
equals the running minimum, and the latest NaN once one is seen. Memory is
O(N^2) per row. The rewrite is shared with ET-P26 (cummin-as-reduction).`,
	Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
		return edit.CumExtreme(n, b, c, false)
	},
})
