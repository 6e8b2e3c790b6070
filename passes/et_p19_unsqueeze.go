package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchUnsqueezeReshape rewrites unsqueeze as reshape (ET-P19).
var PatchUnsqueezeReshape = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P19",
	Name:    "unsqueeze-as-reshape",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.unsqueeze", "torch.Tensor.unsqueeze"},
	Doc: `rewrite unsqueeze as a reshape with a 1 inserted

XNNPACK refuses unsqueeze_copy on dynamic graphs (error 0x1) but handles
reshape. The new shape is the input's with 1 at the unsqueezed position,
symbolic dims built from sym_size. Only contiguous inputs are rewritten: a
reshape of a non-contiguous input would need the contiguous clone of
reshape-contiguous-input (ET-P33), a copy the unsqueeze view does not make.`,
	Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
		self := n.Arg("self")
		t, err := ir.ArgTensor(self, "self")
		if err != nil || !t.IsContiguous() {
			return nil, nil
		}
		dim := n.Arg("dim")
		if dim.Kind != ir.ArgInt {
			return nil, nil
		}
		d := dim.Int
		if d < 0 {
			d += int64(t.Rank()) + 1
		}
		v, err := etInsertOnes(b, n, self, int(d))
		if err != nil {
			return nil, err
		}
		if !etSameTypes(n, []*ir.Value{v}) {
			return nil, nil
		}
		c.Fired(n, "reshape")
		return []*ir.Value{v}, nil
	},
})
