package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// FixSortStable rewrites aten.sort.stable to aten.sort.default (ONNX-FX08).
var FixSortStable = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ONNX-FX08",
	Name:    fixSortStableName,
	Backend: pm.BackendONNX,
	Targets: []ir.Op{ir.OpAtenSortStable},
	Doc: `rewrite aten.sort.stable to aten.sort.default with the same dim and descending

The ONNX translation has no sort.stable. dim and descending are
keyword-only in sort.stable; the A revision of the Python fix read them
positionally and so always sorted along -1 ascending. fxport reads them by
name, so the sort keeps its dim and direction.

The stable flag is dropped. This is sound for the ONNX target: sort is
lowered to TopK over the whole axis, and ONNX's TopK breaks ties by the
lower index, so equal elements keep their order in both directions, which
is what a stable sort returns.`,
	Fix: fixSortStable,
})

const fixSortStableName = "fix-sort-stable"

var fxOpSort = ir.OpAtenSort

func fixSortStable(n *ir.Node, c *pm.Ctx) (bool, error) {
	m, err := edit.FixBuilder(n, fixSortStableName).Call(fxOpSort, n.Arg("self"), n.Arg("dim"), n.Arg("descending"))
	if err != nil {
		return false, err
	}
	if len(m.Results) != len(n.Results) {
		return false, n.Errorf("sort.default gives %d results, sort.stable %d", len(m.Results), len(n.Results))
	}
	for i, r := range n.Results {
		r.ReplaceAllUsesWith(m.Results[i])
	}
	return true, n.Erase()
}
