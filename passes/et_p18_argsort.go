package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchArgsortTopk legalizes argsort for XNNPACK (ET-P18).
var PatchArgsortTopk = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P18",
	Name:    "argsort-as-topk",
	Backend: "executorch.xnnpack",
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.argsort", "torch.Tensor.argsort"},
	Doc: `rewrite argsort as the indices of a full-length topk

Neither XNNPACK nor the portable runtime has sort; argsort(dim, descending)
is topk(k=size(dim), dim, largest=descending, sorted=True).indices, with k
built from the dim's size (a SymInt when symbolic). A stable argsort
(argsort.stable with stable=True) is left alone: topk does not promise the
input order among equal elements, and the Python patch silently dropped the
guarantee.`,
	Rewrite: etRewriteArgsortTopk,
})

var etOpTopk = ir.OpAtenTopk

func etRewriteArgsortTopk(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	if i := n.Op.ArgIndex("stable"); i >= 0 && n.Args[i].Kind == ir.ArgBool && n.Args[i].Bool() {
		return nil, nil
	}
	self := n.Arg("self")
	t, err := ir.ArgTensor(self, "self")
	if err != nil || t.Rank() == 0 {
		return nil, nil
	}
	d, err := etNormDim(n.Arg("dim"), t.Rank())
	if err != nil {
		return nil, err
	}
	k, err := etSymArg(b, n, t.Shape[d])
	if err != nil {
		return nil, err
	}
	top, err := b.CallKw(etOpTopk, []ir.Arg{self, k, ir.IntArg(int64(d)), n.Arg("descending")}, nil)
	if err != nil {
		return nil, err
	}
	c.Fired(n, "argsort via topk")
	return []*ir.Value{top.Results[1]}, nil
}
