package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// PatchONNXRMSNorm decomposes rms_norm and _fused_rms_norm (ONNX-P05).
var PatchONNXRMSNorm = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P05",
	Name:    "rms-norm-decompose",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.nn.functional.rms_norm", "torch.nn.RMSNorm.forward"},
	Doc: `decompose rms_norm and _fused_rms_norm into elementwise ops

ONNX before opset 23 has no RMS normalization and torchlib has no
translation of aten._fused_rms_norm. The patch rewrites aten.rms_norm and
aten._fused_rms_norm as torch computes them: the input is upcast to float32
(float64 stays float64), x * rsqrt(mean(x^2 over the normalized dims) + eps),
times the weight when there is one (the affine case, which the Python patch
left to the original), then cast back to the input dtype. eps=None means
finfo(input dtype).eps. For _fused_rms_norm the second result, rstd, is the
rsqrt term (keepdim shape) in the recorded stats dtype. The Python patch
replaced RMSNorm.forward only for elementwise_affine=False modules; here every
rms_norm node of the traced program is matched, whatever produced it.`,
	Rewrite: rewriteRMSNorm,
})

var (
	opFusedRMSNorm = ir.OpAten_FusedRmsNorm
	tpOpPowScalar  = ir.OpAtenPowTensorScalar
	tpOpMeanDim    = ir.OpAtenMeanDim
	tpOpRsqrt      = ir.OpAtenRsqrt
	tpOpAddScalar  = ir.OpAtenAddScalar
)

// tpFinfoEps is torch.finfo(dt).eps for the floating dtypes.
func tpFinfoEps(dt ir.DType) (float64, bool) {
	switch dt {
	case ir.Float16:
		return 0.0009765625, true
	case ir.BFloat16:
		return 0.0078125, true
	case ir.Float32:
		return 1.1920928955078125e-07, true
	case ir.Float64:
		return 2.220446049250313e-16, true
	}
	return 0, false
}

func rewriteRMSNorm(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	xa := n.Args[0]
	if xa.Kind != ir.ArgValue || xa.Value.Tensor() == nil {
		return nil, nil
	}
	x := xa.Value
	xt := x.Tensor()
	if !xt.DType.IsFloat() {
		return nil, nil
	}
	k := len(n.Arg("normalized_shape").List)
	if k == 0 || k > xt.Rank() {
		return nil, n.Errorf("normalized_shape %s does not fit input %s", n.Arg("normalized_shape"), xt)
	}
	eps, ok := tpFinfoEps(xt.DType)
	if e := n.Arg("eps"); !e.IsNone() {
		switch e.Kind {
		case ir.ArgFloat:
			eps, ok = e.Float, true
		case ir.ArgInt:
			eps, ok = float64(e.Int), true
		default:
			ok = false
		}
	}
	if !ok {
		return nil, nil // a symbolic eps or an exotic float dtype: leave the node
	}
	compute := ir.Float32
	if xt.DType == ir.Float64 {
		compute = ir.Float64
	}
	dims := make([]int64, k)
	for i := range dims {
		dims[i] = int64(i - k)
	}
	t := edit.NewBuilder(b, n)
	xf := t.Cast(x, compute)
	sq := t.V(tpOpPowScalar, ir.ValueArg(xf), ir.IntArg(2))
	ms := t.V(tpOpMeanDim, ir.ValueArg(sq), ir.IntsArg(dims...), ir.BoolArg(true))
	rstd := t.V(tpOpRsqrt, ir.ValueArg(t.V(tpOpAddScalar, ir.ValueArg(ms), ir.FloatArg(eps))))
	y := t.V(edit.OpMulTensor, ir.ValueArg(xf), ir.ValueArg(rstd))
	if w := n.Arg("weight"); w.Kind == ir.ArgValue {
		y = t.V(edit.OpMulTensor, ir.ValueArg(y), w)
	}
	out := t.Cast(y, n.Results[0].Tensor().DType)
	res := []*ir.Value{out}
	if n.Op == opFusedRMSNorm {
		rt := n.Results[1].Tensor()
		if rt == nil {
			return nil, nil
		}
		res = append(res, t.Cast(rstd, rt.DType))
	}
	if t.Err != nil {
		return nil, t.Err
	}
	c.Fired(n, "decomposed in "+compute.String())
	return res, nil
}
