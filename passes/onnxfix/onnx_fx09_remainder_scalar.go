package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// FixRemainderScalar rewrites remainder.Scalar with a symbolic other to remainder.Tensor (ONNX-FX09).
var FixRemainderScalar = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ONNX-FX09",
	Name:    fixRemainderScalarName,
	Backend: pm.BackendONNX,
	Targets: []ir.Op{ir.OpAtenRemainderScalar},
	Doc: `rewrite aten.remainder.Scalar whose other is a SymInt/SymFloat value to aten.remainder.Tensor

torchlib's remainder.Scalar calls int() on the "scalar" and fails when it is
a symbolic value. The Python fix retargeted the node and left the SymInt in
the Tensor slot; fxport's IR types the Tensor slot, so other becomes a 0-d
tensor (scalar_tensor) of the node's result dtype, which gives
remainder.Tensor the same result dtype torch computed for the Scalar
overload. A literal other is left alone.`,
	Fix: fixRemainderScalar,
})

const fixRemainderScalarName = "fix-remainder-scalar"

var fxOpRemainderTensorTwin = ir.OpAtenRemainderTensor

func fixRemainderScalar(n *ir.Node, c *pm.Ctx) (bool, error) {
	return fxScalarToTensorTwin(n, fixRemainderScalarName, fxOpRemainderTensorTwin, n.Arg("self"))
}

// fxScalarToTensorTwin replaces a .Scalar overload n(self, other) whose other
// is a symbolic value by its .Tensor twin(self, scalar_tensor(other)), the
// 0-d tensor having n's result dtype. It reports false when other is a literal.
func fxScalarToTensorTwin(n *ir.Node, pass string, twin ir.Op, self ir.Arg) (bool, error) {
	other := n.Arg("other")
	if other.Kind != ir.ArgValue {
		return false, nil
	}
	rt := n.Result().Tensor()
	if rt == nil {
		return false, nil
	}
	b := edit.FixBuilder(n, pass)
	t, err := edit.ScalarAsTensor(b, other, rt.DType)
	if err != nil {
		return false, err
	}
	v, err := b.Value(twin, self, ir.ValueArg(t))
	if err != nil {
		return false, err
	}
	n.Result().ReplaceAllUsesWith(v)
	return true, n.Erase()
}
