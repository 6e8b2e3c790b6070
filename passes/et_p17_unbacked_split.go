package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchUnbackedSplit legalizes splits whose sections are unbacked (ET-P17).
var PatchUnbackedSplit = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P17",
	Name:    "unbacked-split-as-narrows",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.split", "torch.Tensor.split"},
	Doc: `rewrite a split with unbacked section sizes as a chain of narrows

A split whose piece sizes mention an unbacked symbol (sizes computed from
data) cannot be lowered: ExecuTorch's split kernels need sizes it can plan.
Each piece becomes narrow(dim, start, length) at the running offset. This is
revision D's semantics; revision C returned the whole input as the only
piece, valid only because every consumer re-concatenated. Splits with backed
or static sizes are left alone (on CUDA, split-as-narrows handles them).`,
	Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
		self := n.Arg("self")
		if self.Kind != ir.ArgValue || self.Value.Tensor() == nil {
			return nil, nil
		}
		env := n.Graph.Program.Env
		unbacked := false
		for _, r := range n.Results {
			if t := r.Tensor(); t != nil {
				for _, d := range t.Shape {
					unbacked = unbacked || etHasUnbacked(env, d)
				}
			}
		}
		if !unbacked {
			return nil, nil
		}
		out, err := etPiecesAsNarrows(n, b)
		if err != nil {
			return nil, err
		}
		c.Fired(n, "unbacked sections into narrows")
		return out, nil
	},
})
