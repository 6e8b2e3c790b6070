package onnx

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// General integer index_put (ONNX-TR02 beyond one index tensor): any number
// of integer index tensors, broadcast together to a shape B, with None
// entries (full slices) anywhere, and boolean masks among them: a rank-k
// mask stands for the k coordinate rows of NonZero(mask), addressing k
// consecutive dims (torch's own expansion). torch places B where the indexed dims are
// when they are adjacent, else in front; the lowering transposes self so the
// indexed dims come first ([adv…, rest…]), builds the full index tuple
// [B…, K] with Expand/Unsqueeze/Concat, brings the values into [B…, rest…]
// order, runs one ScatterND (reduction "add" when accumulate, available from
// opset 16) and transposes back.

func lowerIndexPutInts(b *Builder, n *ir.Node, x, vals string, acc bool, entries []ir.Arg, rank int) error {
	var adv []int    // the dims of self the index tensors address, ascending
	var idx []string // one int64 index tensor per entry of adv
	rankB := 0
	shape := b.Tmp("Shape", []string{x})
	d := 0 // the dim of self the next entry addresses
	for i, el := range entries {
		if el.IsNone() {
			d++
			continue
		}
		t := el.Value.Tensor()
		if t == nil {
			return fmt.Errorf("index_put: index %d is not a tensor", i)
		}
		s, err := b.Value(el.Value)
		if err != nil {
			return err
		}
		if t.DType == ir.Bool {
			// A rank-k mask addresses dims d…d+k-1 with the k coordinate
			// rows of its nonzero elements (torch expands it so), each a
			// 1-D index tensor of the true count N.
			if t.Rank() == 0 {
				return fmt.Errorf("index_put: index %d is a 0-d boolean mask, which is not lowered", i)
			}
			if d+t.Rank() > rank {
				return fmt.Errorf("index_put: boolean mask %d (rank %d) at dim %d overruns the rank-%d tensor", i, t.Rank(), d, rank)
			}
			nz := b.Tmp("NonZero", []string{s})
			for j := 0; j < t.Rank(); j++ {
				adv = append(adv, d+j)
				idx = append(idx, b.Tmp("Gather", []string{nz, b.I64(int64(j))}, AttrInt("axis", 0)))
			}
			d += t.Rank()
			rankB = max(rankB, 1)
			continue
		}
		if d >= rank {
			return fmt.Errorf("index_put: index %d addresses dim %d of a rank-%d tensor", i, d, rank)
		}
		if s, err = b.CastTo(s, t.DType, ir.Int64); err != nil {
			return err
		}
		// Negative indices count from the end of their dim.
		size := b.Tmp("Gather", []string{shape, b.I64(int64(d))}, AttrInt("axis", 0))
		s = b.Tmp("Where", []string{b.Tmp("Less", []string{s, b.I64(0)}), b.Tmp("Add", []string{s, size}), s})
		adv = append(adv, d)
		idx = append(idx, s)
		rankB = max(rankB, t.Rank())
		d++
	}
	red := "none"
	if acc {
		red = "add"
	}
	if len(adv) == 0 {
		// Every entry None: values broadcast over all of self.
		if acc {
			b.Emit(n.Results[0], "Add", []string{x, vals})
		} else {
			b.Emit(n.Results[0], "Expand", []string{vals, shape})
		}
		return nil
	}
	// B: the broadcast shape of the index tensors.
	bshape := b.Tmp("Shape", []string{idx[0]})
	if len(idx) > 1 {
		sum := idx[0]
		for _, s := range idx[1:] {
			sum = b.Tmp("Add", []string{sum, s})
		}
		bshape = b.Tmp("Shape", []string{sum})
	}
	parts := make([]string, len(idx))
	for j, s := range idx {
		parts[j] = b.Tmp("Unsqueeze", []string{b.Tmp("Expand", []string{s, bshape}), b.I64s(-1)})
	}
	full := parts[0]
	if len(parts) > 1 {
		full = b.Tmp("Concat", parts, AttrInt("axis", -1))
	}
	isAdv := map[int]bool{}
	for _, i := range adv {
		isAdv[i] = true
	}
	var rest, pre, post []int64
	contiguous := adv[len(adv)-1]-adv[0] == len(adv)-1
	for d := 0; d < rank; d++ {
		if isAdv[d] {
			continue
		}
		rest = append(rest, int64(d))
		if contiguous && d < adv[0] {
			pre = append(pre, int64(d))
		} else {
			post = append(post, int64(d))
		}
	}
	dims := func(ds []int64) string {
		return b.Tmp("Gather", []string{shape, b.I64s(ds...)}, AttrInt("axis", 0))
	}
	// Values in torch's layout [pre…, B…, post…], then as [B…, pre…, post…].
	var tshape []string
	if len(pre) > 0 {
		tshape = append(tshape, dims(pre))
	}
	tshape = append(tshape, bshape)
	if len(post) > 0 {
		tshape = append(tshape, dims(post))
	}
	target := tshape[0]
	if len(tshape) > 1 {
		target = b.Tmp("Concat", tshape, AttrInt("axis", 0))
	}
	v := b.Tmp("Expand", []string{vals, target})
	if len(pre) > 0 {
		var vp []int64
		for i := 0; i < rankB; i++ {
			vp = append(vp, int64(len(pre)+i))
		}
		for i := range pre {
			vp = append(vp, int64(i))
		}
		for i := range post {
			vp = append(vp, int64(len(pre)+rankB+i))
		}
		v = b.Tmp("Transpose", []string{v}, AttrInts("perm", vp...))
	}
	perm := make([]int64, 0, rank)
	for _, i := range adv {
		perm = append(perm, int64(i))
	}
	perm = append(perm, rest...)
	identity := true
	for i, p := range perm {
		if p != int64(i) {
			identity = false
		}
	}
	if identity {
		b.Emit(n.Results[0], "ScatterND", []string{x, full, v}, AttrString("reduction", red))
		return nil
	}
	inv := make([]int64, rank)
	for i, p := range perm {
		inv[p] = int64(i)
	}
	xt := b.Tmp("Transpose", []string{x}, AttrInts("perm", perm...))
	res := b.Tmp("ScatterND", []string{xt, full, v}, AttrString("reduction", red))
	b.Emit(n.Results[0], "Transpose", []string{res}, AttrInts("perm", inv...))
	return nil
}
