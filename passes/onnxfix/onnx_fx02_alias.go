package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// FixAlias removes aten.alias nodes before ONNX translation (ONNX-FX02).
var FixAlias = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ONNX-FX02",
	Name:    "fix-alias",
	Backend: pm.BackendONNX,
	Targets: []ir.Op{ir.OpAtenAlias},
	Doc: `replace aten.alias by its input

A functional graph never needs alias: its result is the input. Removing it
breaks the alias → detach_ → index_put_ chain that torch's decompositions
leave and that the ONNX translation cannot handle.`,
	Fix: fixAlias,
})

func fixAlias(n *ir.Node, c *pm.Ctx) (bool, error) {
	in := n.Arg("self")
	if in.Kind != ir.ArgValue {
		return false, nil
	}
	n.Result().ReplaceAllUsesWith(in.Value)
	return true, n.Erase()
}
