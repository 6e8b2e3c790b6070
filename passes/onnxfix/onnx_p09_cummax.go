package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// PatchONNXCummax rewrites cummax with a lower-triangular mask (ONNX-P09).
var PatchONNXCummax = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P09",
	Name:    "cummax-tril-mask",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.cummax", "torch.Tensor.cummax"},
	Doc: `rewrite cummax as a masked max over an N x N lower-triangular grid

ONNX has no running maximum. Every position i of the scanned dim (length
N) is paired with every prefix position j on a new dim next to it;
tril(ones(N, N)) keeps j <= i (the other pairs take x[i], which every
prefix holds, so no dtype sentinel is needed) and amax over j gives the
values. Memory is O(N^2) per row, as in the Python patch. Indices follow
torch, not the Python patch's max(dim=-1) (whose tie-breaking was
backend-defined): the index is the largest j <= i whose element equals the
running maximum, i.e. the last occurrence on ties, and once a NaN is seen
the values are NaN and the index is that of the latest NaN, which is what
torch's kernel (x >= max, a new NaN always taken) computes. The rewrite is
shared with ET-P25 (cummax-as-reduction).`,
	Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
		return edit.CumExtreme(n, b, c, true)
	},
})
