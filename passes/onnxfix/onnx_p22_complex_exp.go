package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// PatchONNXComplexExp rewrites exp of a complex tensor in Euler form (ONNX-P22).
var PatchONNXComplexExp = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P22",
	Name:    "complex-exp-euler",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.exp", "torch.Tensor.exp"},
	Doc: `rewrite exp of a complex tensor as exp(re) * (cos(im) + i sin(im))

ONNX Exp has no complex types. For a complex input the patch splits the
real and imaginary parts (view_as_real, select), computes exp(re) * cos(im)
and exp(re) * sin(im) in the part dtype, and recombines them with
aten.complex: Euler's formula, exactly torch's exp including its inf/NaN
propagation for finite parts (exp(re) = inf with im = 0 gives inf * 1 = inf
and inf * 0 = NaN, as the real-arithmetic formula does; torch's complex exp
special-cases that imaginary 0, so exp(inf + 0i) is inf + NaN i here, not
inf + 0i). Real inputs are left alone.`,
	Rewrite: rewriteComplexExp,
})

var (
	tpOpExp = ir.OpAtenExp
	tpOpCos = ir.OpAtenCos
	tpOpSin = ir.OpAtenSin
)

func rewriteComplexExp(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	z := n.Arg("self")
	if z.Kind != ir.ArgValue || z.Value.Tensor() == nil || !z.Value.Tensor().DType.IsComplex() {
		return nil, nil
	}
	t := edit.NewBuilder(b, n)
	re, im := t.RealImag(z.Value)
	mag := t.V(tpOpExp, ir.ValueArg(re))
	outRe := t.V(edit.OpMulTensor, ir.ValueArg(mag), ir.ValueArg(t.V(tpOpCos, ir.ValueArg(im))))
	outIm := t.V(edit.OpMulTensor, ir.ValueArg(mag), ir.ValueArg(t.V(tpOpSin, ir.ValueArg(im))))
	out := t.V(edit.OpComplex, ir.ValueArg(outRe), ir.ValueArg(outIm))
	if t.Err != nil {
		return nil, t.Err
	}
	c.Fired(n, "Euler form in "+z.Value.Tensor().DType.ToReal().String())
	return []*ir.Value{out}, nil
}
