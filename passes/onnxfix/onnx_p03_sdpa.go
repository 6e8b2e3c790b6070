package onnxfix

import (
	"math"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// PatchONNXSDPAMaskedRows decomposes masked attention so fully masked rows give zeros (ONNX-P03).
var PatchONNXSDPAMaskedRows = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P03",
	Name:    "sdpa-safe-softmax",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Ops:     []ir.Op{ir.OpAtenScaledDotProductAttention},
	Doc: `decompose masked attention with a safe softmax: fully masked rows give zeros

onnxruntime's Attention returns NaN for a query row whose mask excludes
every key (softmax of all -inf); torch's math attention uses _safe_softmax,
which gives 0 for such rows (parakeet depends on it). For an
aten.scaled_dot_product_attention with an attn_mask, the patch rewrites the
node as torch's math path: (q @ k^T) * scale (scale defaults to
1/sqrt(head dim)), plus the mask (a float mask, cast to q's dtype) or
masked_fill with -inf where a bool mask is False, then _safe_softmax over
the keys and @ v. With enable_gqa and fewer key/value heads than query
heads, k and v are repeat_interleave'd along the head dim, as torch does;
the Python patch's 5-D flattening and its GQA handling (variant A) are not
reproduced, and this ordering of the scale (after the product, not sqrt on
both operands) can differ from torch in the last ulp. Left alone: no mask
(no row can be fully masked), is_causal together with a mask (a torch
error), dropout_p != 0 (random), a symbolic head dim without an explicit
scale, and GQA whose head counts are not static.`,
	Rewrite: rewriteSDPASafe,
})

var (
	tpOpMaskedFillS = ir.OpAtenMaskedFillScalar
)

func rewriteSDPASafe(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	q, k, v, mask := n.Arg("query"), n.Arg("key"), n.Arg("value"), n.Arg("attn_mask")
	if mask.Kind != ir.ArgValue || q.Kind != ir.ArgValue || k.Kind != ir.ArgValue || v.Kind != ir.ArgValue {
		return nil, nil
	}
	if n.Arg("is_causal").Bool() {
		return nil, nil
	}
	if dp := n.Arg("dropout_p"); dp.Kind == ir.ArgFloat && dp.Float != 0 {
		return nil, nil
	}
	qt, kt := q.Value.Tensor(), k.Value.Tensor()
	mt := mask.Value.Tensor()
	if qt == nil || kt == nil || mt == nil || qt.Rank() < 2 || kt.Rank() < 2 {
		return nil, nil
	}
	scale := 0.0
	if s := n.Arg("scale"); s.Kind == ir.ArgFloat {
		scale = s.Float
	} else if s.Kind == ir.ArgInt {
		scale = float64(s.Int)
	} else {
		e, ok := qt.Shape[qt.Rank()-1].Const()
		if !ok || e <= 0 {
			return nil, nil
		}
		scale = 1 / math.Sqrt(float64(e))
	}
	t := edit.NewBuilder(b, n)
	kv, vv := k.Value, v.Value
	if n.Arg("enable_gqa").Bool() && qt.Rank() >= 3 {
		hq, ok1 := qt.Shape[qt.Rank()-3].Const()
		hk, ok2 := kt.Shape[kt.Rank()-3].Const()
		if !ok1 || !ok2 || hk <= 0 || hq%hk != 0 {
			return nil, nil
		}
		if r := hq / hk; r != 1 {
			kv = t.V(edit.OpRepeatIntl, ir.ValueArg(kv), ir.IntArg(r), ir.IntArg(-3))
			vv = t.V(edit.OpRepeatIntl, ir.ValueArg(vv), ir.IntArg(r), ir.IntArg(-3))
		}
	}
	scores := t.V(edit.OpMatmul, q, ir.ValueArg(t.V(edit.OpTranspose, ir.ValueArg(kv), ir.IntArg(-2), ir.IntArg(-1))))
	scores = t.V(edit.OpMulScalar, ir.ValueArg(scores), ir.FloatArg(scale))
	kind := "float mask"
	if mt.DType.IsBool() {
		kind = "bool mask"
		scores = t.V(tpOpMaskedFillS, ir.ValueArg(scores), ir.ValueArg(t.V(edit.OpLogicalNot, mask)), ir.FloatArg(math.Inf(-1)))
	} else {
		scores = t.V(edit.OpAddTensor, ir.ValueArg(scores), ir.ValueArg(t.Cast(mask.Value, qt.DType)))
	}
	probs := t.V(edit.OpSafeSoftmax, ir.ValueArg(scores), ir.IntArg(-1))
	out := t.V(edit.OpMatmul, ir.ValueArg(probs), ir.ValueArg(vv))
	if t.Err != nil {
		return nil, t.Err
	}
	c.Fired(n, "math attention with _safe_softmax, "+kind)
	return []*ir.Value{out}, nil
}
