package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchTopkArgsort legalizes topk for the CUDA backend (ET-P03).
var PatchTopkArgsort = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P03",
	Name:    "topk-as-argsort",
	Backend: "executorch.cuda",
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.topk", "torch.Tensor.topk"},
	Doc: `rewrite topk as argsort, narrow and gather

AOTInductor has no topk. The indices are the first k of
argsort(dim, descending=largest), and the values gather the input at them.
The order is always sorted: for sorted=False torch leaves the order of the
k elements unspecified, so a sorted result is a valid one (the Python patch
ignored the flag the same way). The Python patch narrowed dim 0 whatever
the topk dim; here the narrow is along the topk dim.`,
	Rewrite: etRewriteTopkArgsort,
})

var etOpArgsort = ir.OpAtenArgsort

func etRewriteTopkArgsort(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	self := n.Arg("self")
	t, err := ir.ArgTensor(self, "self")
	if err != nil || t.Rank() == 0 {
		return nil, nil // a 0-d topk is the identity with index 0; leave it
	}
	d, err := etNormDim(n.Arg("dim"), t.Rank())
	if err != nil {
		return nil, err
	}
	idx, err := b.Value(etOpArgsort, self, ir.IntArg(int64(d)), n.Arg("largest"))
	if err != nil {
		return nil, err
	}
	top, err := b.Value(etOpNarrow, ir.ValueArg(idx), ir.IntArg(int64(d)), ir.IntArg(0), n.Arg("k"))
	if err != nil {
		return nil, err
	}
	vals, err := b.Value(etOpGather, self, ir.IntArg(int64(d)), ir.ValueArg(top))
	if err != nil {
		return nil, err
	}
	c.Fired(n, "topk via argsort")
	return []*ir.Value{vals, top}, nil
}
