package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchReshapeContiguous makes reshape/view inputs contiguous (ET-P33).
var PatchReshapeContiguous = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P33",
	Name:    "reshape-contiguous-input",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.reshape", "torch.Tensor.reshape", "torch.Tensor.view"},
	Doc: `clone a non-contiguous input of reshape or view to contiguous first

ExecuTorch's view_copy kernels read the input in its dim order, so a
reshape of a transposed tensor (its type's dim order is not the default)
would scramble elements. The input is cloned with
memory_format=contiguous_format and the same reshape or view applied to the
clone. Contiguous inputs are left alone.`,
	Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
		self := n.Arg("self")
		t, err := ir.ArgTensor(self, "self")
		if err != nil || t.IsContiguous() {
			return nil, nil
		}
		cl, err := b.CallKw(etOpClone, []ir.Arg{self}, map[string]ir.Arg{"memory_format": ir.MemoryFormatArg(ir.ContiguousFormat)})
		if err != nil {
			return nil, err
		}
		args := append([]ir.Arg{ir.ValueArg(cl.Result())}, n.Args[1:]...)
		v, err := b.Value(n.Op, args...)
		if err != nil {
			return nil, err
		}
		c.Fired(n, "contiguous clone of "+self.Value.String())
		return []*ir.Value{v}, nil
	},
})
