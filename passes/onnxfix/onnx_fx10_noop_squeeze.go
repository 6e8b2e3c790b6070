package onnxfix

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// FixNoopSqueeze drops squeeze axes whose size is statically not 1 (ONNX-FX10).
var FixNoopSqueeze = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ONNX-FX10",
	Name:    fixNoopSqueezeName,
	Backend: pm.BackendONNX,
	Targets: []ir.Op{ir.OpAtenSqueezeDim, ir.OpAtenSqueezeDims},
	Doc: `drop squeeze axes whose size is statically not 1

torch's squeeze leaves an axis of size ≠ 1 alone; ONNX's Squeeze rejects
it (ONNX Runtime fails on such models, e.g. mistral3). An axis is dropped
when the program's Env proves its size ≠ 1 (a constant, or a symbolic size
whose range excludes 1); squeeze.dims keeps the remaining axes, and a
squeeze left with no axis is replaced by its input. Axes whose size may be
1 at run time are kept. The Python fix mutated the node and returned
False; fxport reports the node consumed and marks the program changed.`,
	Fix: fixNoopSqueeze,
})

const fixNoopSqueezeName = "fix-noop-squeeze"

func fixNoopSqueeze(n *ir.Node, c *pm.Ctx) (bool, error) {
	self, st := edit.TensorOperand(n.Arg("self"))
	if self == nil || st.Rank() == 0 {
		return false, nil
	}
	env := edit.ProgramEnv(n)
	dimArg := n.Arg("dim")
	var dims []ir.Arg
	if dimArg.Kind == ir.ArgList {
		dims = dimArg.List
	} else {
		dims = []ir.Arg{dimArg}
	}
	var kept, dropped []ir.Arg
	for _, d := range dims {
		if d.Kind != ir.ArgInt {
			return false, nil
		}
		ax := d.Int
		if ax < 0 {
			ax += int64(st.Rank())
		}
		if ax < 0 || ax >= int64(st.Rank()) {
			return false, n.Errorf("squeeze dim %d out of range for rank %d", d.Int, st.Rank())
		}
		if env.StaticallyKnownTrue(sym.Ne(st.Shape[ax], sym.Const(1))) {
			dropped = append(dropped, d)
		} else {
			kept = append(kept, d)
		}
	}
	if len(dropped) == 0 {
		return false, nil
	}
	detail := fmt.Sprintf("axes %s are statically not 1", ir.ListArg(dropped...))
	if len(kept) == 0 {
		if !ir.TypeEqual(self.Type, n.Result().Type) {
			return false, n.Errorf("squeeze with no size-1 axis changes the type %s to %s", self.Type, n.Result().Type)
		}
		c.Fired(n, detail+"; squeeze removed")
		n.Result().ReplaceAllUsesWith(self)
		return true, n.Erase()
	}
	n.SetNamedArg("dim", ir.ListArg(kept...))
	n.AddProvenance(fixNoopSqueezeName)
	c.MarkChanged()
	c.Fired(n, detail+"; squeezing "+ir.ListArg(kept...).String())
	return true, nil
}
