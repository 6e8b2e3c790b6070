package interp

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// Indexing: index_select, gather and scatter, advanced indexing
// (index/index_put), embedding, nonzero and the *_scatter ops.

func init() {
	register(kIndexSelect, ir.OpAtenIndexSelect)
	register(kGather, ir.OpAtenGather)
	register(kScatter("src", ""), ir.OpAtenScatterSrc)
	register(kScatter("value", ""), ir.OpAtenScatterValue)
	register(kScatter("src", "sum"), ir.OpAtenScatterAdd)
	register(kScatterReduce, ir.OpAtenScatterReduceTwo)
	register(kIndex, ir.OpAtenIndexTensor, ir.OpAten_UnsafeIndexTensor)
	register(kIndexPut, ir.OpAtenIndexPut, ir.OpAten_UnsafeIndexPut)
	register(kIndexAdd(false), ir.OpAtenIndexAdd)
	register(kIndexAdd(true), ir.OpAtenIndexCopy)
	register(kEmbedding, ir.OpAtenEmbedding)
	register(kNonzero, ir.OpAtenNonzero)
	register(kSelectScatter, ir.OpAtenSelectScatter)
	register(kSliceScatter, ir.OpAtenSliceScatter)
	register(kDiagonalScatter, ir.OpAtenDiagonalScatter)
	register(kEtCopyIndex, ir.OpExecutorchPrimEtCopyIndexTensor)
}

// wrapIndex checks an index against a dim size and wraps negatives.
func wrapIndex(i, size int64, what string) (int64, error) {
	if i < -size || i >= size {
		return 0, domainErrorf("index %d is out of bounds for dimension %s with size %d", i, what, size)
	}
	if i < 0 {
		i += size
	}
	return i, nil
}

// indexSelect picks the entries idx of dim d (indices already checked).
func indexSelect(t *Tensor, d int, idx []int64) (*Tensor, error) {
	shape := append([]int64{}, t.Shape...)
	shape[d] = int64(len(idx))
	out := NewTensor(t.DType, shape...)
	for j, i := range idx {
		src, err := selectView(t, int64(d), i)
		if err != nil {
			return nil, err
		}
		dst, err := selectView(out, int64(d), int64(j))
		if err != nil {
			return nil, err
		}
		copyInto(dst, src)
	}
	return out, nil
}

func kIndexSelect(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	d, err := c.dim("dim", x.Rank())
	if err != nil {
		return nil, err
	}
	index, err := c.tensor("index")
	if err != nil {
		return nil, err
	}
	if index.Rank() > 1 || !isIntDT(index.DType) {
		return nil, fmt.Errorf("index_select(): index must be a 1-D (or 0-D) integer tensor, got %s%v", index.DType, index.Shape)
	}
	if x.Rank() == 0 {
		x, _ = viewAs(x, []int64{1}, true)
	}
	idx := append([]int64(nil), index.ints()...)
	for k, i := range idx {
		if idx[k], err = wrapIndex(i, x.Shape[d], fmt.Sprint(d)); err != nil {
			return nil, fmt.Errorf("index_select(): %w", err)
		}
	}
	out, err := indexSelect(x, d, idx)
	if err != nil {
		return nil, err
	}
	if c.node != nil && len(c.node.Results) == 1 {
		if t := c.node.Results[0].Tensor(); t != nil && t.Rank() == 0 {
			return one0(viewAs(out, nil, true))
		}
	}
	return one(out), nil
}

// forEachPos calls f with every multi-index of shape in row-major order
// (pos is reused between calls) and its linear number.
func forEachPos(shape []int64, f func(pos []int64, k int64)) {
	n := numel(shape)
	pos := make([]int64, len(shape))
	for k := int64(0); k < n; k++ {
		f(pos, k)
		for d := len(shape) - 1; d >= 0; d-- {
			pos[d]++
			if pos[d] < shape[d] {
				break
			}
			pos[d] = 0
		}
	}
}

