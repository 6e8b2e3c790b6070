package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchWhere makes where() operands share the result dtype (ONNX-P01).
var PatchWhere = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P01",
	Name:    "where-promote",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Ops:     []ir.Op{ir.OpAtenWhereSelf, ir.OpAtenWhereScalarSelf, ir.OpAtenWhereScalarOther, ir.OpAtenWhereScalar},
	Doc: `give both branches of where() the promoted result dtype

ONNX Where needs both branches of one type, while torch.where promotes them.
The patch casts a tensor branch whose dtype differs from the result's with
_to_copy and turns a Python-scalar branch into a 0-d tensor of the result
dtype, then rebuilds where.self. Unlike the Python patch, which cast the
other branch to x's dtype, it follows torch's type promotion (the result
type recorded on the node).`,
	Rewrite: rewriteWhere,
})

var (
	opWhereSelf    = ir.OpAtenWhereSelf
	opToCopy       = ir.OpAten_ToCopy
	opScalarTensor = ir.OpAtenScalarTensor
)

func rewriteWhere(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	out := n.Result().Tensor()
	if out == nil {
		return nil, nil
	}
	want := out.DType
	cond := n.Args[0]
	branches := []ir.Arg{n.Args[1], n.Args[2]}
	changed := n.Op != opWhereSelf
	for i, a := range branches {
		switch a.Kind {
		case ir.ArgValue:
			t := a.Value.Tensor()
			if t == nil {
				// A SymInt/SymFloat branch becomes a 0-d tensor too.
				v, err := scalarTensor(b, a, want)
				if err != nil {
					return nil, err
				}
				branches[i], changed = ir.ValueArg(v), true
				continue
			}
			if t.DType == want {
				continue
			}
			v, err := b.CallKw(opToCopy, []ir.Arg{a}, map[string]ir.Arg{"dtype": ir.DTypeArg(want)})
			if err != nil {
				return nil, err
			}
			branches[i], changed = ir.ValueArg(v.Result()), true
		default: // a Python scalar
			v, err := scalarTensor(b, a, want)
			if err != nil {
				return nil, err
			}
			branches[i], changed = ir.ValueArg(v), true
		}
	}
	if !changed {
		return nil, nil
	}
	w, err := b.Value(opWhereSelf, cond, branches[0], branches[1])
	if err != nil {
		return nil, err
	}
	c.Fired(n, "branches cast to "+want.String())
	return []*ir.Value{w}, nil
}

func scalarTensor(b *ir.Builder, s ir.Arg, dt ir.DType) (*ir.Value, error) {
	n, err := b.CallKw(opScalarTensor, []ir.Arg{s}, map[string]ir.Arg{"dtype": ir.DTypeArg(dt)})
	if err != nil {
		return nil, err
	}
	return n.Result(), nil
}
