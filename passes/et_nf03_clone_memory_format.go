package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// FixCloneMemoryFormat makes clones of non-contiguous tensors contiguous (ET-NF03).
var FixCloneMemoryFormat = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ET-NF03",
	Name:    "fix-clone-memory-format",
	Backend: pm.BackendExecuTorch,
	Targets: []ir.Op{ir.OpAtenClone},
	Doc: `give clones of non-contiguous tensors memory_format=contiguous_format

A clone without memory_format preserves its input's layout, and ExecuTorch
cannot plan a clone of a transposed tensor (typically a KV cache) into a
non-default dim order. When the input's type has a non-default dim order
and no memory_format is given, the clone gets
memory_format=contiguous_format and its result type becomes contiguous.`,
	Fix: func(n *ir.Node, c *pm.Ctx) (bool, error) {
		t, err := ir.ArgTensor(n.Arg("self"), "self")
		if err != nil || t.IsContiguous() || !n.Arg("memory_format").IsNone() {
			return false, nil
		}
		n.SetNamedArg("memory_format", ir.MemoryFormatArg(ir.ContiguousFormat))
		types, err := ir.InferTypes(n)
		if err != nil {
			return false, err
		}
		n.Result().SetType(types[0])
		n.AddProvenance("fix-clone-memory-format")
		c.Fired(n, "memory_format=contiguous_format")
		return true, nil
	},
})
