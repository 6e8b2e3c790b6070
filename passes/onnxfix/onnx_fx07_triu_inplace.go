package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// FixTriuInplace rewrites aten.triu_ to aten.triu (ONNX-FX07).
var FixTriuInplace = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ONNX-FX07",
	Name:    fixTriuInplaceName,
	Backend: pm.BackendONNX,
	Targets: []ir.Op{ir.OpAtenTriu_},
	Doc: `rewrite aten.triu_ to its functional twin aten.triu

The ONNX translation accepts only functional graphs. triu takes the same
arguments (self, diagonal). As for ONNX-FX04, and unlike the Python fix,
later readers of self (and of the tensors self is a full slice of) read
the new value, since the in-place op wrote them.`,
	Fix: fixTriuInplace,
})

const fixTriuInplaceName = "fix-triu-inplace"

var fxOpTriu = ir.OpAtenTriu

func fixTriuInplace(n *ir.Node, c *pm.Ctx) (bool, error) {
	self, _ := edit.TensorOperand(n.Arg("self"))
	if self == nil {
		return false, nil
	}
	v, err := edit.FixBuilder(n, fixTriuInplaceName).Value(fxOpTriu, n.Arg("self"), n.Arg("diagonal"))
	if err != nil {
		return false, err
	}
	return true, edit.ReplaceInplace(n, v, edit.FullViewChain(self)...)
}
