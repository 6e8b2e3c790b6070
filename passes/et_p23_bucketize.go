package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchBucketizeCompare rewrites bucketize as a broadcast count (ET-P23).
var PatchBucketizeCompare = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P23",
	Name:    "bucketize-as-compare",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.bucketize"},
	Doc: `rewrite bucketize as a broadcast comparison and a sum

bucketize(x, boundaries) is the number of boundaries below x: x gets a
trailing size-1 dim, is compared with the 1-D boundaries (b < x, or b <= x
with right=True) and the comparison is summed over the boundaries in int64
(int32 with out_int32). Exact for sorted boundaries, which bucketize
requires; it costs len(boundaries) comparisons per element instead of a
binary search.`,
	Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
		self, bounds := n.Arg("self"), n.Arg("boundaries")
		t, err := ir.ArgTensor(self, "self")
		if err != nil {
			return nil, nil
		}
		if bt, err := ir.ArgTensor(bounds, "boundaries"); err != nil || bt.Rank() != 1 {
			return nil, nil
		}
		x, err := etInsertOnes(b, n, self, t.Rank())
		if err != nil {
			return nil, err
		}
		right := n.Arg("right").Bool()
		out, err := etCountBelow(b, bounds.Value, x, right, etIndexDType(n))
		if err != nil {
			return nil, err
		}
		c.Fired(n, "count of boundaries below")
		return []*ir.Value{out}, nil
	},
})
