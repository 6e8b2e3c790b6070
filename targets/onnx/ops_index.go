package onnx

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

func init() {
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		x, idx := r.T("self"), r.T("index")
		dim := normDim(r.Int("dim"), r.Rank("self"))
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "GatherElements", []string{x, idx}, AttrInt("axis", dim))
		return nil
	}, ir.OpAtenGather)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		x, idx := r.T("self"), r.T("index")
		dim := normDim(r.Int("dim"), r.Rank("self"))
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "Gather", []string{x, idx}, AttrInt("axis", dim))
		return nil
	}, ir.OpAtenIndexSelect)
	lower(17, func(b *Builder, n *ir.Node) error {
		r := reader(b, n)
		dt := r.out(0).DType
		x, idx := r.In("self", dt), r.T("index")
		dim := normDim(r.Int("dim"), r.Rank("self"))
		var src string
		if n.Op.ArgIndex("src") >= 0 {
			src = r.In("src", dt)
		} else {
			// scatter.value: a scalar broadcast to the index's shape.
			v := r.In("value", dt)
			src = b.Tmp("Expand", []string{v, b.Tmp("Shape", []string{idx})})
		}
		if r.err != nil {
			return r.err
		}
		b.Emit(n.Results[0], "ScatterElements", []string{x, idx, src}, AttrInt("axis", dim))
		return nil
	}, ir.OpAtenScatterSrc, ir.OpAtenScatterValue)
	lower(17, func(b *Builder, n *ir.Node) error {
		// index.Tensor with one non-None index tensor: Gather on that axis.
		r := reader(b, n)
		x := r.T("self")
		l := r.Arg("indices")
		if r.err != nil {
			return r.err
		}
		axis, which := -1, ""
		for i, el := range l.List {
			if el.IsNone() {
				continue
			}
			if axis >= 0 {
				return indexMulti(b, n, r)
			}
			if t := el.Value.Tensor(); t == nil || t.DType == ir.Bool {
				return fmt.Errorf("index with a boolean mask is not lowered")
			}
			v, err := b.Value(el.Value)
			if err != nil {
				return err
			}
			axis, which = i, v
		}
		if axis < 0 {
			return identity(b, n)
		}
		b.Emit(n.Results[0], "Gather", []string{x, which}, AttrInt("axis", int64(axis)))
		return nil
	}, ir.OpAtenIndexTensor)
	lower(17, func(b *Builder, n *ir.Node) error {
		// topk: TopK always sorted=1 (ONNX-IR01).
		r := reader(b, n)
		x := r.T("self")
		k := r.IntList("k")
		dim := normDim(r.Int("dim"), r.Rank("self"))
		largest := int64(0)
		if r.Bool("largest") {
			largest = 1
		}
		if r.err != nil {
			return r.err
		}
		b.EmitN(n.Results, "TopK", []string{x, k}, AttrInt("axis", dim), AttrInt("largest", largest), AttrInt("sorted", 1))
		return nil
	}, ir.OpAtenTopk)
	lower(17, func(b *Builder, n *ir.Node) error {
		// sort: TopK over the whole dim (sorted=1, ties by lower index).
		return fullTopK(b, n, n.Results)
	}, ir.OpAtenSort)
	translation("ONNX-TR09", "translate-masked-fill",
		"masked_fill with Or/And for bool tensors\n\nWhere(mask, value, self); a bool self lowers to (mask ∧ value) ∨ (¬mask ∧ self) because ORT's CPU EP has no bool Where.",
		func(b *Builder, n *ir.Node) error {
			// masked_fill: where(mask, value, self); bool self uses Or/And (ONNX-TR09).
			r := reader(b, n)
			dt := r.out(0).DType
			x := r.In("self", dt)
			m := r.In("mask", ir.Bool)
			v := r.In("value", dt)
			if r.err != nil {
				return r.err
			}
			if dt == ir.Bool {
				b.Emit(n.Results[0], "Or", []string{b.Tmp("And", []string{m, v}), b.Tmp("And", []string{b.Tmp("Not", []string{m}), x})})
				return nil
			}
			b.Emit(n.Results[0], "Where", []string{m, v, x})
			return nil
		}, ir.OpAtenMaskedFillScalar, ir.OpAtenMaskedFillTensor)
}

