package ir

import (
	"fmt"

	"github.com/fxport/fxport/ir/sym"
)

// Shape rules: views and reshapes, permutations, squeeze/unsqueeze,
// select/slice/narrow, splits, concatenation, padding, repeat.

// int64Max is what torch writes for an open slice end (sys.maxsize).
const int64Max = int64(^uint64(0) >> 1)

// inferView: view/reshape/_unsafe_view/view_copy/prims.reshape/et_view:
// argument 1 is the new shape; one -1 entry is inferred from the numel,
// symbolically when the dims are symbolic (f32[s0, 4] viewed as [-1] is
// f32[4*s0]).
func inferView(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	size, err := symListOf(argAt(c, 1), "size")
	if err != nil {
		return nil, err
	}
	shape, err := inferSizes(c, t.Numel(), size)
	if err != nil {
		return nil, err
	}
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferSizes resolves a shape with at most one -1 against numel.
func inferSizes(c *InferCtx, n sym.Expr, size []sym.Expr) ([]sym.Expr, error) {
	shape := append([]sym.Expr(nil), size...)
	infer := -1
	var known []sym.Expr
	for i, d := range shape {
		if v, ok := d.Const(); ok {
			switch {
			case v == -1:
				if infer >= 0 {
					return nil, fmt.Errorf("only one dimension can be inferred")
				}
				infer = i
				continue
			case v < 0:
				return nil, fmt.Errorf("invalid shape dimension %d", v)
			}
		}
		known = append(known, d)
	}
	prod := numel(known)
	if infer >= 0 {
		if v, ok := prod.Const(); ok && v == 0 {
			return nil, fmt.Errorf("cannot reshape a tensor of %s elements into a shape with a 0 and a -1", n)
		}
		if nv, ok := n.Const(); ok {
			if pv, ok := prod.Const(); ok && nv%pv != 0 {
				return nil, fmt.Errorf("shape %s is invalid for input of size %d", exprList(size), nv)
			}
		}
		d, err := floorDivExpr(n, prod)
		if err != nil {
			return nil, err
		}
		shape[infer] = d
		return shape, nil
	}
	if err := checkSameDim(c, prod, n, fmt.Sprintf("shape %s is invalid for input of size %s", exprList(size), n)); err != nil {
		return nil, err
	}
	return shape, nil
}

func exprList(es []sym.Expr) string {
	s := "["
	for i, e := range es {
		if i > 0 {
			s += ", "
		}
		s += e.String()
	}
	return s + "]"
}

// inferViewDtype: view.dtype reinterprets the bytes: the last dim scales by
// the ratio of element sizes.
func inferViewDtype(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	dt, ok, err := c.OptDType("dtype")
	if err != nil || !ok {
		return nil, fmt.Errorf("view.dtype needs a dtype: %v", err)
	}
	from, to := t.DType.Bits(), dt.Bits()
	shape := append([]sym.Expr(nil), t.Shape...)
	if from != to {
		if t.Rank() == 0 {
			return nil, fmt.Errorf("cannot view a 0-dim tensor of %s as %s", t.DType, dt)
		}
		last := shape[len(shape)-1]
		if from > to {
			shape[len(shape)-1] = sym.Mul(last, sym.Const(int64(from/to)))
		} else {
			ratio := int64(to / from)
			if v, ok := last.Const(); ok && v%ratio != 0 {
				return nil, fmt.Errorf("the last dim (%d) must be divisible by %d to view %s as %s", v, ratio, t.DType, dt)
			}
			shape[len(shape)-1] = sym.FloorDiv(last, sym.Const(ratio))
		}
	}
	return one(withShapeDType(t, shape, dt)), nil
}

// expandTo applies expand's rules: -1 keeps a dim, a dim of size 1 may grow,
// new dims may be added in front.
func expandTo(c *InferCtx, t *TensorType, size []sym.Expr) ([]sym.Expr, error) {
	if len(size) < t.Rank() {
		return nil, fmt.Errorf("the number of sizes provided (%d) must be at least the number of dims (%d)", len(size), t.Rank())
	}
	off := len(size) - t.Rank()
	out := make([]sym.Expr, len(size))
	for i, d := range size {
		v, isConst := d.Const()
		if i < off {
			if isConst && v < 0 {
				return nil, fmt.Errorf("expanded size %d is not allowed in a leading, non-existing dimension %d", v, i)
			}
			out[i] = d
			continue
		}
		old := t.Shape[i-off]
		switch {
		case isConst && v == -1:
			out[i] = old
		case isOne(c, old):
			out[i] = d
		default:
			if err := checkSameDim(c, d, old, fmt.Sprintf("expand: size at dim %d must match the existing size", i)); err != nil {
				return nil, err
			}
			// Equal (or assumed equal): keep whichever is static.
			out[i] = d
			if old.IsConst() {
				out[i] = old
			}
		}
	}
	return out, nil
}

// inferExpand: expand/expand_copy(self, size).
func inferExpand(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	size, err := symListOf(argAt(c, 1), "size")
	if err != nil {
		return nil, err
	}
	shape, err := expandTo(c, t, size)
	if err != nil {
		return nil, err
	}
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferExpandAs: expand_as(self, other).
func inferExpandAs(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	o, err := tensorAt(c, 1)
	if err != nil {
		return nil, err
	}
	shape, err := expandTo(c, t, o.Shape)
	if err != nil {
		return nil, err
	}
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferBroadcastInDim: prims.broadcast_in_dim(a, shape, broadcast_dimensions).
func inferBroadcastInDim(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	shape, err := c.SymInts("shape")
	if err != nil {
		return nil, err
	}
	bdims, err := c.Ints("broadcast_dimensions")
	if err != nil {
		return nil, err
	}
	if len(bdims) != t.Rank() {
		return nil, fmt.Errorf("broadcast_dimensions has %d entries for a tensor of rank %d", len(bdims), t.Rank())
	}
	for i, d := range bdims {
		if d < 0 || int(d) >= len(shape) {
			return nil, fmt.Errorf("broadcast dimension %d out of range", d)
		}
		if !isOne(c, t.Shape[i]) {
			if err := checkSameDim(c, t.Shape[i], shape[d], "broadcast_in_dim"); err != nil {
				return nil, err
			}
		}
	}
	return one(withShapeDType(t, shape, t.DType)), nil
}

// permutation validates a permutation of rank dims (negative entries wrap).
func permutation(dims []int64, rank int) ([]int, error) {
	if len(dims) != rank {
		return nil, fmt.Errorf("permutation %v has %d entries for a tensor of rank %d", dims, len(dims), rank)
	}
	seen := make([]bool, rank)
	out := make([]int, rank)
	for i, d := range dims {
		n, err := normDim(d, rank)
		if err != nil {
			return nil, err
		}
		if rank > 0 && seen[n] {
			return nil, fmt.Errorf("repeated dim %d in permutation %v", n, dims)
		}
		if rank > 0 {
			seen[n] = true
		}
		out[i] = n
	}
	return out, nil
}

// permuted applies a permutation to t's shape. The result is described by
// its shape alone (contiguous), as torch.export records permute results and
// as the *_copy variants produce them.
func permuted(t *TensorType, perm []int) *TensorType {
	shape := make([]sym.Expr, len(perm))
	for i, p := range perm {
		shape[i] = t.Shape[p]
	}
	return withShapeDType(t, shape, t.DType)
}

// permutedView is permuted for the view ops (permute, t, transpose, movedim),
// whose results keep the input's strides in a new order: the dim order
// lists, outermost first, where each input dim went. The _copy forms are
// contiguous.
func permutedView(c *InferCtx, t *TensorType, perm []int) *TensorType {
	r := permuted(t, perm)
	if !c.Op().Has(PropView) {
		return r
	}
	inv := make([]int, len(perm))
	for i, p := range perm {
		inv[p] = i
	}
	order := make([]int, len(perm))
	for i := range order {
		d := i
		if t.DimOrder != nil {
			d = t.DimOrder[i]
		}
		order[i] = inv[d]
	}
	r.DimOrder = order
	if r.IsContiguous() {
		r.DimOrder = nil
	}
	return r
}

// inferPermute: permute/permute_copy/prims.transpose: argument 1 is the permutation.
func inferPermute(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	dims, err := intListOf(argAt(c, 1), "dims")
	if err != nil {
		return nil, err
	}
	perm, err := permutation(dims, t.Rank())
	if err != nil {
		return nil, err
	}
	return one(permutedView(c, t, perm)), nil
}

// inferTranspose: transpose(self, dim0, dim1).
func inferTranspose(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	d0, err := checkedDim(c, "dim0", t)
	if err != nil {
		return nil, err
	}
	d1, err := checkedDim(c, "dim1", t)
	if err != nil {
		return nil, err
	}
	if t.Rank() == 0 {
		return one(cloneTensor(t)), nil
	}
	perm := make([]int, t.Rank())
	for i := range perm {
		perm[i] = i
	}
	perm[d0], perm[d1] = perm[d1], perm[d0]
	return one(permutedView(c, t, perm)), nil
}

// inferT: t(self): transposes a 2-D tensor; 0-D and 1-D pass through.
func inferT(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	switch t.Rank() {
	case 0, 1:
		return one(cloneTensor(t)), nil
	case 2:
		return one(permutedView(c, t, []int{1, 0})), nil
	}
	return nil, fmt.Errorf("t() expects a tensor with <= 2 dimensions, got %d", t.Rank())
}

// inferSqueeze: squeeze() drops every dim known to be 1; squeeze.dim(s) drops
// the given dims when they are 1 (others stay, as in torch); prims.squeeze
// requires them to be 1.
func inferSqueeze(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	strict := false
	a := namedOrNone(c, "dim")
	if hasArg(c, "dimensions") {
		a, strict = namedOrNone(c, "dimensions"), true
	}
	drop := make([]bool, t.Rank())
	if a.Kind == ArgNone && !hasArg(c, "dim") && !strict {
		for i, d := range t.Shape {
			drop[i] = isOne(c, d)
		}
	} else {
		dims, err := intListOf(a, "dim")
		if err != nil {
			return nil, err
		}
		for _, d := range dims {
			n, err := normDim(d, t.Rank())
			if err != nil {
				return nil, err
			}
			if t.Rank() == 0 {
				continue
			}
			if isOne(c, t.Shape[n]) {
				drop[n] = true
			} else if strict {
				return nil, fmt.Errorf("cannot squeeze dim %d of size %s", n, t.Shape[n])
			}
		}
	}
	shape := []sym.Expr{}
	for i, d := range t.Shape {
		if !drop[i] {
			shape = append(shape, d)
		}
	}
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferUnsqueeze: unsqueeze(self, dim) inserts a dim of size 1.
func inferUnsqueeze(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	d, err := c.Int("dim")
	if err != nil {
		return nil, err
	}
	n, err := normDimInsert(d, t.Rank())
	if err != nil {
		return nil, err
	}
	shape := make([]sym.Expr, 0, t.Rank()+1)
	shape = append(shape, t.Shape[:n]...)
	shape = append(shape, sym.Const(1))
	shape = append(shape, t.Shape[n:]...)
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferFlatten: flatten(self, start_dim, end_dim).
func inferFlatten(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	if t.Rank() == 0 {
		return one(withShapeDType(t, constsOf(1), t.DType)), nil
	}
	s, err := checkedDim(c, "start_dim", t)
	if err != nil {
		return nil, err
	}
	e, err := checkedDim(c, "end_dim", t)
	if err != nil {
		return nil, err
	}
	if s > e {
		return nil, fmt.Errorf("flatten() has invalid args: start_dim %d cannot come after end_dim %d", s, e)
	}
	shape := append([]sym.Expr(nil), t.Shape[:s]...)
	shape = append(shape, numel(t.Shape[s:e+1]))
	shape = append(shape, t.Shape[e+1:]...)
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferUnflatten: unflatten(self, dim, sizes) splits one dim (one -1 allowed).
func inferUnflatten(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	d, err := checkedDim(c, "dim", t)
	if err != nil {
		return nil, err
	}
	sizes, err := c.SymInts("sizes")
	if err != nil {
		return nil, err
	}
	if len(sizes) == 0 {
		return nil, fmt.Errorf("unflatten: sizes must be non-empty")
	}
	if t.Rank() == 0 {
		return nil, fmt.Errorf("unflatten needs a tensor with at least one dim")
	}
	parts, err := inferSizes(c, t.Shape[d], sizes)
	if err != nil {
		return nil, err
	}
	shape := append([]sym.Expr(nil), t.Shape[:d]...)
	shape = append(shape, parts...)
	shape = append(shape, t.Shape[d+1:]...)
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferSelect: select(self, dim, index) removes dim.
func inferSelect(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	if t.Rank() == 0 {
		return nil, fmt.Errorf("select() cannot be applied to a 0-dim tensor")
	}
	d, err := checkedDim(c, "dim", t)
	if err != nil {
		return nil, err
	}
	idx, err := c.SymInt("index")
	if err != nil {
		return nil, err
	}
	if iv, ok := idx.Const(); ok {
		if sv, ok := t.Shape[d].Const(); ok && (iv < -sv || iv >= sv) {
			return nil, fmt.Errorf("select(): index %d out of range for tensor of size %d at dimension %d", iv, sv, d)
		}
	}
	shape := append(append([]sym.Expr(nil), t.Shape[:d]...), t.Shape[d+1:]...)
	return one(withShapeDType(t, shape, t.DType)), nil
}

// sliceLen computes the length of size[start:end:step] with torch's clamping:
// negative bounds wrap, then clamp to [0, size]; None start is 0, None (or
// sys.maxsize) end is size. With a symbolic size, a bound is compared with it
// using the Env; when the Env cannot decide, a constant non-negative bound is
// taken to lie inside the dim and a negative one to wrap to size+bound >= 0
// (torch.export's size-oblivious assumption that sizes are large), so
// x[1:] on a dim of size s0 has length s0 - 1.
func sliceLen(c *InferCtx, size sym.Expr, start, end sym.Expr, hasStart, hasEnd bool, step int64) (sym.Expr, error) {
	if step <= 0 {
		return sym.Expr{}, fmt.Errorf("slice step must be positive, got %d", step)
	}
	zero := sym.Const(0)
	if !hasStart {
		start = zero
	}
	if !hasEnd {
		end = size
	} else if v, ok := end.Const(); ok && v >= int64Max>>1 {
		end = size
	}
	clamp := func(x sym.Expr) sym.Expr {
		if v, ok := x.Const(); ok && v < 0 {
			x = sym.Add(size, x)
		}
		// Lower clamp at 0.
		if knownTrue(c, sym.Lt(x, zero)) {
			x = zero
		} else if v, ok := x.Const(); ok && v < 0 {
			x = zero
		}
		// Upper clamp at size.
		if sv, ok := size.Const(); ok {
			if xv, ok := x.Const(); ok && xv > sv {
				x = size
			}
		} else if knownTrue(c, sym.Ge(x, size)) {
			x = size
		}
		return x
	}
	start, end = clamp(start), clamp(end)
	// end < start gives an empty slice.
	if sv, ok := start.Const(); ok {
		if ev, ok := end.Const(); ok && ev < sv {
			end = start
		}
	} else if knownTrue(c, sym.Lt(end, start)) {
		end = start
	}
	n := sym.Sub(end, start)
	if step != 1 {
		n = sym.CeilDiv(n, sym.Const(step))
	}
	return n, nil
}

// inferSlice: slice(self, dim, start, end, step).
func inferSlice(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	if t.Rank() == 0 {
		return nil, fmt.Errorf("slice() cannot be applied to a 0-dim tensor")
	}
	d, err := checkedDim(c, "dim", t)
	if err != nil {
		return nil, err
	}
	start, hasStart, err := c.OptSymInt("start")
	if err != nil {
		return nil, err
	}
	end, hasEnd, err := c.OptSymInt("end")
	if err != nil {
		return nil, err
	}
	step, err := c.Int("step")
	if err != nil {
		return nil, err
	}
	n, err := sliceLen(c, t.Shape[d], start, end, hasStart, hasEnd, step)
	if err != nil {
		return nil, err
	}
	shape := append([]sym.Expr(nil), t.Shape...)
	shape[d] = n
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferNarrow: narrow(self, dim, start, length).
func inferNarrow(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	if t.Rank() == 0 {
		return nil, fmt.Errorf("narrow() cannot be applied to a 0-dim tensor")
	}
	d, err := checkedDim(c, "dim", t)
	if err != nil {
		return nil, err
	}
	start, err := c.SymInt("start")
	if err != nil {
		return nil, err
	}
	length, err := c.SymInt("length")
	if err != nil {
		return nil, err
	}
	if err := checkNonNegative(c, length, "narrow length"); err != nil {
		return nil, err
	}
	if sv, ok := start.Const(); ok {
		if sz, ok := t.Shape[d].Const(); ok {
			if sv < 0 {
				sv += sz
			}
			if lv, ok := length.Const(); ok && (sv < 0 || sv+lv > sz) {
				return nil, fmt.Errorf("start (%d) + length (%d) exceeds dimension size (%d)", sv, lv, sz)
			}
		}
	}
	shape := append([]sym.Expr(nil), t.Shape...)
	shape[d] = length
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferDiagonal: diagonal(self, offset, dim1, dim2): both dims removed, the
// diagonal's length appended.
func inferDiagonal(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	if t.Rank() < 2 {
		return nil, fmt.Errorf("diagonal needs a tensor of rank >= 2, got %d", t.Rank())
	}
	off, err := c.Int("offset")
	if err != nil {
		return nil, err
	}
	d1, err := checkedDim(c, "dim1", t)
	if err != nil {
		return nil, err
	}
	d2, err := checkedDim(c, "dim2", t)
	if err != nil {
		return nil, err
	}
	if d1 == d2 {
		return nil, fmt.Errorf("diagonal dimensions cannot be identical %d, %d", d1, d2)
	}
	a, b := t.Shape[d1], t.Shape[d2]
	var n sym.Expr
	if off >= 0 {
		n = sym.Min(a, sym.Sub(b, sym.Const(off)))
	} else {
		n = sym.Min(sym.Add(a, sym.Const(off)), b)
	}
	n = sym.Max(n, sym.Const(0))
	var shape []sym.Expr
	for i, d := range t.Shape {
		if i != d1 && i != d2 {
			shape = append(shape, d)
		}
	}
	shape = append(shape, n)
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferAsStrided: as_strided(self, size, stride, storage_offset): the shape is size.
func inferAsStrided(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	size, err := c.SymInts("size")
	if err != nil {
		return nil, err
	}
	stride, err := c.SymInts("stride")
	if err != nil {
		return nil, err
	}
	if len(size) != len(stride) {
		return nil, fmt.Errorf("mismatch in length of strides and shape")
	}
	return one(withShapeDType(t, size, t.DType)), nil
}

// inferMovedim: movedim(self, source, destination).
func inferMovedim(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	src, err := checkedDim(c, "source", t)
	if err != nil {
		return nil, err
	}
	dst, err := checkedDim(c, "destination", t)
	if err != nil {
		return nil, err
	}
	if t.Rank() == 0 {
		return one(cloneTensor(t)), nil
	}
	var rest []int
	for i := 0; i < t.Rank(); i++ {
		if i != src {
			rest = append(rest, i)
		}
	}
	perm := append([]int(nil), rest[:dst]...)
	perm = append(perm, src)
	perm = append(perm, rest[dst:]...)
	return one(permutedView(c, t, perm)), nil
}

// inferUnfold: unfold(self, dimension, size, step): the dim becomes the
// number of windows and a dim of the window size is appended.
func inferUnfold(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	size, err := c.Int("size")
	if err != nil {
		return nil, err
	}
	step, err := c.Int("step")
	if err != nil {
		return nil, err
	}
	if step <= 0 || size < 0 {
		return nil, fmt.Errorf("unfold: size must be >= 0 and step > 0")
	}
	if t.Rank() == 0 {
		return one(withShapeDType(t, constsOf(size), t.DType)), nil
	}
	d, err := checkedDim(c, "dimension", t)
	if err != nil {
		return nil, err
	}
	if v, ok := t.Shape[d].Const(); ok && v < size {
		return nil, fmt.Errorf("unfold: maximum size for dim %d is %d, got %d", d, v, size)
	}
	shape := append([]sym.Expr(nil), t.Shape...)
	shape[d] = sym.Add(sym.FloorDiv(sym.Sub(t.Shape[d], sym.Const(size)), sym.Const(step)), sym.Const(1))
	shape = append(shape, sym.Const(size))
	return one(withShapeDType(t, shape, t.DType)), nil
}

// pieces builds one result per piece size along dim d.
func pieces(t *TensorType, d int, sizes []sym.Expr) []Type {
	out := make([]Type, len(sizes))
	for i, s := range sizes {
		shape := append([]sym.Expr(nil), t.Shape...)
		shape[d] = s
		out[i] = withShapeDType(t, shape, t.DType)
	}
	return out
}

// maxStaticPieces bounds the search for a symbolic dim that is a constant
// multiple of a symbolic piece size.
const maxStaticPieces = 256

// splitSizes divides a dim of the given size into pieces of split (the last
// one smaller). The number of pieces must be static.
func splitSizes(c *InferCtx, size, split sym.Expr) ([]sym.Expr, error) {
	sz, szOK := size.Const()
	sp, spOK := split.Const()
	switch {
	case szOK && spOK:
		if sp < 0 {
			return nil, fmt.Errorf("split expects split_size be non-negative, got %d", sp)
		}
		if sp == 0 {
			if sz != 0 {
				return nil, fmt.Errorf("split_size can only be 0 if the dimension size is 0")
			}
			return []sym.Expr{sym.Const(0)}, nil
		}
		n := (sz + sp - 1) / sp
		if n == 0 {
			n = 1
		}
		out := make([]sym.Expr, n)
		for i := range out {
			out[i] = sym.Const(sp)
		}
		out[n-1] = sym.Const(sz - sp*(n-1))
		return out, nil
	case size.Equal(split) || knownTrue(c, sym.Ge(split, size)):
		return []sym.Expr{size}, nil
	}
	// A symbolic dim that is a small constant multiple of the piece size (4*s0 in pieces of s0).
	for n := int64(2); n <= maxStaticPieces; n++ {
		if !sym.Mul(sym.Const(n), split).Equal(size) {
			continue
		}
		out := make([]sym.Expr, n)
		for i := range out {
			out[i] = split
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot split a dim of size %s into pieces of %s: the number of pieces must be static", size, split)
}

// inferSplit: split.Tensor/split_copy.Tensor(self, split_size, dim): one
// result per piece.
func inferSplit(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	d, err := splitDim(c, t)
	if err != nil {
		return nil, err
	}
	split, err := c.SymInt("split_size")
	if err != nil {
		return nil, err
	}
	sizes, err := splitSizes(c, t.Shape[d], split)
	if err != nil {
		return nil, err
	}
	return pieces(t, d, sizes), nil
}

func splitDim(c *InferCtx, t *TensorType) (int, error) {
	if t.Rank() == 0 {
		return 0, fmt.Errorf("cannot split a 0-dim tensor")
	}
	return checkedDim(c, "dim", t)
}

// inferSplitWithSizes: split_with_sizes(self, split_sizes, dim).
func inferSplitWithSizes(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	d, err := splitDim(c, t)
	if err != nil {
		return nil, err
	}
	sizes, err := c.SymInts("split_sizes")
	if err != nil {
		return nil, err
	}
	for i, s := range sizes {
		if err := checkNonNegative(c, s, fmt.Sprintf("split_sizes[%d]", i)); err != nil {
			return nil, err
		}
	}
	if err := checkSameDim(c, numelSum(sizes), t.Shape[d], "split_with_sizes: the sizes must sum to the dim size"); err != nil {
		return nil, err
	}
	return pieces(t, d, sizes), nil
}

func numelSum(xs []sym.Expr) sym.Expr {
	if len(xs) == 0 {
		return sym.Const(0)
	}
	return sym.Add(xs...)
}

// inferChunk: chunk(self, chunks, dim): pieces of ceil(size/chunks).
func inferChunk(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	d, err := splitDim(c, t)
	if err != nil {
		return nil, err
	}
	n, err := c.Int("chunks")
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, fmt.Errorf("chunk expects chunks to be greater than 0, got %d", n)
	}
	if n == 1 {
		return pieces(t, d, []sym.Expr{t.Shape[d]}), nil
	}
	split := sym.CeilDiv(t.Shape[d], sym.Const(n))
	sizes, err := splitSizes(c, t.Shape[d], split)
	if err != nil {
		return nil, err
	}
	return pieces(t, d, sizes), nil
}

// inferUnbind: unbind(self, dim): one result per index of a static dim.
func inferUnbind(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	d, err := splitDim(c, t)
	if err != nil {
		return nil, err
	}
	n, ok := t.Shape[d].Const()
	if !ok {
		return nil, fmt.Errorf("cannot unbind a dim of symbolic size %s: the number of results must be static", t.Shape[d])
	}
	shape := append(append([]sym.Expr(nil), t.Shape[:d]...), t.Shape[d+1:]...)
	out := make([]Type, n)
	for i := range out {
		out[i] = withShapeDType(t, append([]sym.Expr(nil), shape...), t.DType)
	}
	return out, nil
}

// inferCat: cat(tensors, dim): the dim sizes add up, the others must agree;
// the dtype promotes across the inputs. 1-D empty tensors are skipped, as in torch.
func inferCat(c *InferCtx) ([]Type, error) {
	ts, err := c.Tensors("tensors")
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("cat expects a non-empty list of tensors")
	}
	var live []*TensorType
	var args []Arg
	a, _ := c.Arg("tensors")
	for i, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("cat: tensors[%d] is None", i)
		}
		args = append(args, a.List[i])
		if t.Rank() == 1 {
			if v, ok := t.Shape[0].Const(); ok && v == 0 {
				continue
			}
		}
		live = append(live, t)
	}
	dt, err := ResultType(args...)
	if err != nil {
		return nil, err
	}
	if len(live) == 0 {
		return one(withShapeDType(ts[0], constsOf(0), dt)), nil
	}
	first := live[0]
	if first.Rank() == 0 {
		return nil, fmt.Errorf("zero-dimensional tensor cannot be concatenated")
	}
	dim, err := c.Int("dim")
	if err != nil {
		return nil, err
	}
	d, err := normDim(dim, first.Rank())
	if err != nil {
		return nil, err
	}
	shape := append([]sym.Expr(nil), first.Shape...)
	sizes := []sym.Expr{first.Shape[d]}
	for k, t := range live[1:] {
		if t.Rank() != first.Rank() {
			return nil, fmt.Errorf("tensors must have the same number of dimensions: got %d and %d", first.Rank(), t.Rank())
		}
		for i := range shape {
			if i == d {
				continue
			}
			if err := checkSameDim(c, t.Shape[i], shape[i], fmt.Sprintf("sizes of tensors must match except in dimension %d (tensor %d, dim %d)", d, k+1, i)); err != nil {
				return nil, err
			}
			if !shape[i].IsConst() && t.Shape[i].IsConst() {
				shape[i] = t.Shape[i]
			}
		}
		sizes = append(sizes, t.Shape[d])
	}
	shape[d] = numelSum(sizes)
	r := withShapeDType(first, shape, dt)
	return one(r), nil
}

// inferStack: stack(tensors, dim): equal shapes, a new dim of len(tensors).
func inferStack(c *InferCtx) ([]Type, error) {
	ts, err := c.Tensors("tensors")
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("stack expects a non-empty list of tensors")
	}
	a, _ := c.Arg("tensors")
	for i, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("stack: tensors[%d] is None", i)
		}
		if t.Rank() != ts[0].Rank() {
			return nil, fmt.Errorf("stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %d", ts[0], t, i)
		}
		for j := range t.Shape {
			if err := checkSameDim(c, t.Shape[j], ts[0].Shape[j], fmt.Sprintf("stack: entry %d dim %d", i, j)); err != nil {
				return nil, err
			}
		}
	}
	dt, err := ResultType(a.List...)
	if err != nil {
		return nil, err
	}
	dim, err := c.Int("dim")
	if err != nil {
		return nil, err
	}
	d, err := normDimInsert(dim, ts[0].Rank())
	if err != nil {
		return nil, err
	}
	shape := append([]sym.Expr(nil), ts[0].Shape[:d]...)
	shape = append(shape, sym.Const(int64(len(ts))))
	shape = append(shape, ts[0].Shape[d:]...)
	return one(withShapeDType(ts[0], shape, dt)), nil
}

// inferPad: constant_pad_nd/pad/reflection_pad*/replication_pad*: argument 1
// lists (before, after) pairs starting from the last dim.
func inferPad(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	pad, err := symListOf(argAt(c, 1), "pad")
	if err != nil {
		return nil, err
	}
	if len(pad)%2 != 0 {
		return nil, fmt.Errorf("padding length must be divisible by 2, got %d", len(pad))
	}
	if len(pad)/2 > t.Rank() {
		return nil, fmt.Errorf("padding length %d is too large for a tensor of rank %d", len(pad), t.Rank())
	}
	shape := append([]sym.Expr(nil), t.Shape...)
	for i := 0; i < len(pad)/2; i++ {
		d := t.Rank() - 1 - i
		shape[d] = sym.Add(shape[d], pad[2*i], pad[2*i+1])
		if err := checkNonNegative(c, shape[d], fmt.Sprintf("padded size of dim %d", d)); err != nil {
			return nil, err
		}
	}
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferRepeat: repeat(self, repeats): dims multiply, extra leading repeats add dims.
func inferRepeat(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	reps, err := c.SymInts("repeats")
	if err != nil {
		return nil, err
	}
	if len(reps) < t.Rank() {
		return nil, fmt.Errorf("number of repeat dims (%d) can not be smaller than the number of tensor dims (%d)", len(reps), t.Rank())
	}
	off := len(reps) - t.Rank()
	shape := make([]sym.Expr, len(reps))
	for i, r := range reps {
		if err := checkNonNegative(c, r, "repeat"); err != nil {
			return nil, err
		}
		if i < off {
			shape[i] = r
		} else {
			shape[i] = sym.Mul(t.Shape[i-off], r)
		}
	}
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferPixelShuffle: pixel_shuffle moves r*r channels into space;
// pixel_unshuffle does the reverse.
func inferPixelShuffle(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	if t.Rank() < 3 {
		return nil, fmt.Errorf("pixel_shuffle expects a tensor of rank >= 3, got %d", t.Rank())
	}
	var r int64
	if hasArg(c, "upscale_factor") {
		r, err = c.Int("upscale_factor")
	} else {
		r, err = c.Int("downscale_factor")
	}
	if err != nil {
		return nil, err
	}
	if r <= 0 {
		return nil, fmt.Errorf("the factor must be positive, got %d", r)
	}
	n := t.Rank()
	shape := append([]sym.Expr(nil), t.Shape...)
	rr := sym.Const(r * r)
	if c.Op().Info().Base == "pixel_shuffle" {
		if v, ok := shape[n-3].Const(); ok && v%(r*r) != 0 {
			return nil, fmt.Errorf("pixel_shuffle expects its channels (%d) to be divisible by the square of the factor (%d)", v, r*r)
		}
		shape[n-3] = sym.FloorDiv(shape[n-3], rr)
		shape[n-2] = sym.Mul(shape[n-2], sym.Const(r))
		shape[n-1] = sym.Mul(shape[n-1], sym.Const(r))
	} else {
		shape[n-3] = sym.Mul(shape[n-3], rr)
		shape[n-2] = sym.FloorDiv(shape[n-2], sym.Const(r))
		shape[n-1] = sym.FloorDiv(shape[n-1], sym.Const(r))
	}
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferGlu: glu(self, dim) halves dim.
func inferGlu(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	if t.Rank() == 0 {
		return nil, fmt.Errorf("glu does not support 0-dim tensors")
	}
	d, err := checkedDim(c, "dim", t)
	if err != nil {
		return nil, err
	}
	if v, ok := t.Shape[d].Const(); ok && v%2 != 0 {
		return nil, fmt.Errorf("halving dimension must be even, but dimension %d is size %d", d, v)
	}
	shape := append([]sym.Expr(nil), t.Shape...)
	shape[d] = sym.FloorDiv(shape[d], sym.Const(2))
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferViewAsReal: complex [...] → real [..., 2].
func inferViewAsReal(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	if !t.DType.IsComplex() {
		return nil, fmt.Errorf("view_as_real is only supported for complex tensors, got %s", t.DType)
	}
	shape := append(append([]sym.Expr(nil), t.Shape...), sym.Const(2))
	return one(withShapeDType(t, shape, t.DType.ToReal())), nil
}

// inferViewAsComplex: real [..., 2] → complex [...].
func inferViewAsComplex(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	if !t.DType.IsFloat() || (t.DType != Float16 && t.DType != Float32 && t.DType != Float64) {
		return nil, fmt.Errorf("view_as_complex is only supported for float16, float32 and float64 tensors, got %s", t.DType)
	}
	if t.Rank() == 0 || !sameDim(c, t.Shape[t.Rank()-1], sym.Const(2)) {
		return nil, fmt.Errorf("view_as_complex needs the last dimension to have size 2, got %s", t)
	}
	return one(withShapeDType(t, append([]sym.Expr(nil), t.Shape[:t.Rank()-1]...), t.DType.ToComplex())), nil
}

// inferOneHot: one_hot(self, num_classes): a trailing dim of num_classes
// (data-dependent when -1).
func inferOneHot(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	if t.DType != Int64 {
		return nil, fmt.Errorf("one_hot is only applicable to index tensors (int64), got %s", t.DType)
	}
	n, err := c.SymInt("num_classes")
	if err != nil {
		return nil, err
	}
	if v, ok := n.Const(); ok && v == -1 {
		n = unbackedSym(c, 0)
	}
	shape := append(append([]sym.Expr(nil), t.Shape...), n)
	return one(withShapeDType(t, shape, Int64)), nil
}
