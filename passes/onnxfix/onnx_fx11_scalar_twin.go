package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// FixScalarTwin rewrites .Scalar overloads given a symbolic other to their .Tensor twins (ONNX-FX11).
var FixScalarTwin = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ONNX-FX11",
	Name:    fixScalarTwinName,
	Backend: pm.BackendONNX,
	Targets: fxScalarTwinTargets(),
	Doc: `rewrite .Scalar overloads whose other is a SymInt/SymFloat value to their .Tensor twins

The B revision folded ONNX-FX03/04/07/09 into one table of twins
(detach_, index_put_, triu_, mul.Scalar, remainder.Scalar). Node-fix
targets are disjoint in fxport, so those rows keep their own fixes and this
one is the table for the twins no other row covers: today mul.Scalar →
mul.Tensor. other becomes a 0-d tensor (scalar_tensor) of the node's result
dtype, so the Tensor overload computes torch's result dtype. Because
mul.Scalar is this fix's target, it also applies ONNX-FX14's promotion
(integral self, float other: self is cast to the result dtype first).`,
	Fix: fixScalarTwin,
})

const fixScalarTwinName = "fix-scalar-twin"

// fxScalarTwins maps each .Scalar overload of the table to its .Tensor twin.
var fxScalarTwins = []struct{ from, to ir.Op }{
	{ir.OpAtenMulScalar, ir.OpAtenMulTensor},
}

// fxScalarTwinOps is fxScalarTwins by op.
var fxScalarTwinOps = func() map[ir.Op]ir.Op {
	m := map[ir.Op]ir.Op{}
	for _, t := range fxScalarTwins {
		m[t.from] = t.to
	}
	return m
}()

func fxScalarTwinTargets() []ir.Op {
	out := make([]ir.Op, len(fxScalarTwins))
	for i, t := range fxScalarTwins {
		out[i] = t.from
	}
	return out
}

func fixScalarTwin(n *ir.Node, c *pm.Ctx) (bool, error) {
	twin, ok := fxScalarTwinOps[n.Op]
	if !ok {
		return false, nil
	}
	promoted, ok, err := fxPromoteIntegralSelf(n, fixScalarTwinName)
	if err != nil {
		return false, err
	}
	if ok {
		c.Fired(n, "integral self cast to "+n.Result().Tensor().DType.String()+" (ONNX-FX14)")
	}
	if n.Arg("other").Kind != ir.ArgValue {
		if !ok {
			return false, nil
		}
		// Only the promotion applies: rebuild the same op on the cast self.
		return true, fxRebuildWithSelf(n, fixScalarTwinName, promoted)
	}
	return fxScalarToTensorTwin(n, fixScalarTwinName, twin, promoted)
}