// gatherCheck validates index against self for gather/scatter along dim d.
func gatherCheck(x, index *Tensor, d int, src *Tensor) error {
	if !isIntDT(index.DType) || index.DType != ir.Int64 {
		return fmt.Errorf("gather/scatter(): expected dtype int64 for index, got %s", index.DType)
	}
	xr, ir_ := max(x.Rank(), 1), max(index.Rank(), 1)
	if xr != ir_ && index.Numel() > 0 {
		return fmt.Errorf("index tensor must have the same number of dimensions as the input tensor")
	}
	for i := 0; i < index.Rank(); i++ {
		if i != d && x.Rank() > 0 && index.Shape[i] > x.Shape[i] {
			return fmt.Errorf("size of dimension %d of index (%d) must not exceed the input's (%d)", i, index.Shape[i], x.Shape[i])
		}
		if src != nil && src.Rank() == index.Rank() && index.Shape[i] > src.Shape[i] {
			return fmt.Errorf("size of dimension %d of index (%d) must not exceed the source's (%d)", i, index.Shape[i], src.Shape[i])
		}
	}
	return nil
}

// offsetAt is the storage offset of a multi-index in t.
func offsetAt(t *Tensor, pos []int64) int64 {
	off := t.Offset
	for i, p := range pos {
		off += p * t.Strides[i]
	}
	return off
}

func kGather(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	d, err := c.dim("dim", x.Rank())
	if err != nil {
		return nil, err
	}
	index, err := c.tensor("index")
	if err != nil {
		return nil, err
	}
	if err := gatherCheck(x, index, d, nil); err != nil {
		return nil, err
	}
	out := NewTensor(x.DType, index.Shape...)
	err = forEachIndexed(index, x, d, "gather()", func(_ []int64, k int64, src []int64) {
		copyElem(out, k, x, offsetAt(x, src))
	})
	if err != nil {
		return nil, err
	}
	return one(out), nil
}

// forEachIndexed calls fn for every position pos (flat index k) of index
// with at = pos whose dim d is replaced by index's value there, wrapped
// into target's dim d: the element gather reads and scatter writes. A
// value out of range is an error prefixed with op; fn is not called after
// it.
func forEachIndexed(index, target *Tensor, d int, op string, fn func(pos []int64, k int64, at []int64)) error {
	iv := index.Contiguous().ints()
	at := make([]int64, target.Rank())
	var ferr error
	forEachPos(index.Shape, func(pos []int64, k int64) {
		if ferr != nil {
			return
		}
		copy(at, pos)
		if target.Rank() > 0 {
			i, err := wrapIndex(iv[k], target.Shape[d], fmt.Sprint(d))
			if err != nil {
				ferr = fmt.Errorf("%s: %w", op, err)
				return
			}
			at[d] = i
		}
		fn(pos, k, at)
	})
	return ferr
}

// reducer combines a scattered value into an existing one.
type reducer struct {
	f func(acc, v float64) float64
	i func(acc, v int64) int64
}

var scatterReducers = map[string]reducer{
	"sum":  {f: func(a, v float64) float64 { return a + v }, i: func(a, v int64) int64 { return a + v }},
	"prod": {f: func(a, v float64) float64 { return a * v }, i: func(a, v int64) int64 { return a * v }},
	"amax": {f: nanMax, i: func(a, v int64) int64 { return max(a, v) }},
	"amin": {f: nanMin, i: func(a, v int64) int64 { return min(a, v) }},
	"mean": {f: func(a, v float64) float64 { return a + v }, i: func(a, v int64) int64 { return a + v }},
}

// scatterInto writes (or reduces) src values into out at index positions
// along dim d. src may be nil, with value used instead. It returns how many
// values each output element received (for mean).
func scatterInto(out *Tensor, d int, index, src *Tensor, value *Tensor, red *reducer) ([]int64, error) {
	var sv *Tensor
	if src != nil {
		sv = src.To(out.DType)
	} else {
		sv = value.To(out.DType)
	}
	counts := make([]int64, out.storageLen())
	err := forEachIndexed(index, out, d, "scatter()", func(pos []int64, _ int64, dst []int64) {
		doff := offsetAt(out, dst)
		soff := sv.Offset
		if src != nil {
			soff = offsetAt(sv, pos)
		}
		counts[doff]++
		switch {
		case red == nil:
			copyElem(out, doff, sv, soff)
		case out.st.f != nil:
			out.st.f[doff] = roundFloat(out.DType, red.f(out.st.f[doff], sv.st.f[soff]))
		default:
			out.st.i[doff] = wrapInt(out.DType, red.i(out.st.i[doff], sv.st.i[soff]))
		}
	})
	return counts, err
}

