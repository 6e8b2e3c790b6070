package passes

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchSDPAForCUDA rewrites the attention forms AOTInductor's SDPA cannot
// take (ET-P06).
var PatchSDPAForCUDA = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P06",
	Name:    "sdpa-for-cuda",
	Backend: "executorch.cuda",
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.nn.functional.scaled_dot_product_attention"},
	Doc: `rewrite scaled_dot_product_attention into the forms the CUDA backend's SDPA accepts

AOTInductor's SDPA (the CUDA backend) takes only bool masks, equal query
and value head dims and no grouped-query attention. For each
aten.scaled_dot_product_attention:

- dropout_p ≠ 0 is refused with an error naming the node (the exported
  program would have to sample; export in eval mode); dropout_p = 0 is
  dropped.
- GQA (enable_gqa with fewer key/value heads than query heads, static
  head counts dividing each other): k and v are repeat_interleave'd along
  the head dim (-3), and the attention runs with enable_gqa=False.
- A float mask or D_q ≠ D_v (not provably equal): the math decomposition
  (q @ kᵀ) · scale (scale defaults to 1/√D_q, which must then be static),
  plus the float mask cast to q's dtype, a causal tril mask or a bool mask
  applied as an additive -inf with masked_fill where it is False,
  _safe_softmax over the keys, @ v.
- Otherwise (bool or no mask, D_q = D_v) the fused op stays.

Differences from Python: revision A decomposed whenever any q/k/v/mask
dim was a non-constant SymInt (under dynamic shapes nearly always), added
a bool mask arithmetically (mask · -inf, NaN at 0 · inf) and dropped any
dropout_p silently; v2 always traced the math backend then cloned. fxport
keeps the fused op where AOTInductor accepts it, fills -inf with
masked_fill, refuses a non-zero dropout and uses _safe_softmax, so a fully
masked query row gives zeros as torch's math attention does (A gave NaN).
is_causal together with a mask (a torch error) and a causal math
decomposition with symbolic sequence lengths are left alone.`,
	Rewrite: etRewriteSDPAForCUDA,
})

var (
	etOpSDPA        = ir.OpAtenScaledDotProductAttention
	etOpMaskedFillS = ir.OpAtenMaskedFillScalar
)

