package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// PatchONNXRandperm rewrites randperm as argsort(rand(n)) (ONNX-P06).
var PatchONNXRandperm = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P06",
	Name:    "randperm-argsort",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.randperm"},
	Doc: `rewrite randperm(n) as argsort(rand(n)) cast to its dtype

ONNX has no permutation generator and torchlib no decomposition of
aten.randperm. The patch draws n float32 uniforms on randperm's device,
argsorts them and casts the int64 indices to randperm's dtype: a uniformly
random permutation, as the Python patch built. It changes the random stream:
with the same seed the permutation differs from torch.randperm's (and
torch.manual_seed reproducibility of the exported program is lost anyway).`,
	Rewrite: rewriteRandperm,
})

var (
	tpOpRand    = ir.OpAtenRand
	tpOpArgsort = ir.OpAtenArgsort
)

func rewriteRandperm(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	out := n.Result().Tensor()
	if out == nil {
		return nil, nil
	}
	t := edit.NewBuilder(b, n)
	kw := map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Float32)}
	if d := n.Arg("device"); !d.IsNone() {
		kw["device"] = d
	}
	r := t.Kw(tpOpRand, []ir.Arg{ir.ListArg(n.Arg("n"))}, kw)
	idx := t.V(tpOpArgsort, ir.ValueArg(r), ir.IntArg(0))
	res := t.Cast(idx, out.DType)
	if t.Err != nil {
		return nil, t.Err
	}
	c.Fired(n, "argsort of "+ir.ListArg(n.Arg("n")).String()+" uniforms")
	return []*ir.Value{res}, nil
}
