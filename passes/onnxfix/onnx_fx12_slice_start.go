package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// FixSliceImplicitStart spells out start 0 of slice.Tensor (ONNX-FX12).
var FixSliceImplicitStart = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ONNX-FX12",
	Name:    fixSliceImplicitStartName,
	Backend: pm.BackendONNX,
	Targets: []ir.Op{ir.OpAtenSliceTensor},
	Doc: `give aten.slice.Tensor an explicit start 0 where it is None

The ONNX translation of a slice without start leaves an empty input name
that ONNX Runtime rejects ("marked single but has an empty string"). start
None means 0, so the rewrite is exact. The node is changed in place.`,
	Fix: fixSliceImplicitStart,
})

const fixSliceImplicitStartName = "fix-slice-implicit-start"

func fixSliceImplicitStart(n *ir.Node, c *pm.Ctx) (bool, error) {
	if !n.Arg("start").IsNone() {
		return false, nil
	}
	n.SetNamedArg("start", ir.IntArg(0))
	n.AddProvenance(fixSliceImplicitStartName)
	c.MarkChanged()
	return true, nil
}
