package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

// PatchOneHotCompare rewrites one_hot as a comparison with arange (ET-P32).
var PatchOneHotCompare = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P32",
	Name:    "one-hot-as-compare",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.nn.functional.one_hot"},
	Doc: `rewrite one_hot as (x[..., None] == arange(n)).long()

ExecuTorch has no one_hot kernel. With an explicit num_classes n the
result is the comparison of x with a trailing size-1 dim against arange(n),
cast to int64. num_classes=-1 (n = max(x) + 1, a data-dependent size) is
left alone. Out-of-range classes give an all-zero row instead of torch's
error.`,
	Rewrite: func(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
		self := n.Arg("self")
		t, err := ir.ArgTensor(self, "self")
		if err != nil {
			return nil, nil
		}
		nc := n.Arg("num_classes")
		if nc.Kind != ir.ArgInt || nc.Int < 0 {
			return nil, nil
		}
		x, err := etInsertOnes(b, n, self, t.Rank())
		if err != nil {
			return nil, err
		}
		ar, err := etArange(b, n, sym.Const(nc.Int), ir.Int64)
		if err != nil {
			return nil, err
		}
		eq, err := b.Value(etOpEqTensor, ir.ValueArg(x), ir.ValueArg(ar))
		if err != nil {
			return nil, err
		}
		out, err := etCast(b, eq, ir.Int64)
		if err != nil {
			return nil, err
		}
		c.Fired(n, "compare with arange")
		return []*ir.Value{out}, nil
	},
})
