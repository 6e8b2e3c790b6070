package interp

import (
	"fmt"
	"math"
	"sort"

	"github.com/fxport/fxport/ir"
)

// prelu, bucketize/searchsorted, bincount, histc, unique, fill_diagonal_
// and resize_.

func init() {
	register(kPrelu(true), ir.OpAtenPrelu)
	register(kPrelu(false), ir.OpAten_PreluKernel)
	register(kBucketize, ir.OpAtenBucketizeTensor)
	register(kSearchsorted, ir.OpAtenSearchsortedTensor)
	register(kBincount, ir.OpAtenBincount)
	register(kHistc, ir.OpAtenHistc)
	register(kUnique(true), ir.OpAtenUniqueConsecutive)
	register(kUnique(false), ir.OpAten_Unique2)
	register(kFillDiagonal, ir.OpAtenFillDiagonal_)
	register(kResize, ir.OpAtenResize_)
}

func kPrelu(channelWise bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		w, err := c.tensor("weight")
		if err != nil {
			return nil, err
		}
		if !isFloatDT(x.DType) {
			return nil, fmt.Errorf("prelu is not supported for %s", x.DType)
		}
		if channelWise && w.Numel() != 1 {
			// One weight per channel (dim 1).
			if x.Rank() < 2 || x.Shape[1] != w.Numel() {
				return nil, fmt.Errorf("mismatch of parameter numbers and input channel size: %d weights for input %v", w.Numel(), x.Shape)
			}
			shape := make([]int64, x.Rank())
			for i := range shape {
				shape[i] = 1
			}
			shape[1] = w.Numel()
			if w, err = viewAs(w.Contiguous(), shape, true); err != nil {
				return nil, err
			}
		} else if channelWise {
			w, _ = viewAs(w.Contiguous(), nil, true)
		}
		return one0(binaryF(x, w, x.DType, func(v, a float64) float64 {
			if v > 0 {
				return v
			}
			return a * v
		}))
	}
}

// checkSorted rejects boundaries that are not sorted along the last dim:
// bucketize and searchsorted are undefined on them.
func checkSorted(vals []float64, m int64) error {
	for i := 1; i < len(vals); i++ {
		if int64(i)%m != 0 && lessF(vals[i], vals[i-1]) {
			return domainErrorf("boundaries must be sorted in ascending order (element %d)", i)
		}
	}
	return nil
}

// searchRow finds the insertion point of v in sorted row (left: first
// element >= v; right: first element > v). NaN sorts last.
func searchRow(row []float64, v float64, right bool) int64 {
	return int64(sort.Search(len(row), func(i int) bool {
		if right {
			return lessF(v, row[i])
		}
		return !lessF(row[i], v)
	}))
}

func bucketOut(c *call, shape []int64, vals []int64) (*Tensor, error) {
	i32, err := c.bool("out_int32")
	if err != nil {
		return nil, err
	}
	dt := ir.Int64
	if i32 {
		dt = ir.Int32
	}
	return FromInt64(dt, shape, vals), nil
}

func kBucketize(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	b, err := c.tensor("boundaries")
	if err != nil {
		return nil, err
	}
	right, err := c.bool("right")
	if err != nil {
		return nil, err
	}
	if b.Rank() != 1 {
		return nil, fmt.Errorf("boundaries tensor must be 1 dimension, but got dim(%d)", b.Rank())
	}
	bv := b.Float64s()
	if err := checkSorted(bv, max(int64(len(bv)), 1)); err != nil {
		return nil, err
	}
	xv := x.Float64s()
	out := make([]int64, len(xv))
	for i, v := range xv {
		out[i] = searchRow(bv, v, right)
	}
	return one0(bucketOut(c, x.Shape, out))
}

