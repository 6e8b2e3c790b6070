package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchDetach makes detach an identity for ExecuTorch (ET-P04).
var PatchDetach = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P04",
	Name:    "detach-identity",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.detach", "torch.Tensor.detach"},
	Doc: `replace detach by its input

ExecuTorch has no kernel for aten.detach; an inference program needs no
autograd cut, so the result is the input itself. The Python patch swapped
torch.detach and Tensor.detach during capture; here every detach node of the
traced graph is matched, whatever spelling produced it.`,
	Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
		in := n.Arg("self")
		if in.Kind != ir.ArgValue {
			return nil, nil
		}
		return []*ir.Value{in.Value}, nil
	},
})