func init() {
	lower(17, func(b *Builder, n *ir.Node) error {
		// as_strided over a contiguous input: a Gather of the flattened
		// input with the statically computed element offsets.
		if asStridedIsReshape(n) {
			return reshapeTo(b, n)
		}
		r := reader(b, n)
		x := r.T("self")
		size, stride := r.Ints("size"), r.Ints("stride")
		off := r.IntOr("storage_offset", 0)
		if r.err != nil {
			return r.err
		}
		if a := r.Arg("self"); a.Value.Tensor() != nil && !a.Value.Tensor().IsContiguous() {
			return fmt.Errorf("as_strided of a non-contiguous input is not lowered")
		}
		if len(size) != len(stride) {
			return fmt.Errorf("as_strided: %d sizes, %d strides", len(size), len(stride))
		}
		total := int64(1)
		for _, s := range size {
			total *= s
		}
		if total > 1<<20 {
			return fmt.Errorf("as_strided with %d elements: index table too large", total)
		}
		idx := make([]int64, 0, total)
		pos := make([]int64, len(size))
		for k := int64(0); k < total; k++ {
			o := off
			for d := range pos {
				o += pos[d] * stride[d]
			}
			idx = append(idx, o)
			for d := len(pos) - 1; d >= 0; d-- {
				pos[d]++
				if pos[d] < size[d] {
					break
				}
				pos[d] = 0
			}
		}
		ic, err := b.Const(ir.Int64, size, encodeI64s(idx))
		if err != nil {
			return err
		}
		flat := b.Tmp("Reshape", []string{x, b.I64s(-1)})
		b.Emit(n.Results[0], "Gather", []string{flat, ic}, AttrInt("axis", 0))
		return nil
	}, ir.OpAtenAsStrided)
	lower(17, func(b *Builder, n *ir.Node) error {
		// index_copy: move dim to the front, ScatterND rows, move it back.
		r := reader(b, n)
		dt := r.out(0).DType
		x, src := r.In("self", dt), r.In("source", dt)
		idx := r.In("index", ir.Int64)
		rank := r.Rank("self")
		dim := normDim(r.Int("dim"), rank)
		if r.err != nil {
			return r.err
		}
		perm := make([]int64, rank)
		for i := range perm {
			perm[i] = int64(i)
		}
		perm[0], perm[dim] = perm[dim], perm[0]
		if dim != 0 {
			x = b.Tmp("Transpose", []string{x}, AttrInts("perm", perm...))
			src = b.Tmp("Transpose", []string{src}, AttrInts("perm", perm...))
		}
		ui := b.Tmp("Unsqueeze", []string{idx, b.I64s(-1)})
		if dim == 0 {
			b.Emit(n.Results[0], "ScatterND", []string{x, ui, src})
			return nil
		}
		y := b.Tmp("ScatterND", []string{x, ui, src})
		b.Emit(n.Results[0], "Transpose", []string{y}, AttrInts("perm", perm...))
		return nil
	}, ir.OpAtenIndexCopy)
}

