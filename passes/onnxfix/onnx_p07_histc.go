package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// PatchONNXHistc gives histc a floating input (ONNX-P07).
var PatchONNXHistc = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P07",
	Name:    "histc-float-input",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.histc", "torch.Tensor.histc"},
	Doc: `cast a non-floating histc input to float32

torchlib's aten_histc accepts floating inputs only, and MoE grouped-mm
routing calls histc on int32 expert ids. The patch casts the input to
float32, as the Python patch did, keeps bins/min/max, and casts the counts
back to the dtype recorded on the node when it is not float32 (the Python
patch's trace recorded float counts; a program traced without it carries
the integer dtype its users expect). Integer values beyond 2^24 round to
the nearest float32, which can move them to a neighbouring bin.`,
	Rewrite: rewriteHistc,
})

var tpOpHistc = ir.OpAtenHistc

func rewriteHistc(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	x := n.Args[0]
	if x.Kind != ir.ArgValue || x.Value.Tensor() == nil {
		return nil, nil
	}
	if dt := x.Value.Tensor().DType; !dt.IsInteger() && !dt.IsBool() {
		return nil, nil
	}
	out := n.Result().Tensor()
	if out == nil {
		return nil, nil
	}
	from := x.Value.Tensor().DType
	t := edit.NewBuilder(b, n)
	xf := t.Cast(x.Value, ir.Float32)
	h := t.V(tpOpHistc, ir.ValueArg(xf), n.Args[1], n.Args[2], n.Args[3])
	res := t.Cast(h, out.DType)
	if t.Err != nil {
		return nil, t.Err
	}
	c.Fired(n, "input cast from "+from.String()+" to float32")
	return []*ir.Value{res}, nil
}