func kSearchsorted(c *call) ([]Value, error) {
	seq, err := c.tensor("sorted_sequence")
	if err != nil {
		return nil, err
	}
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	right, err := c.bool("right")
	if err != nil {
		return nil, err
	}
	if side, ok, err := c.optStr("side"); err != nil {
		return nil, err
	} else if ok {
		if side != "left" && side != "right" {
			return nil, fmt.Errorf("side can only be 'left' or 'right', got %q", side)
		}
		if side == "left" && right {
			return nil, fmt.Errorf("side and right can't be set to opposites")
		}
		right = side == "right"
	}
	sorter, err := c.optTensor("sorter")
	if err != nil {
		return nil, err
	}
	if seq.Rank() == 0 {
		return nil, fmt.Errorf("sorted_sequence must have at least one dim")
	}
	m := seq.Shape[seq.Rank()-1]
	sv := seq.Float64s()
	if sorter != nil {
		order := sorter.ints()
		if int64(len(order)) != int64(len(sv)) {
			return nil, fmt.Errorf("sorter must have the same shape as sorted_sequence")
		}
		perm := make([]float64, len(sv))
		for i := range sv {
			row := int64(i) / m
			perm[i] = sv[row*m+order[i]]
		}
		sv = perm
	}
	if err := checkSorted(sv, max(m, 1)); err != nil {
		return nil, err
	}
	xv := x.Float64s()
	out := make([]int64, len(xv))
	if seq.Rank() == 1 {
		for i, v := range xv {
			out[i] = searchRow(sv, v, right)
		}
	} else {
		if x.Rank() != seq.Rank() || !sameShape(x.Shape[:x.Rank()-1], seq.Shape[:seq.Rank()-1]) {
			return nil, fmt.Errorf("boundaries %v and input %v must agree on all but the last dim", seq.Shape, x.Shape)
		}
		k := x.Shape[x.Rank()-1]
		for i, v := range xv {
			row := int64(i) / max(k, 1)
			out[i] = searchRow(sv[row*m:(row+1)*m], v, right)
		}
	}
	return one0(bucketOut(c, x.Shape, out))
}

func kBincount(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	w, err := c.optTensor("weights")
	if err != nil {
		return nil, err
	}
	minLen, err := c.int("minlength")
	if err != nil {
		return nil, err
	}
	if x.Rank() != 1 || !isIntDT(x.DType) {
		return nil, fmt.Errorf("bincount only supports 1-d non-negative integral inputs")
	}
	xv := x.ints()
	n := minLen
	for _, v := range xv {
		if v < 0 {
			return nil, domainErrorf("bincount only supports 1-d non-negative integral inputs")
		}
		n = max(n, v+1)
	}
	if w == nil {
		counts := make([]int64, n)
		for _, v := range xv {
			counts[v]++
		}
		return one(FromInt64(ir.Int64, []int64{n}, counts)), nil
	}
	if w.Numel() != int64(len(xv)) {
		return nil, fmt.Errorf("weights should be 1-d and have the same length as input")
	}
	wv := w.Float64s()
	sums := make([]float64, n)
	for i, v := range xv {
		sums[v] += wv[i]
	}
	dt := ir.Float64
	if d, ok := c.declaredDType(0); ok && isFloatDT(d) {
		dt = d
	} else if w.DType == ir.Float32 {
		dt = ir.Float32
	}
	return one(FromFloat64(dt, []int64{n}, sums)), nil
}

