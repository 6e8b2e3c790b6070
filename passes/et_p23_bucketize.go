package passes

import "github.com/fxport/fxport/pm"

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
binary search. The rewrite is shared with ONNX-P11
(bucketize-compare-sum).`,
	Rewrite: rewriteBucketizeCount,
})
