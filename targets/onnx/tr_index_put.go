package onnx

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// General integer index_put (ONNX-TR02 beyond one index tensor): any number
// of integer index tensors, broadcast together to a shape B, with None
// entries (full slices) anywhere. torch places B where the indexed dims are
// when they are adjacent, else in front; the lowering transposes self so the
// indexed dims come first ([adv…, rest…]), builds the full index tuple
// [B…, K] with Expand/Unsqueeze/Concat, brings the values into [B…, rest…]
// order, runs one ScatterND (reduction "add" when accumulate, available from
// opset 16) and transposes back.

func lowerIndexPutInts(b *Builder, n *ir.Node, x, vals string, acc bool, entries []ir.Arg, rank int) error {
	var adv []int
	var idx []string
	rankB := 0
	shape := b.Tmp("Shape", []string{x})
	for i, el := range entries {
		if el.IsNone() {
			continue
		}
		t := el.Value.Tensor()
		if t == nil {
			return fmt.Errorf("index_put: index %d is not a tensor", i)
		}
		if t.DType == ir.Bool {
			return fmt.Errorf("index_put mixing a boolean mask (index %d) with other indices is not lowered", i)
		}
		s, err := b.Value(el.Value)
		if err != nil {
			return err
		}
		if s, err = b.CastTo(s, t.DType, ir.Int64); err != nil {
			return err
		}
		// Negative indices count from the end of their dim.
		d := b.Tmp("Gather", []string{shape, b.I64(int64(i))}, AttrInt("axis", 0))
		s = b.Tmp("Where", []string{b.Tmp("Less", []string{s, b.I64(0)}), b.Tmp("Add", []string{s, d}), s})
		adv = append(adv, i)
		idx = append(idx, s)
		rankB = max(rankB, t.Rank())
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
