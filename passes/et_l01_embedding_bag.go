package passes

import (
	"math"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/rewrite"
)

// _embedding_bag has no portable kernel: legalize-kernels decomposes it
// into embedding, scatter_add and cumsum (scatter_reduce for max, which
// legalize-kernels decomposes in turn), with its four results as torch's
// CPU kernel fills them.

func init() {
	etDecompositions = append(etDecompositions,
		&rewrite.Pattern{Name: "embedding-bag", Root: ir.OpAten_EmbeddingBag, Benefit: 1, Rewrite: etlEmbeddingBag},
	)
	etDecompositionSet = rewrite.MustSet(etDecompositions...)
}

// etlStatic is t's static shape, false when a dim is symbolic.
func etlStatic(t *ir.TensorType) ([]int64, bool) {
	out := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		c, ok := d.Const()
		if !ok {
			return nil, false
		}
		out[i] = c
	}
	return out, true
}

// _embedding_bag(w[V, D], idx[N], offsets, …, mode, …, psw, include_last,
// pad) with static shapes and 1-d indices:
//
//	offset2bag = cumsum(scatter_add(zeros[N+1], 0, starts, 1))[:N] - 1
//	             (torch's make_offset2bag; starts = offsets without the
//	             last one under include_last_offset)
//	rows       = embedding(w, idx) · weight, weight = (idx != pad) · psw
//	sum, mean  = scatter_add(zeros[B, D], 0, bag, rows); mean divided by
//	             max(count, 1), count = scatter_add of (idx != pad)
//	max        = scatter_reduce amax from -inf (padding rows -inf), 0 for
//	             an empty bag; max_indices the index of the first position
//	             reaching the maximum (scatter_reduce amin of positions)
//	bag_size   = count for mean and max, zeros for sum
//	max_indices (sum, mean) = bag_size
//
// offset2bag is empty when its type says so (torch's fast sum path).
func etlEmbeddingBag(b *ir.Builder, n *ir.Node) ([]*ir.Value, error) {
	wt, err := ir.ArgTensor(n.Arg("weight"), "weight")
	if err != nil {
		return nil, nil
	}
	it, err := ir.ArgTensor(n.Arg("indices"), "indices")
	if err != nil || it.Rank() != 1 || it.DType != ir.Int64 {
		return nil, nil
	}
	ot, err := ir.ArgTensor(n.Arg("offsets"), "offsets")
	if err != nil || ot.Rank() != 1 || len(n.Results) != 4 {
		return nil, nil
	}
	ws, ok1 := etlStatic(wt)
	is, ok2 := etlStatic(it)
	os, ok3 := etlStatic(ot)
	outT := n.Results[0].Tensor()
	if !ok1 || !ok2 || !ok3 || outT == nil || len(ws) != 2 {
		return nil, nil
	}
	os2, ok := etlStatic(outT)
	if !ok || len(os2) != 2 {
		return nil, nil
	}
	mode := n.Arg("mode")
	pad := n.Arg("padding_idx")
	last := n.Arg("include_last_offset")
	if mode.Kind != ir.ArgInt || (pad.Kind != ir.ArgInt && !pad.IsNone()) || (last.Kind != ir.ArgBool && !last.IsNone()) {
		return nil, nil
	}
	N, D, B := is[0], ws[1], os2[0]
	p := int64(-1)
	if pad.Kind == ir.ArgInt {
		p = pad.Int
		if p < -1 {
			p += ws[0]
		}
	}
	dt := outT.DType
	t := edit.NewBuilder(b, n)
	idx := n.Arg("indices")
	i64 := map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Int64)}
	full := func(shape []int64, v ir.Arg, d ir.DType) *ir.Value {
		return t.Kw(ir.OpAtenFull, []ir.Arg{ir.IntsArg(shape...), v}, map[string]ir.Arg{"dtype": ir.DTypeArg(d)})
	}
	// offset2bag
	starts := n.Arg("offsets")
	if last.Kind == ir.ArgBool && last.Bool() {
		starts = ir.ValueArg(t.V(ir.OpAtenSliceCopyTensor, starts, ir.IntArg(0), ir.IntArg(0), ir.IntArg(B)))
	} else if os[0] != B {
		return nil, nil
	}
	if ot.DType != ir.Int64 {
		starts = ir.ValueArg(t.Cast(starts.Value, ir.Int64))
	}
	marks := t.V(ir.OpAtenScatterAdd, ir.ValueArg(full([]int64{N + 1}, ir.IntArg(0), ir.Int64)), ir.IntArg(0), starts,
		ir.ValueArg(full([]int64{B}, ir.IntArg(1), ir.Int64)))
	cum := t.Kw(ir.OpAtenCumsum, []ir.Arg{ir.ValueArg(marks), ir.IntArg(0)}, i64)
	bag := t.V(ir.OpAtenSubScalar, ir.ValueArg(t.V(ir.OpAtenSliceCopyTensor, ir.ValueArg(cum), ir.IntArg(0), ir.IntArg(0), ir.IntArg(N))), ir.IntArg(1))
	bagND := t.V(ir.OpAtenExpandCopy, ir.ValueArg(t.V(ir.OpAtenViewCopy, ir.ValueArg(bag), ir.IntsArg(N, 1))), ir.IntsArg(N, D))
	// rows and per-index weights
	rows := t.V(ir.OpAtenEmbedding, n.Arg("weight"), idx)
	var keep *ir.Value // 1 where the index is not padding (dtype int64)
	if p >= 0 {
		keep = t.Cast(t.V(ir.OpAtenNeScalar, idx, ir.IntArg(p)), ir.Int64)
	}
	count := func() *ir.Value {
		src := keep
		if src == nil {
			src = full([]int64{N}, ir.IntArg(1), ir.Int64)
		}
		return t.V(ir.OpAtenScatterAdd, ir.ValueArg(full([]int64{B}, ir.IntArg(0), ir.Int64)), ir.IntArg(0), ir.ValueArg(bag), ir.ValueArg(src))
	}
	var out, size, maxIdx *ir.Value
	switch mode.Int {
	case 0, 1:
		wsrc := rows
		var scale *ir.Value
		if keep != nil {
			scale = t.Cast(keep, dt)
		}
		if psw := n.Arg("per_sample_weights"); !psw.IsNone() {
			if scale == nil {
				scale = psw.Value
			} else {
				scale = t.V(ir.OpAtenMulTensor, ir.ValueArg(scale), psw)
			}
		}
		if scale != nil {
			wsrc = t.V(ir.OpAtenMulTensor, ir.ValueArg(rows), ir.ValueArg(t.V(ir.OpAtenViewCopy, ir.ValueArg(scale), ir.IntsArg(N, 1))))
		}
		out = t.V(ir.OpAtenScatterAdd, ir.ValueArg(full([]int64{B, D}, ir.IntArg(0), dt)), ir.IntArg(0), ir.ValueArg(bagND), ir.ValueArg(wsrc))
		if mode.Int == 1 {
			size = count()
			den := t.Cast(t.V(ir.OpAtenClamp, ir.ValueArg(size), ir.IntArg(1), ir.NoneArg()), dt)
			out = t.V(ir.OpAtenDivTensor, ir.ValueArg(out), ir.ValueArg(t.V(ir.OpAtenViewCopy, ir.ValueArg(den), ir.IntsArg(B, 1))))
		} else {
			size = full([]int64{B}, ir.IntArg(0), ir.Int64)
		}
		maxIdx = size
	case 2:
		if !n.Arg("per_sample_weights").IsNone() {
			return nil, nil
		}
		ninf := ir.FloatArg(math.Inf(-1))
		src := rows
		if keep != nil {
			mask := t.V(ir.OpAtenExpandCopy, ir.ValueArg(t.V(ir.OpAtenViewCopy, ir.ValueArg(t.V(ir.OpAtenNeScalar, idx, ir.IntArg(p))), ir.IntsArg(N, 1))), ir.IntsArg(N, D))
			src = t.V(ir.OpAtenWhereSelf, ir.ValueArg(mask), ir.ValueArg(rows), ir.ValueArg(full([]int64{N, D}, ninf, dt)))
		}
		raw := t.V(ir.OpAtenScatterReduceTwo, ir.ValueArg(full([]int64{B, D}, ninf, dt)), ir.IntArg(0), ir.ValueArg(bagND), ir.ValueArg(src), ir.StringArg("amax"))
		size = count()
		nonEmpty := t.V(ir.OpAtenExpandCopy, ir.ValueArg(t.V(ir.OpAtenViewCopy, ir.ValueArg(t.V(ir.OpAtenGtScalar, ir.ValueArg(size), ir.IntArg(0))), ir.IntsArg(B, 1))), ir.IntsArg(B, D))
		out = t.V(ir.OpAtenWhereSelf, ir.ValueArg(nonEmpty), ir.ValueArg(raw), ir.ValueArg(full([]int64{B, D}, ir.IntArg(0), dt)))
		// the first position whose row reaches its bag's maximum
		hit := t.V(ir.OpAtenEqTensor, ir.ValueArg(src), ir.ValueArg(t.V(ir.OpAtenGather, ir.ValueArg(raw), ir.IntArg(0), ir.ValueArg(bagND))))
		pos := t.V(ir.OpAtenExpandCopy, ir.ValueArg(t.V(ir.OpAtenViewCopy, ir.ValueArg(t.Kw(ir.OpAtenArangeStartStep, []ir.Arg{ir.IntArg(0), ir.IntArg(N), ir.IntArg(1)}, i64)), ir.IntsArg(N, 1))), ir.IntsArg(N, D))
		cand := t.V(ir.OpAtenWhereSelf, ir.ValueArg(hit), ir.ValueArg(pos), ir.ValueArg(full([]int64{N, D}, ir.IntArg(N), ir.Int64)))
		first := t.V(ir.OpAtenScatterReduceTwo, ir.ValueArg(full([]int64{B, D}, ir.IntArg(N), ir.Int64)), ir.IntArg(0), ir.ValueArg(bagND), ir.ValueArg(cand), ir.StringArg("amin"))
		found := t.V(ir.OpAtenLtScalar, ir.ValueArg(first), ir.IntArg(N))
		safe := t.V(ir.OpAtenClamp, ir.ValueArg(first), ir.NoneArg(), ir.IntArg(N-1))
		flat := t.V(ir.OpAtenViewCopy, ir.ValueArg(safe), ir.IntsArg(B*D))
		val := t.V(ir.OpAtenViewCopy, ir.ValueArg(t.V(ir.OpAtenIndexSelect, idx, ir.IntArg(0), ir.ValueArg(flat))), ir.IntsArg(B, D))
		maxIdx = t.V(ir.OpAtenWhereSelf, ir.ValueArg(found), ir.ValueArg(val), ir.ValueArg(full([]int64{B, D}, ir.IntArg(0), ir.Int64)))
	default:
		return nil, nil
	}
	o2b := bag
	if rt := n.Results[1].Tensor(); rt != nil && rt.Rank() == 1 {
		if c, ok := rt.Shape[0].Const(); ok && c == 0 {
			o2b = full([]int64{0}, ir.IntArg(0), ir.Int64)
		}
	}
	if t.Err != nil {
		return nil, t.Err
	}
	return []*ir.Value{out, o2b, size, maxIdx}, nil
}