func kScatter(srcName, reduce string) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		d, err := c.dim("dim", x.Rank())
		if err != nil {
			return nil, err
		}
		index, err := c.tensor("index")
		if err != nil {
			return nil, err
		}
		var src, value *Tensor
		if srcName == "src" {
			if src, err = c.tensor("src"); err != nil {
				return nil, err
			}
		} else {
			s, err := c.scalar("value")
			if err != nil {
				return nil, err
			}
			value = s.tensor()
		}
		if err := gatherCheck(x, index, d, src); err != nil {
			return nil, err
		}
		if domainOf(x.DType) == domComplex {
			return nil, fmt.Errorf("scatter is not supported for complex tensors")
		}
		out := x.Clone()
		var red *reducer
		if reduce != "" {
			r := scatterReducers[reduce]
			red = &r
		}
		if _, err := scatterInto(out, d, index, src, value, red); err != nil {
			return nil, err
		}
		return one(out), nil
	}
}

func kScatterReduce(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	d, err := c.dim("dim", x.Rank())
	if err != nil {
		return nil, err
	}
	index, err := c.tensor("index")
	if err != nil {
		return nil, err
	}
	src, err := c.tensor("src")
	if err != nil {
		return nil, err
	}
	reduce, err := c.str("reduce")
	if err != nil {
		return nil, err
	}
	includeSelf, err := c.bool("include_self")
	if err != nil {
		return nil, err
	}
	red, ok := scatterReducers[reduce]
	if !ok {
		return nil, fmt.Errorf("reduce argument must be either sum, prod, mean, amax or amin, got %s", reduce)
	}
	if err := gatherCheck(x, index, d, src); err != nil {
		return nil, err
	}
	if domainOf(x.DType) == domComplex {
		return nil, fmt.Errorf("scatter_reduce is not supported for complex tensors")
	}
	out := x.Clone()
	if !includeSelf {
		// Positions that receive a value start from the reduction's identity.
		touched := NewTensor(x.DType, x.Shape...)
		counts, err := scatterInto(touched, d, index, nil, ScalarInt0(ir.Int64, 1), nil)
		if err != nil {
			return nil, err
		}
		id := map[string]float64{"sum": 0, "mean": 0, "prod": 1}
		out.forEachOffset(func(off int64) {
			if counts[off] == 0 {
				return
			}
			v, has := id[reduce]
			switch {
			case out.st.f != nil && has:
				out.st.f[off] = v
			case out.st.f != nil && reduce == "amax":
				out.st.f[off] = negInf
			case out.st.f != nil && reduce == "amin":
				out.st.f[off] = posInf
			case has:
				out.st.i[off] = int64(v)
			case reduce == "amax":
				out.st.i[off] = minIntOf(x.DType)
			case reduce == "amin":
				out.st.i[off] = maxIntOf(x.DType)
			}
		})
	}
	counts, err := scatterInto(out, d, index, src, nil, &red)
	if err != nil {
		return nil, err
	}
	if reduce == "mean" {
		out.forEachOffset(func(off int64) {
			n := counts[off]
			if includeSelf {
				n++
			}
			if n == 0 {
				return
			}
			if out.st.f != nil {
				out.st.f[off] = roundFloat(out.DType, out.st.f[off]/float64(n))
			} else {
				q, _ := floorDivI(out.st.i[off], n)
				out.st.i[off] = q
			}
		})
	}
	return one(out), nil
}

