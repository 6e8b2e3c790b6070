package passes

import "github.com/fxport/fxport/pm"

// PatchSearchsortedCompare rewrites searchsorted as a broadcast count (ET-P24).
var PatchSearchsortedCompare = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P24",
	Name:    "searchsorted-as-compare",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.searchsorted"},
	Doc: `rewrite searchsorted as a broadcast comparison and a sum

searchsorted(seq, values) is, per value, the number of elements of its row
of seq below it (seq < v for side left, seq <= v for right=True or
side="right"). A 1-D seq is compared with every value (values get a
trailing size-1 dim); an N-D seq [..., M] with values [..., K] is compared
as seq[..., None, :] against values[..., :, None]. A sorter is honoured by
gathering seq through it first (the Python patch had no sorter support).
The sum is int64, int32 with out_int32. side="left" with right=True is an
error, as in torch. The rewrite is shared with ONNX-P12
(searchsorted-compare-sum).`,
	Rewrite: rewriteSearchsortedCount,
})