func kHistc(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	bins, err := c.int("bins")
	if err != nil {
		return nil, err
	}
	p, err := c.floats("min", "max")
	if err != nil {
		return nil, err
	}
	if bins <= 0 {
		return nil, fmt.Errorf("bins must be > 0, got %d", bins)
	}
	if domainOf(x.DType) == domComplex {
		return nil, fmt.Errorf("histc is not supported for %s", x.DType)
	}
	// Integer inputs are binned as floats (torch's CPU kernel takes floats
	// only; the result keeps the input's dtype, as on other devices).
	lo, hi := p[0], p[1]
	xv := x.Float64s()
	if lo == hi && len(xv) > 0 {
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, v := range xv {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if lo == hi {
		lo, hi = lo-1, hi+1
	}
	if lo > hi {
		return nil, fmt.Errorf("max must be larger than min")
	}
	counts := make([]float64, bins)
	for _, v := range xv {
		if v < lo || v > hi || math.IsNaN(v) {
			continue
		}
		b := int64((v - lo) * float64(bins) / (hi - lo))
		if b == bins {
			b--
		}
		counts[b]++
	}
	return one(FromFloat64(x.DType, []int64{bins}, counts)), nil
}

// kUnique implements unique_consecutive (without dim) and _unique2 (sorted).
func kUnique(consecutive bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		inv, err := c.bool("return_inverse")
		if err != nil {
			return nil, err
		}
		cnt, err := c.bool("return_counts")
		if err != nil {
			return nil, err
		}
		if consecutive {
			if _, has, err := c.optInt("dim"); err != nil {
				return nil, err
			} else if has {
				return nil, fmt.Errorf("unique_consecutive with a dim is not supported by the interpreter")
			}
		}
		vals := x.Float64s()
		order := make([]int, len(vals))
		for i := range order {
			order[i] = i
		}
		if !consecutive {
			sort.SliceStable(order, func(a, b int) bool { return lessF(vals[order[a]], vals[order[b]]) })
		}
		var uniq []float64
		var counts []int64
		inverse := make([]int64, len(vals))
		for k, i := range order {
			v := vals[i]
			if k == 0 || !(v == uniq[len(uniq)-1] || (math.IsNaN(v) && math.IsNaN(uniq[len(uniq)-1]))) {
				uniq = append(uniq, v)
				counts = append(counts, 0)
			}
			counts[len(counts)-1]++
			inverse[i] = int64(len(uniq) - 1)
		}
		out := FromFloat64(x.DType, []int64{int64(len(uniq))}, uniq)
		invT := NewTensor(ir.Int64, 0)
		if inv {
			invT = FromInt64(ir.Int64, x.Shape, inverse)
		}
		cntT := NewTensor(ir.Int64, 0)
		if cnt {
			cntT = FromInt64(ir.Int64, []int64{int64(len(counts))}, counts)
		}
		return []Value{out, invT, cntT}, nil
	}
}

// kFillDiagonal fills the main diagonal in place (wrapping for tall
// matrices when asked).
func kFillDiagonal(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	s, err := c.scalar("fill_value")
	if err != nil {
		return nil, err
	}
	wrap, err := c.bool("wrap")
	if err != nil {
		return nil, err
	}
	if x.Rank() < 2 {
		return nil, fmt.Errorf("dimensions must larger than 1")
	}
	if x.Rank() > 2 {
		for _, d := range x.Shape {
			if d != x.Shape[0] {
				return nil, fmt.Errorf("all dimensions of input must be of equal length")
			}
		}
	}
	v := s.as(x.DType)
	n := x.Shape[0]
	for _, d := range x.Shape {
		n = min(n, d)
	}
	if x.Rank() == 2 {
		rows, cols := x.Shape[0], x.Shape[1]
		total, limit := rows*cols, min(rows, cols)
		for k := int64(0); ; k++ {
			p := k * (cols + 1)
			if p >= total || (!wrap && k >= limit) {
				break
			}
			copyElem(x, x.Offset+(p/cols)*x.Strides[0]+(p%cols)*x.Strides[1], v, v.Offset)
		}
		return one(x), nil
	}
	stride := int64(0)
	for _, st := range x.Strides {
		stride += st
	}
	for i := int64(0); i < n; i++ {
		copyElem(x, x.Offset+i*stride, v, v.Offset)
	}
	return one(x), nil
}

// kResize gives self a new shape in place; existing elements are kept in
// row-major order, new ones are zero.
func kResize(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	size, err := c.ints("size")
	if err != nil {
		return nil, err
	}
	if err := checkSize(size); err != nil {
		return nil, err
	}
	old := x.Clone()
	resizeInPlace(x, size)
	n := min(old.Numel(), x.Numel())
	switch {
	case x.st.f != nil:
		copy(x.st.f[:n], old.st.f)
	case x.st.c != nil:
		copy(x.st.c[:n], old.st.c)
	default:
		copy(x.st.i[:n], old.st.i)
	}
	return one(x), nil
}