// indexPlan resolves advanced indexing of x by a list of optional index
// tensors: the shape of x[indices] and, for each of its elements in
// row-major order, the storage offset in x.
func indexPlan(x *Tensor, indices []*Tensor) ([]int64, []int64, error) {
	// Boolean masks become their nonzero coordinates.
	var idx []*Tensor
	for _, t := range indices {
		if t == nil {
			idx = append(idx, nil)
			continue
		}
		if t.DType == ir.Bool || t.DType == ir.Uint8 {
			dimsSoFar := len(idx)
			for k := 0; k < t.Rank(); k++ {
				if dimsSoFar+k >= x.Rank() || x.Shape[dimsSoFar+k] != t.Shape[k] {
					return nil, nil, fmt.Errorf("the shape of the mask %v at index %d does not match the shape of the indexed tensor %v", t.Shape, k, x.Shape)
				}
			}
			nz := nonzero(t)
			for k := 0; k < t.Rank(); k++ {
				col, _ := selectView(nz, 1, int64(k))
				idx = append(idx, col)
			}
			continue
		}
		if !isIntDT(t.DType) {
			return nil, nil, fmt.Errorf("tensors used as indices must be long, int, byte or bool tensors, got %s", t.DType)
		}
		idx = append(idx, t)
	}
	if len(idx) > x.Rank() {
		return nil, nil, fmt.Errorf("too many indices for tensor of dimension %d (got %d)", x.Rank(), len(idx))
	}
	for len(idx) < x.Rank() {
		idx = append(idx, nil)
	}
	var adv []int
	var advT []*Tensor
	for d, t := range idx {
		if t != nil {
			adv = append(adv, d)
			advT = append(advT, t)
		}
	}
	if len(adv) == 0 {
		offs := make([]int64, 0, x.Numel())
		x.forEachOffset(func(o int64) { offs = append(offs, o) })
		return append([]int64{}, x.Shape...), offs, nil
	}
	bt, bshape, err := broadcastAll(advT...)
	if err != nil {
		return nil, nil, fmt.Errorf("shape mismatch: indexing tensors could not be broadcast together: %w", err)
	}
	bvals := make([][]int64, len(bt))
	for k, t := range bt {
		bvals[k] = t.Contiguous().ints()
		if !t.IsContiguous() {
			bvals[k] = t.Clone().ints()
		}
	}
	adjacent := adv[len(adv)-1]-adv[0] == len(adv)-1
	var rest []int
	for d := range idx {
		if idx[d] == nil {
			rest = append(rest, d)
		}
	}
	// Result layout: [before..., B..., after...] when adjacent, else [B..., rest...].
	var shape []int64
	var before, after []int
	if adjacent {
		for _, d := range rest {
			if d < adv[0] {
				before = append(before, d)
			} else {
				after = append(after, d)
			}
		}
	} else {
		after = rest
	}
	for _, d := range before {
		shape = append(shape, x.Shape[d])
	}
	shape = append(shape, bshape...)
	for _, d := range after {
		shape = append(shape, x.Shape[d])
	}
	nb := numel(bshape)
	offs := make([]int64, 0, numel(shape))
	var ferr error
	forEachPos(shape, func(pos []int64, _ int64) {
		if ferr != nil {
			return
		}
		off := x.Offset
		for i, d := range before {
			off += pos[i] * x.Strides[d]
		}
		b := int64(0)
		for i := range bshape {
			b = b*bshape[i] + pos[len(before)+i]
		}
		_ = nb
		for k, d := range adv {
			i, err := wrapIndex(bvals[k][b], x.Shape[d], fmt.Sprint(d))
			if err != nil {
				ferr = err
				return
			}
			off += i * x.Strides[d]
		}
		for i, d := range after {
			off += pos[len(before)+len(bshape)+i] * x.Strides[d]
		}
		offs = append(offs, off)
	})
	if ferr != nil {
		return nil, nil, ferr
	}
	return shape, offs, nil
}

func kIndex(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	indices, err := c.tensors("indices")
	if err != nil {
		return nil, err
	}
	shape, offs, err := indexPlan(x, indices)
	if err != nil {
		return nil, err
	}
	out := NewTensor(x.DType, shape...)
	for k, o := range offs {
		copyElem(out, int64(k), x, o)
	}
	return one(out), nil
}

