package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// FixIntegralFloatScalar casts an integral tensor to float before rsub/sub with a float scalar (ONNX-FX14).
var FixIntegralFloatScalar = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ONNX-FX14",
	Name:    fixIntegralFloatScalarName,
	Backend: pm.BackendONNX,
	Targets: []ir.Op{ir.OpAtenRsubScalar, ir.OpAtenSubScalar},
	Doc: `cast an integral tensor to the result dtype before rsub/sub/mul with a float scalar

1.0 - int_mask crashes the ONNX decomposition (pytorch/pytorch#194381) and
int_mask * 2.0 has none (#194382). When self is an integer tensor (or a
bool tensor, for mul) and other is a float literal or a SymFloat value, self
is cast with _to_copy to the node's result dtype (torch's promoted dtype,
float32 by default) and the op is rebuilt on it; the result is the same,
since torch computes in that dtype. mul.Scalar is ONNX-FX11's target
(targets are disjoint), so FX11 applies this promotion for mul.`,
	Fix: fixIntegralFloatScalar,
})

const fixIntegralFloatScalarName = "fix-integral-float-scalar"

func fixIntegralFloatScalar(n *ir.Node, c *pm.Ctx) (bool, error) {
	promoted, ok, err := fxPromoteIntegralSelf(n, fixIntegralFloatScalarName)
	if err != nil || !ok {
		return false, err
	}
	return true, fxRebuildWithSelf(n, fixIntegralFloatScalarName, promoted)
}

var fxOpMulScalar = ir.OpAtenMulScalar

// fxPromoteIntegralSelf casts self of n (rsub/sub/mul .Scalar) to n's result
// dtype when self is integral and other is a float (literal or SymFloat).
// It reports false, building nothing, when the pattern does not apply.
func fxPromoteIntegralSelf(n *ir.Node, pass string) (ir.Arg, bool, error) {
	selfArg := n.Arg("self")
	self, st := edit.TensorOperand(selfArg)
	if self == nil || len(n.Results) != 1 || n.Result().Tensor() == nil {
		return selfArg, false, nil
	}
	if !st.DType.IsInteger() && !(n.Op == fxOpMulScalar && st.DType.IsBool()) {
		return selfArg, false, nil
	}
	if !fxIsFloatScalar(n.Arg("other")) {
		return selfArg, false, nil
	}
	rdt := n.Result().Tensor().DType
	if !rdt.IsFloat() {
		return selfArg, false, nil
	}
	v, err := edit.CastTo(edit.FixBuilder(n, pass), self, rdt)
	if err != nil {
		return selfArg, false, err
	}
	return ir.ValueArg(v), true, nil
}

// fxIsFloatScalar reports a float literal or a SymFloat / float value.
func fxIsFloatScalar(a ir.Arg) bool {
	switch a.Kind {
	case ir.ArgFloat:
		return true
	case ir.ArgValue:
		switch t := a.Value.Type.(type) {
		case *ir.SymFloatType:
			return true
		case *ir.ScalarType:
			return t.Kind == ir.FloatKind
		}
	}
	return false
}

// fxRebuildWithSelf rebuilds n with self replaced, the other arguments kept.
func fxRebuildWithSelf(n *ir.Node, pass string, self ir.Arg) error {
	args := append([]ir.Arg(nil), n.Args...)
	args[n.Op.ArgIndex("self")] = self
	b := edit.FixBuilder(n, pass)
	kw := map[string]ir.Arg{}
	s := &n.Op.Info().Schema
	for i, as := range s.Args {
		kw[as.Name] = args[i]
	}
	m, err := b.CallKw(n.Op, nil, kw)
	if err != nil {
		return err
	}
	n.Result().ReplaceAllUsesWith(m.Result())
	return n.Erase()
}
