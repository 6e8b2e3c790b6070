package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// FixIndexPutInplace rewrites aten.index_put_ to aten.index_put (ONNX-FX04).
var FixIndexPutInplace = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ONNX-FX04",
	Name:    fixIndexPutInplaceName,
	Backend: pm.BackendONNX,
	Targets: []ir.Op{ir.OpAtenIndexPut_},
	Doc: `rewrite aten.index_put_ to its functional twin aten.index_put

The ONNX translation accepts only functional graphs. The functional node
takes the same arguments (self, indices, values, accumulate). Unlike the
Python fix, which only swapped the op, fxport also makes every later reader
of the written tensor read the new value: readers of self after the node,
and readers of the tensors self is a full slice of (start 0, step 1, same
shape), since the write reaches them too. A write through a partial view
does not reach its base here, as in Python.

When the write is x[..., idx] = scalar (the ONNX-FX13 pattern), the
replacement is FX13's arange == idx mask and where, built here directly:
the in-place op is this fix's target and node-fix targets are disjoint.`,
	Fix: fixIndexPutInplace,
})

const fixIndexPutInplaceName = "fix-index-put-inplace"

var fxOpIndexPut = ir.OpAtenIndexPut

func fixIndexPutInplace(n *ir.Node, c *pm.Ctx) (bool, error) {
	self, _ := edit.TensorOperand(n.Arg("self"))
	if self == nil {
		return false, nil
	}
	chain := edit.FullViewChain(self)
	b := edit.FixBuilder(n, fixIndexPutInplaceName)
	var v *ir.Value
	var err error
	if lastDimScalarWrite(n, chain[len(chain)-1]) {
		v, err = buildLastDimWrite(b, n, chain[len(chain)-1])
		if err == nil {
			c.Fired(n, "x[..., idx] = scalar as an arange == idx mask and where (ONNX-FX13)")
		}
	} else {
		v, err = b.Value(fxOpIndexPut, n.Arg("self"), n.Arg("indices"), n.Arg("values"), n.Arg("accumulate"))
	}
	if err != nil {
		return false, err
	}
	return true, edit.ReplaceInplace(n, v, chain...)
}
