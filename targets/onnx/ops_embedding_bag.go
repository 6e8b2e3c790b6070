package onnx

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// embeddingBagExtras binds _embedding_bag's results 1-3 the way torch's
// CPU kernel fills them (the ones the program uses):
//
//   - offset2bag: each index's bag; torch leaves it empty ([0]) on its
//     fast sum path, which the result's type says (a static 0 dim);
//   - bag_size: each bag's count of non-padding indices for mean and max,
//     zeros for sum;
//   - max_indices: for max the index (the embedding row) that gave each
//     bag's maximum, the first one among equal maxima, 0 for an empty bag;
//     for sum and mean a copy of bag_size.
//
// bag, cnt, rows, out, idx and nIdx are the main lowering's values: each
// index's bag, the per-bag count (in the weight dtype), the gathered rows,
// the bags, the indices and their count.
func embeddingBagExtras(b *Builder, n *ir.Node, mode int64, bag, cnt, rows, out, idx, nIdx string, pad int64) error {
	used := func(i int) bool { return i < len(n.Results) && n.Results[i].NumUses() > 0 }
	if used(1) {
		t := n.Results[1].Tensor()
		if t == nil || t.Rank() != 1 {
			return fmt.Errorf("embedding_bag's offset2bag is not a 1-d tensor")
		}
		if c, ok := t.Shape[0].Const(); ok && c == 0 {
			b.Emit(n.Results[1], "Identity", []string{b.I64s()})
		} else {
			b.Emit(n.Results[1], "Identity", []string{bag})
		}
	}
	if !used(2) && !used(3) {
		return nil
	}
	var size string
	if mode == 0 {
		size = b.Tmp("Expand", []string{b.I64(0), b.Tmp("Shape", []string{cnt})})
	} else {
		size = b.Tmp("Cast", []string{cnt}, AttrInt("to", 7))
	}
	if used(2) {
		b.Emit(n.Results[2], "Identity", []string{size})
	}
	if !used(3) {
		return nil
	}
	if mode != 2 {
		b.Emit(n.Results[3], "Identity", []string{size})
		return nil
	}
	// max: the first position p of each bag whose row equals the bag's
	// maximum (ScatterElements min over positions, n where none), then its
	// index value; a bag without such a position (empty) gets 0.
	bagIdx := b.Tmp("Expand", []string{b.Tmp("Unsqueeze", []string{bag, b.I64s(1)}), b.Tmp("Shape", []string{rows})})
	hit := b.Tmp("Equal", []string{rows, b.Tmp("GatherElements", []string{out, bagIdx}, AttrInt("axis", 0))})
	if pad >= 0 {
		keep := b.Tmp("Unsqueeze", []string{b.Tmp("Not", []string{b.Tmp("Equal", []string{idx, b.I64(pad)})}), b.I64s(1)})
		hit = b.Tmp("And", []string{hit, keep})
	}
	count := b.Tmp("Squeeze", []string{nIdx, b.I64s(0)})
	pos := b.Tmp("Range", []string{b.I64(0), count, b.I64(1)})
	posCol := b.Tmp("Expand", []string{b.Tmp("Unsqueeze", []string{pos, b.I64s(1)}), b.Tmp("Shape", []string{rows})})
	cand := b.Tmp("Where", []string{hit, posCol, count})
	first := b.Tmp("ScatterElements", []string{b.Tmp("Expand", []string{count, b.Tmp("Shape", []string{out})}), bagIdx, cand},
		AttrInt("axis", 0), AttrString("reduction", "min"))
	found := b.Tmp("Less", []string{first, count})
	safe := b.Tmp("Where", []string{found, first, b.I64(0)})
	val := b.Tmp("Gather", []string{idx, safe}, AttrInt("axis", 0))
	b.Emit(n.Results[3], "Where", []string{found, val, b.I64(0)})
	return nil
}
