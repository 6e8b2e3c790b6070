package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// FixDetachInplace rewrites aten.detach_ to aten.detach (ONNX-FX03).
var FixDetachInplace = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ONNX-FX03",
	Name:    fixDetachInplaceName,
	Backend: pm.BackendONNX,
	Targets: []ir.Op{ir.OpAtenDetach_},
	Doc: `rewrite aten.detach_ to its functional twin aten.detach

The ONNX translation accepts only functional graphs; detach_ survives into
exported programs after alias chains. On an inference graph the in-place and
functional forms compute the same value.`,
	Fix: fixDetachInplace,
})

const fixDetachInplaceName = "fix-detach-inplace"

var opDetach = ir.OpAtenDetach

func fixDetachInplace(n *ir.Node, c *pm.Ctx) (bool, error) {
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = fixDetachInplaceName
	meta := n.Meta.Clone()
	b.Meta = &meta
	v, err := b.Value(opDetach, n.Arg("self"))
	if err != nil {
		return false, err
	}
	n.Result().ReplaceAllUsesWith(v)
	return true, n.Erase()
}