func kIndexPut(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	indices, err := c.tensors("indices")
	if err != nil {
		return nil, err
	}
	values, err := c.tensor("values")
	if err != nil {
		return nil, err
	}
	acc, err := c.bool("accumulate")
	if err != nil {
		return nil, err
	}
	out := x.Clone()
	shape, offs, err := indexPlan(out, indices)
	if err != nil {
		return nil, err
	}
	// Values are converted to self's dtype (eager index_put_ rejects a
	// mismatch; programs that passes rewrite may carry one).
	v, err := expandTo(values.To(x.DType), shape)
	if err != nil {
		return nil, fmt.Errorf("shape mismatch: value tensor of shape %v cannot be broadcast to indexing result of shape %v", values.Shape, shape)
	}
	vc := v.Clone()
	for k, o := range offs {
		switch {
		case !acc:
			copyElem(out, o, vc, int64(k))
		case out.st.f != nil:
			out.st.f[o] = roundFloat(out.DType, out.st.f[o]+vc.st.f[k])
		case out.st.c != nil:
			out.st.c[o] += vc.st.c[k]
		default:
			out.st.i[o] = wrapInt(out.DType, out.st.i[o]+vc.st.i[k])
		}
	}
	return one(out), nil
}

func kIndexAdd(isCopy bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		d, err := c.dim("dim", x.Rank())
		if err != nil {
			return nil, err
		}
		index, err := c.tensor("index")
		if err != nil {
			return nil, err
		}
		src, err := c.tensor("source")
		if err != nil {
			return nil, err
		}
		alpha := scalar{kind: ir.Int64, i: 1}
		if c.has("alpha") {
			if alpha, err = c.scalar("alpha"); err != nil {
				return nil, err
			}
		}
		out := x.Clone()
		if x.Rank() == 0 {
			out, _ = viewAs(out, []int64{1}, true)
			if src.Rank() == 0 {
				src, _ = viewAs(src, []int64{1}, true)
			}
		}
		iv := index.ints()
		if src.Rank() != out.Rank() || src.Shape[d] != int64(len(iv)) {
			return nil, fmt.Errorf("index_add/index_copy: source %v does not match index of %d entries along dim %d", src.Shape, len(iv), d)
		}
		for j, i := range iv {
			i, err := wrapIndex(i, out.Shape[d], fmt.Sprint(d))
			if err != nil {
				return nil, err
			}
			dst, _ := selectView(out, int64(d), i)
			s, _ := selectView(src, int64(d), int64(j))
			if isCopy {
				copyInto(dst, s)
				continue
			}
			sum, err := arithAdd(dst, s, alpha, out.DType)
			if err != nil {
				return nil, err
			}
			copyInto(dst, sum)
		}
		if x.Rank() == 0 {
			out, _ = viewAs(out, nil, true)
		}
		return one(out), nil
	}
}

// arithAdd computes a + alpha*b in dtype dt.
func arithAdd(a, b *Tensor, alpha scalar, dt ir.DType) (*Tensor, error) {
	af, ai := roundFloat(dt, alpha.float()), alpha.int()
	s := arith{
		f: func(x, y float64) float64 { return x + af*y },
		i: func(x, y int64) (int64, error) { return x + ai*y, nil },
		c: func(x, y complex128) complex128 { return x + complex(af, 0)*y },
		b: func(x, y int64) (int64, error) { return b2i(x != 0 || y != 0), nil },
	}
	return s.applyAs(a, b, dt)
}

