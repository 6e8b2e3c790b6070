package ir

import (
	"fmt"

	"github.com/fxport/fxport/ir/sym"
)

// Indexing rules: gather, index_select, advanced indexing, embeddings, and
// the data-dependent ops (nonzero, unique, bincount, repeat_interleave) whose
// result sizes are fresh unbacked symbols.

func isIndexDType(d DType) bool { return d == Int64 || d == Int32 }

// inferGather: gather(self, dim, index): index's shape, self's dtype.
func inferGather(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	idx, err := c.Tensor("index")
	if err != nil {
		return nil, err
	}
	if _, err := checkedDim(c, "dim", t); err != nil {
		return nil, err
	}
	if idx.DType != Int64 {
		return nil, fmt.Errorf("gather(): expected dtype int64 for index, got %s", idx.DType)
	}
	if idx.Rank() != t.Rank() && !(idx.Rank() <= 1 && t.Rank() <= 1) {
		return nil, fmt.Errorf("index tensor must have the same number of dimensions as input tensor (%d vs %d)", idx.Rank(), t.Rank())
	}
	return one(withShapeDType(t, append([]sym.Expr(nil), idx.Shape...), t.DType)), nil
}

// inferIndexSelect: index_select(self, dim, index): dim becomes index's length.
func inferIndexSelect(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	idx, err := c.Tensor("index")
	if err != nil {
		return nil, err
	}
	if idx.Rank() > 1 {
		return nil, fmt.Errorf("index_select(): index must be a vector, got rank %d", idx.Rank())
	}
	if !isIndexDType(idx.DType) {
		return nil, fmt.Errorf("index_select(): expected int32 or int64 index, got %s", idx.DType)
	}
	d, err := checkedDim(c, "dim", t)
	if err != nil {
		return nil, err
	}
	if t.Rank() == 0 {
		return one(cloneTensor(t)), nil
	}
	shape := append([]sym.Expr(nil), t.Shape...)
	shape[d] = idx.Numel()
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferIndex: index.Tensor/_unsafe_index (advanced indexing with a list of
// optional index tensors). Bool masks select a data-dependent number of
// elements over the dims they cover. The index tensors broadcast together;
// when they are adjacent the broadcast dims replace the indexed dims in
// place, otherwise they go first (numpy's rule).
func inferIndex(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	idx, err := c.Tensors("indices")
	if err != nil {
		return nil, err
	}
	// Expand masks: a k-dim mask covers k dims and yields one index of shape [u].
	type entry struct {
		shape []sym.Expr // nil for None
		width int        // dims of self covered
	}
	var entries []entry
	masks := 0
	covered := 0
	for i, it := range idx {
		switch {
		case it == nil:
			entries = append(entries, entry{width: 1})
			covered++
		case it.DType == Bool || it.DType == Uint8:
			if covered+it.Rank() > t.Rank() {
				return nil, fmt.Errorf("too many indices for tensor of dimension %d", t.Rank())
			}
			for j := 0; j < it.Rank(); j++ {
				if err := checkSameDim(c, it.Shape[j], t.Shape[covered+j], fmt.Sprintf("the shape of the mask indices[%d] does not match the indexed tensor at dim %d", i, covered+j)); err != nil {
					return nil, err
				}
			}
			entries = append(entries, entry{shape: []sym.Expr{unbackedSym(c, masks)}, width: it.Rank()})
			masks++
			covered += it.Rank()
		case isIndexDType(it.DType):
			entries = append(entries, entry{shape: it.Shape, width: 1})
			covered++
		default:
			return nil, fmt.Errorf("tensors used as indices must be long, int, byte or bool tensors, got %s", it.DType)
		}
	}
	if covered > t.Rank() {
		return nil, fmt.Errorf("too many indices for tensor of dimension %d (got %d)", t.Rank(), covered)
	}
	for covered < t.Rank() {
		entries = append(entries, entry{width: 1})
		covered++
	}
	var shapes [][]sym.Expr
	first, last := -1, -1
	for i, e := range entries {
		if e.shape != nil {
			shapes = append(shapes, e.shape)
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return one(cloneTensor(t)), nil
	}
	bshape, err := broadcastShapes(c, shapes...)
	if err != nil {
		return nil, fmt.Errorf("shape mismatch: indexing tensors could not be broadcast together: %w", err)
	}
	adjacent := true
	for i := first; i <= last; i++ {
		if entries[i].shape == nil {
			adjacent = false
		}
	}
	var before, after []sym.Expr
	dim := 0
	for i, e := range entries {
		if e.shape == nil {
			if adjacent && i > last {
				after = append(after, t.Shape[dim])
			} else {
				before = append(before, t.Shape[dim])
			}
		}
		dim += e.width
	}
	var shape []sym.Expr
	if adjacent {
		shape = append(shape, before...)
		shape = append(shape, bshape...)
		shape = append(shape, after...)
	} else {
		shape = append(shape, bshape...)
		shape = append(shape, before...)
	}
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferEmbedding: embedding(weight, indices): indices' shape + [embedding_dim].
func inferEmbedding(c *InferCtx) ([]Type, error) {
	w, err := c.Tensor("weight")
	if err != nil {
		return nil, err
	}
	idx, err := c.Tensor("indices")
	if err != nil {
		return nil, err
	}
	if w.Rank() != 2 {
		return nil, fmt.Errorf("embedding weight must be 2-D, got rank %d", w.Rank())
	}
	if !isIndexDType(idx.DType) {
		return nil, fmt.Errorf("expected indices of type int32 or int64, got %s", idx.DType)
	}
	shape := append(append([]sym.Expr(nil), idx.Shape...), w.Shape[1])
	return one(withShapeDType(w, shape, w.DType)), nil
}

// inferEmbeddingDenseBackward: [num_weights, embedding_dim].
func inferEmbeddingDenseBackward(c *InferCtx) ([]Type, error) {
	g, err := c.Tensor("grad_output")
	if err != nil {
		return nil, err
	}
	n, err := c.SymInt("num_weights")
	if err != nil {
		return nil, err
	}
	if g.Rank() == 0 {
		return nil, fmt.Errorf("grad_output must have at least one dim")
	}
	return one(withShapeDType(g, []sym.Expr{n, g.Shape[g.Rank()-1]}, g.DType)), nil
}

// inferEmbeddingBag: _embedding_bag(weight, indices, offsets, …, mode, …,
// include_last_offset): (output [B, D], offset2bag, bag_size [B], max_indices).
func inferEmbeddingBag(c *InferCtx) ([]Type, error) {
	w, err := c.Tensor("weight")
	if err != nil {
		return nil, err
	}
	idx, err := c.Tensor("indices")
	if err != nil {
		return nil, err
	}
	off, err := c.Tensor("offsets")
	if err != nil {
		return nil, err
	}
	mode, err := c.Int("mode")
	if err != nil {
		return nil, err
	}
	last, err := c.Bool("include_last_offset")
	if err != nil {
		return nil, err
	}
	if w.Rank() != 2 {
		return nil, fmt.Errorf("embedding_bag weight must be 2-D, got rank %d", w.Rank())
	}
	if !isIndexDType(idx.DType) {
		return nil, fmt.Errorf("expected indices of type int32 or int64, got %s", idx.DType)
	}
	var bags sym.Expr
	switch idx.Rank() {
	case 2:
		bags = idx.Shape[0]
	case 1:
		if off.Rank() != 1 {
			return nil, fmt.Errorf("offsets must be 1-D, got rank %d", off.Rank())
		}
		bags = off.Shape[0]
		if last {
			bags = sym.Sub(bags, sym.Const(1))
		}
	default:
		return nil, fmt.Errorf("embedding_bag indices must be 1-D or 2-D, got rank %d", idx.Rank())
	}
	D := w.Shape[1]
	out := withShapeDType(w, []sym.Expr{bags, D}, w.DType)
	offset2bag := withShapeDType(w, []sym.Expr{idx.Numel()}, idx.DType)
	bagSize := withShapeDType(w, []sym.Expr{bags}, idx.DType)
	maxIdx := withShapeDType(w, []sym.Expr{bags}, idx.DType)
	if mode == 2 {
		maxIdx = withShapeDType(w, []sym.Expr{bags, D}, idx.DType)
	}
	return []Type{out, offset2bag, bagSize, maxIdx}, nil
}

// inferNonzero: [u, rank] int64, u a fresh unbacked symbol.
func inferNonzero(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	return one(withShapeDType(t, []sym.Expr{unbackedSym(c, 0), sym.Const(int64(t.Rank()))}, Int64)), nil
}

// inferUnique: unique_consecutive/_unique2: (values [u], inverse, counts [u]);
// disabled outputs are empty tensors, as torch returns them.
func inferUnique(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	inverse, err := c.Bool("return_inverse")
	if err != nil {
		return nil, err
	}
	counts, err := c.Bool("return_counts")
	if err != nil {
		return nil, err
	}
	u := unbackedSym(c, 0)
	values := withShapeDType(t, []sym.Expr{u}, t.DType)
	invShape := append([]sym.Expr(nil), t.Shape...)
	if a := namedOrNone(c, "dim"); a.Kind != ArgNone {
		d, err := checkedDim(c, "dim", t)
		if err != nil {
			return nil, err
		}
		if t.Rank() > 0 {
			vs := append([]sym.Expr(nil), t.Shape...)
			vs[d] = u
			values = withShapeDType(t, vs, t.DType)
			invShape = []sym.Expr{t.Shape[d]}
		}
	}
	inv := withShapeDType(t, constsOf(0), Int64)
	if inverse {
		inv = withShapeDType(t, invShape, Int64)
	}
	cnt := withShapeDType(t, constsOf(0), Int64)
	if counts {
		cnt = withShapeDType(t, []sym.Expr{u}, Int64)
	}
	return []Type{values, inv, cnt}, nil
}

// inferBucketize: bucketize/searchsorted: self's shape, int64 (int32 with out_int32).
func inferBucketize(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	dt := Int64
	if hasArg(c, "out_int32") {
		if b, err := c.Bool("out_int32"); err != nil {
			return nil, err
		} else if b {
			dt = Int32
		}
	}
	return one(withShapeDType(t, append([]sym.Expr(nil), t.Shape...), dt)), nil
}

// inferBincount: a data-dependent length; int64 counts, or the weights'
// float type (float32 stays, others become float64).
func inferBincount(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	if t.Rank() != 1 || !t.DType.IsInteger() {
		return nil, fmt.Errorf("bincount only supports 1-d non-negative integral inputs, got %s", t)
	}
	w, err := c.OptTensor("weights")
	if err != nil {
		return nil, err
	}
	dt := Int64
	if w != nil {
		dt = Float64
		if w.DType == Float32 {
			dt = Float32
		}
	}
	return one(withShapeDType(t, []sym.Expr{unbackedSym(c, 0)}, dt)), nil
}

// inferHistc: [bins], self's dtype.
func inferHistc(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	bins, err := c.Int("bins")
	if err != nil {
		return nil, err
	}
	if bins <= 0 {
		return nil, fmt.Errorf("bins must be > 0, got %d", bins)
	}
	return one(withShapeDType(t, constsOf(bins), t.DType)), nil
}

// inferRepeatInterleave: repeat_interleave.self_int/.self_Tensor/.Tensor.
// The length is output_size when given, repeats times the dim for an int
// repeats, and a fresh unbacked symbol otherwise.
func inferRepeatInterleave(c *InferCtx) ([]Type, error) {
	outSize, hasOut, err := c.OptSymInt("output_size")
	if err != nil {
		return nil, err
	}
	if !hasArg(c, "self") { // repeat_interleave.Tensor(repeats)
		r, err := c.Tensor("repeats")
		if err != nil {
			return nil, err
		}
		if r.Rank() > 1 {
			return nil, fmt.Errorf("repeat_interleave only accepts a 1-D repeats tensor, got rank %d", r.Rank())
		}
		n := outSize
		if !hasOut {
			n = unbackedSym(c, 0)
		}
		return one(withShapeDType(r, []sym.Expr{n}, r.DType)), nil
	}
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	var shape []sym.Expr
	base := []sym.Expr{t.Numel()}
	d := -1
	if a := namedOrNone(c, "dim"); a.Kind != ArgNone {
		if d, err = checkedDim(c, "dim", t); err != nil {
			return nil, err
		}
		if t.Rank() > 0 {
			base = append([]sym.Expr(nil), t.Shape...)
		} else {
			d = 0
		}
	} else {
		d = 0
	}
	shape = base
	ra, _ := c.Arg("repeats")
	switch {
	case hasOut:
		shape[d] = outSize
	case ra.Kind != ArgValue || ra.Value.Tensor() == nil:
		r, err := SymIntOf(ra)
		if err != nil {
			return nil, fmt.Errorf("argument \"repeats\": %w", err)
		}
		shape[d] = sym.Mul(shape[d], r)
	default:
		shape[d] = unbackedSym(c, 0)
	}
	return one(withShapeDType(t, shape, t.DType)), nil
}
