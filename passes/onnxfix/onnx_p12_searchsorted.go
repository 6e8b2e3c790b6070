package onnxfix

import (
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// PatchONNXSearchsorted rewrites searchsorted as a broadcast comparison count (ONNX-P12).
var PatchONNXSearchsorted = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P12",
	Name:    "searchsorted-compare-sum",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.searchsorted"},
	Doc: `rewrite searchsorted as a count of smaller sequence entries

ONNX has no searchsorted. The insertion index of v into a sorted row is the
number of entries e with e < v (side left) or e <= v (side right, or
right=True), so the patch compares sorted_sequence[..., None, :] [..., 1, M]
with values[..., :, None] [..., K, 1] and sums the last dim (a 1-D sequence
is compared with values[..., None]), in int32 for out_int32. Unlike the Python patch, which silently ignored it, a sorter is
honoured: the sequence is first reordered with gather(sorted_sequence, -1,
sorter), which is what the sorter means. side="left" with right=True is an
error, as in torch. Memory is O(M*K) per row. The rewrite is shared with
ET-P24 (searchsorted-as-compare).`,
	Rewrite: edit.SearchsortedCount,
})