// indexMulti lowers index.Tensor with several integer index tensors (torch
// advanced indexing): the indexed dims moved to the front, the index
// tensors broadcast and stacked for one GatherND, and the broadcast dims
// placed where torch puts them (at the first indexed dim when the indexed
// dims are adjacent, else in front).
func indexMulti(b *Builder, n *ir.Node, r *argReader) error {
	x := r.T("self")
	rank := r.Rank("self")
	l := r.Arg("indices")
	var pos []int
	var idx []string
	nb := 0
	for i, el := range l.List {
		if el.IsNone() {
			continue
		}
		t := el.Value.Tensor()
		if t == nil || t.DType == ir.Bool {
			return fmt.Errorf("index with a boolean mask among several index tensors is not lowered")
		}
		v, err := b.Value(el.Value)
		if err != nil {
			return err
		}
		v, err = b.CastTo(v, t.DType, ir.Int64)
		if err != nil {
			return err
		}
		pos = append(pos, i)
		idx = append(idx, v)
		if t.Rank() > nb {
			nb = t.Rank()
		}
	}
	k := len(pos)
	var perm []int64
	in := map[int]bool{}
	for _, p := range pos {
		perm = append(perm, int64(p))
		in[p] = true
	}
	for i := 0; i < rank; i++ {
		if !in[i] {
			perm = append(perm, int64(i))
		}
	}
	xt := x
	for i, p := range perm {
		if int64(i) != p {
			xt = b.Tmp("Transpose", []string{x}, AttrInts("perm", perm...))
			break
		}
	}
	// broadcast shape of the index tensors
	zero := b.I64(0)
	acc := b.Tmp("Mul", []string{idx[0], zero})
	for _, v := range idx[1:] {
		acc = b.Tmp("Add", []string{acc, b.Tmp("Mul", []string{v, zero})})
	}
	bshape := b.Tmp("Shape", []string{acc})
	var cols []string
	for _, v := range idx {
		cols = append(cols, b.Tmp("Unsqueeze", []string{b.Tmp("Expand", []string{v, bshape}), b.I64s(-1)}))
	}
	g := b.Tmp("GatherND", []string{xt, b.Tmp("Concat", cols, AttrInt("axis", -1))})
	adjacent := pos[k-1]-pos[0] == k-1
	if !adjacent || pos[0] == 0 {
		b.Bind(n.Results[0], g)
		return nil
	}
	before := pos[0]
	outRank := nb + rank - k
	var p2 []int64
	for i := 0; i < before; i++ {
		p2 = append(p2, int64(nb+i))
	}
	for i := 0; i < nb; i++ {
		p2 = append(p2, int64(i))
	}
	for i := nb + before; i < outRank; i++ {
		p2 = append(p2, int64(i))
	}
	b.Emit(n.Results[0], "Transpose", []string{g}, AttrInts("perm", p2...))
	return nil
}

// asStridedIsReshape reports whether an as_strided node reads every element
// of its contiguous input in order: offset 0, the result's contiguous
// strides, and as many elements as the input (the same symbolic dims in the
// same order, equal static products). That is a Reshape to the result's
// shape, symbolic dims included (what adaptive_avg_pool1d decomposes to
// under a dynamic batch: swin's pooler).
func asStridedIsReshape(n *ir.Node) bool {
	in, out := n.Arg("self").Value.Tensor(), n.Results[0].Tensor()
	if in == nil || out == nil || !in.IsContiguous() {
		return false
	}
	if off := n.Arg("storage_offset"); off.Kind != ir.ArgNone && !(off.Kind == ir.ArgInt && off.Int == 0) {
		return false
	}
	st := n.Arg("stride")
	if st.Kind != ir.ArgList || len(st.List) != out.Rank() {
		return false
	}
	want := int64(1)
	for d := out.Rank() - 1; d >= 0; d-- {
		e := st.List[d]
		if out.Rank() > 0 && out.Shape[d].IsConst() {
			if k, _ := out.Shape[d].Const(); k == 1 {
				if e.Kind != ir.ArgInt {
					return false
				}
				continue // the stride of a size-1 dim is never used
			}
		}
		if e.Kind != ir.ArgInt || e.Int != want || want < 0 {
			return false
		}
		k, ok := out.Shape[d].Const()
		if !ok {
			want = -1 // a stride past a symbolic dim would be symbolic
			continue
		}
		want *= k
	}
	return sameElements(in.Shape, out.Shape)
}

// sameElements: the symbolic dims of a and b agree in order and their
// static dims have equal products.
func sameElements(a, b []sym.Expr) bool {
	split := func(s []sym.Expr) (int64, []string) {
		p := int64(1)
		var syms []string
		for _, d := range s {
			if k, ok := d.Const(); ok {
				p *= k
			} else {
				syms = append(syms, d.String())
			}
		}
		return p, syms
	}
	pa, sa := split(a)
	pb, sb := split(b)
	if pa != pb || len(sa) != len(sb) {
		return false
	}
	for i := range sa {
		if sa[i] != sb[i] {
			return false
		}
	}
	return true
}
