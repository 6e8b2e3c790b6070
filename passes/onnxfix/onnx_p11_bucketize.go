package onnxfix

import (
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// PatchONNXBucketize rewrites bucketize as a broadcast comparison count (ONNX-P11).
var PatchONNXBucketize = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P11",
	Name:    "bucketize-compare-sum",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.bucketize"},
	Doc: `rewrite bucketize as a count of smaller boundaries

ONNX has no bucketize. For sorted 1-D boundaries, bucketize(x) is the number
of boundaries b with b < x (right=False) or b <= x (right=True), so the
patch compares boundaries against x.unsqueeze(-1) and sums the last dim,
in int32 when out_int32 is set. Empty boundaries give a sum over
an empty dim, zeros, which is torch's answer, so the Python special case is
not needed. Like torch, the result for unsorted boundaries is unspecified
(here: the count, where torch's binary search gives some other index).
The rewrite is shared with ET-P23 (bucketize-as-compare).`,
	Rewrite: edit.BucketizeCount,
})