func etRewriteSDPAForCUDA(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	q, k, v, mask := n.Arg("query"), n.Arg("key"), n.Arg("value"), n.Arg("attn_mask")
	if q.Kind != ir.ArgValue || k.Kind != ir.ArgValue || v.Kind != ir.ArgValue {
		return nil, nil
	}
	if dp := n.Arg("dropout_p"); (dp.Kind == ir.ArgFloat && dp.Float != 0) || (dp.Kind == ir.ArgInt && dp.Int != 0) || dp.Kind == ir.ArgValue {
		return nil, n.Errorf("ET-P06: scaled_dot_product_attention with dropout_p=%s: the CUDA backend cannot sample dropout; export the model in eval mode (dropout_p=0)", dp)
	}
	qt, kt, vt := q.Value.Tensor(), k.Value.Tensor(), v.Value.Tensor()
	if qt == nil || kt == nil || vt == nil || qt.Rank() < 2 || kt.Rank() < 2 || vt.Rank() < 2 {
		return nil, nil
	}
	causal := n.Arg("is_causal").Bool()
	var mt *ir.TensorType
	if mask.Kind == ir.ArgValue {
		if mt = mask.Value.Tensor(); mt == nil {
			return nil, nil
		}
		if causal {
			return nil, nil // a torch error; leave it to torch
		}
	}
	t := newTP(b, n)
	kv, vv := k.Value, v.Value
	var notes []string
	if n.Arg("enable_gqa").Bool() && qt.Rank() >= 3 && kt.Rank() >= 3 {
		hq, ok1 := qt.Shape[qt.Rank()-3].Const()
		hk, ok2 := kt.Shape[kt.Rank()-3].Const()
		if !ok1 || !ok2 || hk <= 0 || hq%hk != 0 {
			c.Debugf(n, "GQA with head counts %s and %s: not static or not dividing; left alone", qt.Shape[qt.Rank()-3], kt.Shape[kt.Rank()-3])
			return nil, nil
		}
		if r := hq / hk; r != 1 {
			kv = t.V(tpOpRepeatIntl, ir.ValueArg(kv), ir.IntArg(r), ir.IntArg(-3))
			vv = t.V(tpOpRepeatIntl, ir.ValueArg(vv), ir.IntArg(r), ir.IntArg(-3))
			notes = append(notes, fmt.Sprintf("GQA: k/v repeat_interleave ×%d", r))
		}
	}
	floatMask := mt != nil && !mt.DType.IsBool()
	sameD := qt.Shape[qt.Rank()-1].Equal(vt.Shape[vt.Rank()-1])
	var out *ir.Value
	if !floatMask && sameD {
		if len(notes) == 0 {
			return nil, nil
		}
		kw := map[string]ir.Arg{"is_causal": ir.BoolArg(causal)}
		if mask.Kind == ir.ArgValue {
			kw["attn_mask"] = mask
		}
		if s := n.Arg("scale"); !s.IsNone() && s.Kind != 0 {
			kw["scale"] = s
		}
		out = t.Kw(etOpSDPA, []ir.Arg{q, ir.ValueArg(kv), ir.ValueArg(vv)}, kw)
	} else {
		scale := 0.0
		if s := n.Arg("scale"); s.Kind == ir.ArgFloat {
			scale = s.Float
		} else if s.Kind == ir.ArgInt {
			scale = float64(s.Int)
		} else {
			e, ok := qt.Shape[qt.Rank()-1].Const()
			if !ok || e <= 0 {
				c.Debugf(n, "symbolic head dim %s without an explicit scale; left alone", qt.Shape[qt.Rank()-1])
				return nil, nil
			}
			scale = 1 / math.Sqrt(float64(e))
		}
		scores := t.V(tpOpMatmul, q, ir.ValueArg(t.V(tpOpTranspose, ir.ValueArg(kv), ir.IntArg(-2), ir.IntArg(-1))))
		scores = t.V(tpOpMulScalar, ir.ValueArg(scores), ir.FloatArg(scale))
		switch {
		case causal:
			L, ok1 := qt.Shape[qt.Rank()-2].Const()
			S, ok2 := kt.Shape[kt.Rank()-2].Const()
			if !ok1 || !ok2 {
				c.Debugf(n, "causal math attention with symbolic lengths; left alone")
				return nil, nil
			}
			if t.Err == nil {
				ones, err := etFull(b, []int64{L, S}, 1, &ir.TensorType{DType: ir.Bool, Device: qt.Device})
				if err != nil {
					return nil, err
				}
				keep := t.V(etOpTril, ir.ValueArg(ones))
				scores = t.V(etOpMaskedFillS, ir.ValueArg(scores), ir.ValueArg(t.V(tpOpLogicalNot, ir.ValueArg(keep))), ir.FloatArg(math.Inf(-1)))
			}
			notes = append(notes, "causal tril mask")
		case mt != nil && mt.DType.IsBool():
			scores = t.V(etOpMaskedFillS, ir.ValueArg(scores), ir.ValueArg(t.V(tpOpLogicalNot, mask)), ir.FloatArg(math.Inf(-1)))
			notes = append(notes, "bool mask as -inf")
		case mt != nil:
			scores = t.V(tpOpAddTensor, ir.ValueArg(scores), ir.ValueArg(t.Cast(mask.Value, qt.DType)))
			notes = append(notes, "additive float mask")
		}
		probs := t.V(tpOpSafeSoftmax, ir.ValueArg(scores), ir.IntArg(-1))
		out = t.V(tpOpMatmul, ir.ValueArg(probs), ir.ValueArg(vv))
		why := "float mask"
		if !sameD {
			why = "D_q ≠ D_v"
		}
		notes = append([]string{"math attention (" + why + ")"}, notes...)
	}
	if t.Err != nil {
		return nil, t.Err
	}
	if !etSameTypes(n, []*ir.Value{out}) {
		c.Debugf(n, "rewrite gives %s, not %s; left alone", out.Type, n.Result().Type)
		return nil, nil
	}
	c.Fired(n, etJoin(notes))
	return []*ir.Value{out}, nil
}

func etJoin(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}
