package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// PatchONNXComplexUnsqueeze unsqueezes a complex tensor through its real view (ONNX-P02).
var PatchONNXComplexUnsqueeze = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P02",
	Name:    "complex-unsqueeze-real-view",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.unsqueeze", "torch.Tensor.unsqueeze"},
	Doc: `unsqueeze a complex tensor through its real view

The ONNX exporter represents a complex tensor as a real one with a trailing
(re, im) dim of 2, and torchlib's unsqueeze mishandles negative dims on that
representation. The patch rewrites unsqueeze(z, dim) for complex z as
view_as_complex(unsqueeze(view_as_real(z), dim')), where dim' is dim
normalized against the result rank, so it never points into the trailing
pair dim. The Python patch split z into real and imaginary parts,
unsqueezed each and recombined them with torch.complex; the real-view form
is the same value with one unsqueeze. Real inputs are left alone.`,
	Rewrite: rewriteComplexUnsqueeze,
})

func rewriteComplexUnsqueeze(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	z := n.Arg("self")
	if z.Kind != ir.ArgValue || z.Value.Tensor() == nil || !z.Value.Tensor().DType.IsComplex() {
		return nil, nil
	}
	d, ok := edit.NormDimLit(n.Arg("dim").Int, z.Value.Tensor().Rank()+1)
	if !ok {
		return nil, n.Errorf("unsqueeze: dim %d out of range for %s", n.Arg("dim").Int, z.Value.Tensor())
	}
	t := edit.NewBuilder(b, n)
	r := t.V(edit.OpViewAsReal, z)
	u := t.V(edit.OpUnsqueeze, ir.ValueArg(r), ir.IntArg(int64(d)))
	out := t.V(edit.OpViewAsCplx, ir.ValueArg(u))
	if t.Err != nil {
		return nil, t.Err
	}
	c.Fired(n, "unsqueezed the real view at dim "+ir.IntArg(int64(d)).String())
	return []*ir.Value{out}, nil
}
