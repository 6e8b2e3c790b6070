package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchBernoulliRand rewrites bernoulli with rand_like (ET-P08).
var PatchBernoulliRand = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P08",
	Name:    "bernoulli-as-rand",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.bernoulli", "torch.Tensor.bernoulli"},
	Doc: `rewrite bernoulli as (rand_like(x) < p).to(x.dtype)

ExecuTorch has no bernoulli out variant. bernoulli(x) draws with the
probabilities x, bernoulli(x, p) with the scalar p; both compare a uniform
draw rand_like(x) (float32 for a non-float x) with the probability and cast
the bool result to x's dtype. The distribution is the same; the random
stream is not torch's. A node with an explicit generator is left alone (the
Python patch silently ignored it; a traced program has none).`,
	Rewrite: etRewriteBernoulli,
})

var (
	etOpRandLike = ir.OpAtenRandLike
	etOpLtScalar = ir.OpAtenLtScalar
)

func etRewriteBernoulli(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	if !n.Arg("generator").IsNone() {
		return nil, nil
	}
	self := n.Arg("self")
	t, err := ir.ArgTensor(self, "self")
	if err != nil {
		return nil, nil
	}
	kw := map[string]ir.Arg{}
	if !t.DType.IsFloat() {
		kw["dtype"] = ir.DTypeArg(ir.Float32)
	}
	r, err := b.CallKw(etOpRandLike, []ir.Arg{self}, kw)
	if err != nil {
		return nil, err
	}
	var lt *ir.Value
	if p := n.Op.ArgIndex("p"); p >= 0 {
		lt, err = b.Value(etOpLtScalar, ir.ValueArg(r.Result()), n.Args[p])
	} else {
		lt, err = b.Value(etOpLtTensor, ir.ValueArg(r.Result()), self)
	}
	if err != nil {
		return nil, err
	}
	out, err := etCast(b, lt, n.Result().Tensor().DType)
	if err != nil {
		return nil, err
	}
	c.Fired(n, "rand_like < p")
	return []*ir.Value{out}, nil
}