func kEmbedding(c *call) ([]Value, error) {
	w, err := c.tensor("weight")
	if err != nil {
		return nil, err
	}
	ix, err := c.tensor("indices")
	if err != nil {
		return nil, err
	}
	if w.Rank() != 2 {
		return nil, fmt.Errorf("'weight' must be 2-D, got %d dims", w.Rank())
	}
	if !isIntDT(ix.DType) {
		return nil, fmt.Errorf("expected indices of an integer dtype, got %s", ix.DType)
	}
	iv := ix.Contiguous().ints()
	idx := make([]int64, len(iv))
	for k, i := range iv {
		if i < 0 || i >= w.Shape[0] {
			return nil, domainErrorf("embedding: index %d out of range for %d embeddings", i, w.Shape[0])
		}
		idx[k] = i
	}
	rows, err := indexSelect(w, 0, idx)
	if err != nil {
		return nil, err
	}
	return one0(viewAs(rows, append(append([]int64{}, ix.Shape...), w.Shape[1]), true))
}

// nonzero lists the coordinates of the nonzero elements, [n, rank] int64.
func nonzero(t *Tensor) *Tensor {
	var coords []int64
	var vals []bool
	switch domainOf(t.DType) {
	case domFloat:
		for _, v := range t.floats() {
			vals = append(vals, v != 0)
		}
	case domComplex:
		for _, v := range t.complexes() {
			vals = append(vals, v != 0)
		}
	default:
		for _, v := range t.ints() {
			vals = append(vals, v != 0)
		}
	}
	n := int64(0)
	forEachPos(t.Shape, func(pos []int64, k int64) {
		if vals[k] {
			coords = append(coords, pos...)
			n++
		}
	})
	return FromInt64(ir.Int64, []int64{n, int64(t.Rank())}, coords)
}

func kNonzero(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	return one(nonzero(x)), nil
}

func kSelectScatter(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	src, err := c.tensor("src")
	if err != nil {
		return nil, err
	}
	dim, err := c.int("dim")
	if err != nil {
		return nil, err
	}
	i, err := c.int("index")
	if err != nil {
		return nil, err
	}
	out := x.Clone()
	dst, err := selectView(out, dim, i)
	if err != nil {
		return nil, err
	}
	if err := writeExact(dst, src); err != nil {
		return nil, err
	}
	return one(out), nil
}

// writeExact copies src into dst, whose shapes must agree.
func writeExact(dst, src *Tensor) error {
	if !sameShape(dst.Shape, src.Shape) {
		return fmt.Errorf("expected src to have a size equal to the slice of self: %v, got %v", dst.Shape, src.Shape)
	}
	copyInto(dst, src)
	return nil
}

func kSliceScatter(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	src, err := c.tensor("src")
	if err != nil {
		return nil, err
	}
	dim, err := c.int("dim")
	if err != nil {
		return nil, err
	}
	start, err := optIntPtr(c, "start")
	if err != nil {
		return nil, err
	}
	end, err := optIntPtr(c, "end")
	if err != nil {
		return nil, err
	}
	step, err := c.int("step")
	if err != nil {
		return nil, err
	}
	out := x.Clone()
	dst, err := sliceView(out, dim, start, end, step)
	if err != nil {
		return nil, err
	}
	if err := writeExact(dst, src); err != nil {
		return nil, err
	}
	return one(out), nil
}

func kDiagonalScatter(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	src, err := c.tensor("src")
	if err != nil {
		return nil, err
	}
	off, err := c.int("offset")
	if err != nil {
		return nil, err
	}
	d1, err := c.int("dim1")
	if err != nil {
		return nil, err
	}
	d2, err := c.int("dim2")
	if err != nil {
		return nil, err
	}
	out := x.Clone()
	dst, err := diagonalView(out, off, d1, d2)
	if err != nil {
		return nil, err
	}
	if err := writeExact(dst, src); err != nil {
		return nil, err
	}
	return one(out), nil
}

// kEtCopyIndex is ExecuTorch's copy_to[index] = copy_from (in place, no results).
func kEtCopyIndex(c *call) ([]Value, error) {
	to, err := c.tensor("copy_to")
	if err != nil {
		return nil, err
	}
	from, err := c.tensor("copy_from")
	if err != nil {
		return nil, err
	}
	i, err := c.int("index")
	if err != nil {
		return nil, err
	}
	dst, err := selectView(to, 0, i)
	if err != nil {
		return nil, err
	}
	if err := writeExact(dst, from); err != nil {
		return nil, err
	}
	return nil, nil
}
