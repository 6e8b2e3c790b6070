package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchVarlenAttn rewrites packed variable-length attention as one
// block-diagonal masked SDPA (ET-P28).
var PatchVarlenAttn = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P28",
	Name:    "varlen-attn-as-masked-sdpa",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.nn.attention.varlen.varlen_attn"},
	Doc: `rewrite varlen attention as SDPA with a block-diagonal mask built from cu_seqlens

ExecuTorch has no kernel for torch_attn._varlen_attn (packed sequences of
[T, H, E] with cumulative lengths cu_seq_q / cu_seq_k). The patch computes
each position's sequence id as the number of cumulative lengths ≤ the
position (a broadcast le and a sum, so the lengths
stay run-time data), builds the [T_q, T_k] mask "same sequence", and runs
scaled_dot_product_attention over the heads (q, k, v transposed to
[H, T, E] and back) with the op's scale. With is_causal the mask is also
restricted to key position ≤ query position, which is the per-sequence
causal mask only when query and key are packed alike: the patch applies
then only when cu_seq_q and cu_seq_k are the same value. Query rows
before cu[0] or from cu[-1] on are zeroed (the output torch's kernel
leaves unwritten). Left alone: a sliding window other than (-1, -1), a used
logsumexp or RNG-state result, non-3-D inputs. Python's
varlen_attn_masked_sdpa builds the same block-diagonal mask.`,
	Rewrite: etRewriteVarlenAttn,
})

func etRewriteVarlenAttn(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	q, k, v := n.Arg("query"), n.Arg("key"), n.Arg("value")
	cq, ck := n.Arg("cu_seq_q"), n.Arg("cu_seq_k")
	for _, a := range []ir.Arg{q, k, v, cq, ck} {
		if a.Kind != ir.ArgValue || a.Value.Tensor() == nil {
			return nil, nil
		}
	}
	qt, kt, vt := q.Value.Tensor(), k.Value.Tensor(), v.Value.Tensor()
	if qt.Rank() != 3 || kt.Rank() != 3 || vt.Rank() != 3 || cq.Value.Tensor().Rank() != 1 || ck.Value.Tensor().Rank() != 1 {
		return nil, nil
	}
	for _, r := range n.Results[1:] {
		if r.NumUses() > 0 {
			c.Debugf(n, "result %s is used; left alone", r)
			return nil, nil
		}
	}
	if w := n.Arg("window_size"); w.Kind == ir.ArgList {
		ws, ok := etlFoldInts(w)
		if !ok || len(ws) != 2 || ws[0] != -1 || ws[1] != -1 {
			c.Debugf(n, "sliding window %s; left alone", w)
			return nil, nil
		}
	} else if !w.IsNone() && w.Kind != 0 {
		return nil, nil
	}
	causal := n.Arg("is_causal").Bool()
	if causal && cq.Value != ck.Value {
		c.Debugf(n, "causal with different cu_seq_q and cu_seq_k; left alone")
		return nil, nil
	}
	t := newTP(b, n)
	// unsq is unsqueeze spelled as reshape (what ET-P19 would make of it).
	unsq := func(x *ir.Value, d int) ir.Arg {
		if t.Err != nil {
			return ir.NoneArg()
		}
		r, err := etInsertOnes(b, n, ir.ValueArg(x), d)
		if err != nil {
			t.Err = err
			return ir.NoneArg()
		}
		return ir.ValueArg(r)
	}
	// pos: arange(T) in the lengths' dtype; seq id: Σ_b (cu[1 + b] ≤ pos).
	seqIDs := func(x *ir.Value, cu *ir.Value) (*ir.Value, *ir.Value) {
		if t.Err != nil {
			return nil, nil
		}
		pos, err := etArange(b, n, x.Tensor().Shape[0], cu.Tensor().DType)
		if err != nil {
			t.Err = err
			return nil, nil
		}
		le := t.V(tpOpLeTensor, unsq(cu, 0), unsq(pos, 1))
		return pos, t.V(tpOpSumDim, ir.ValueArg(le), ir.IntsArg(1))
	}
	posQ, segQ := seqIDs(q.Value, cq.Value)
	posK, segK := posQ, segQ
	if cq.Value != ck.Value || !qt.Shape[0].Equal(kt.Shape[0]) {
		posK, segK = seqIDs(k.Value, ck.Value)
	}
	mask := t.V(tpOpEqTensor, unsq(segQ, 1), unsq(segK, 0))
	if causal {
		before := t.V(tpOpLeTensor, unsq(posK, 0), unsq(posQ, 1))
		mask = t.V(tpOpLogicalAnd, ir.ValueArg(mask), ir.ValueArg(before))
	}
	heads := func(x *ir.Value) ir.Arg {
		return ir.ValueArg(t.V(tpOpTranspose, ir.ValueArg(x), ir.IntArg(0), ir.IntArg(1)))
	}
	kw := map[string]ir.Arg{"attn_mask": ir.ValueArg(mask)}
	if s := n.Arg("scale"); s.Kind == ir.ArgFloat || s.Kind == ir.ArgInt {
		kw["scale"] = s
	}
	att := t.Kw(etOpSDPA, []ir.Arg{heads(q.Value), heads(k.Value), heads(v.Value)}, kw)
	out := t.V(tpOpTranspose, ir.ValueArg(att), ir.IntArg(0), ir.IntArg(1))
	// Rows outside [cu[0], cu[-1]) (id 0 or B+1) are zero, as torch's
	// kernels leave them untouched in a zero-filled output.
	if t.Err == nil {
		nb := cq.Value.Tensor().Shape[0]
		last, err := etSymArg(b, n, nb)
		if err != nil {
			return nil, err
		}
		valid := t.V(tpOpLogicalAnd,
			ir.ValueArg(t.V(tpOpGtScalar, ir.ValueArg(segQ), ir.IntArg(0))),
			ir.ValueArg(t.V(tpOpLtScalar, ir.ValueArg(segQ), last)))
		if t.Err == nil {
			rows, err := etInsertOnes(b, n, ir.ValueArg(t.Cast(valid, qt.DType)), 1, 2)
			if err != nil {
				return nil, err
			}
			out = t.V(tpOpMulTensor, ir.ValueArg(out), ir.ValueArg(rows))
		}
	}
	if t.Err != nil {
		return nil, t.Err
	}
	if !ir.TypesCompatible(n.Results[0].Type, out.Type) {
		c.Debugf(n, "rewrite gives %s, not %s; left alone", out.Type, n.Results[0].Type)
		return nil, nil
	}
	how := "block-diagonal mask"
	if causal {
		how = "block-diagonal causal mask"
	}
	c.Fired(n, "masked SDPA with a "+how+" from cu_seqlens")
	return []*ir.Value{out, nil, nil}, nil
}

var (
	tpOpGtScalar = ir.OpAtenGtScalar
	tpOpLtScalar = ir.OpAtenLtScalar
)
