package interp

import (
	"fmt"
	"math"
	"sort"

	"github.com/fxport/fxport/ir"
)

// Ops that work along one dim: softmax, cumulative ops, sort and topk,
// flip, roll, glu.

// moveLast moves dim d last and makes the result contiguous; it returns the
// permuted tensor, the permutation, the number of rows and the row length.
func moveLast(t *Tensor, d int) (*Tensor, []int64, int64, int64) {
	perm := make([]int64, 0, t.Rank())
	for i := 0; i < t.Rank(); i++ {
		if i != d {
			perm = append(perm, int64(i))
		}
	}
	n := int64(1)
	if t.Rank() > 0 {
		perm = append(perm, int64(d))
		n = t.Shape[d]
	}
	p, _ := permuteView(t, perm)
	p = p.Contiguous()
	outer := int64(1)
	if n > 0 {
		outer = p.Numel() / n
	} else {
		outer = 0
	}
	return p, perm, outer, n
}

// restore undoes moveLast: r has the permuted shape.
func restore(r *Tensor, perm []int64) *Tensor {
	inv := make([]int64, len(perm))
	for i, p := range perm {
		inv[p] = int64(i)
	}
	v, _ := permuteView(r, inv)
	return v.Contiguous()
}

// dimArg reads and normalizes the named dim.
func (c *call) dim(name string, rank int) (int, error) {
	d, err := c.int(name)
	if err != nil {
		return 0, err
	}
	return normDim(d, rank)
}

func init() {
	register(kSoftmax(false, false), ir.OpAten_Softmax, ir.OpAtenSoftmaxInt)
	register(kSoftmax(true, false), ir.OpAten_LogSoftmax, ir.OpAtenLogSoftmaxInt)
	register(kSoftmax(false, true), ir.OpAten_SafeSoftmax)
	register(kCumulative(false), ir.OpAtenCumsum)
	register(kCumulative(true), ir.OpAtenCumprod)
	register(kCumExtreme(true), ir.OpAtenCummax)
	register(kCumExtreme(false), ir.OpAtenCummin)
	register(kSort(false), ir.OpAtenSort, ir.OpAtenSortStable)
	register(kSort(true), ir.OpAtenArgsort, ir.OpAtenArgsortStable)
	register(kTopk, ir.OpAtenTopk)
	register(kFlip, ir.OpAtenFlip)
	register(kRoll, ir.OpAtenRoll)
	register(kGlu, ir.OpAtenGlu)
}

func softmaxRow(in, out []float64, log, safe bool) {
	m := math.Inf(-1)
	for _, v := range in {
		if v > m || math.IsNaN(v) {
			m = v
		}
	}
	if safe && math.IsInf(m, -1) {
		for i := range out {
			out[i] = 0
		}
		return
	}
	s := 0.0
	for _, v := range in {
		s += math.Exp(v - m)
	}
	for i, v := range in {
		if log {
			out[i] = v - m - math.Log(s)
		} else {
			out[i] = math.Exp(v-m) / s
		}
	}
}

func kSoftmax(log, safe bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		d, err := c.dim("dim", x.Rank())
		if err != nil {
			return nil, err
		}
		dt := x.DType
		if c.has("half_to_float") {
			h, err := c.bool("half_to_float")
			if err != nil {
				return nil, err
			}
			if h {
				if dt != ir.Float16 && dt != ir.BFloat16 {
					return nil, fmt.Errorf("conversion from %s to float is not supported with half_to_float", dt)
				}
				dt = ir.Float32
			}
		}
		if c.has("dtype") {
			if o, ok, err := c.optDType("dtype"); err != nil {
				return nil, err
			} else if ok {
				dt = o
			}
		}
		if !isFloatDT(dt) {
			return nil, fmt.Errorf("softmax is not implemented for %s", dt)
		}
		p, perm, outer, n := moveLast(x.To(dt), d)
		in := p.floats()
		res := make([]float64, len(in))
		for r := int64(0); r < outer; r++ {
			softmaxRow(in[r*n:(r+1)*n], res[r*n:(r+1)*n], log, safe)
		}
		return one(restore(FromFloat64(dt, p.Shape, res), perm)), nil
	}
}

func kCumulative(prod bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		d, err := c.dim("dim", x.Rank())
		if err != nil {
			return nil, err
		}
		dt, err := sumDType(c, x.DType, "dtype")
		if err != nil {
			return nil, err
		}
		p, perm, outer, n := moveLast(x.To(dt), d)
		var r *Tensor
		switch domainOf(dt) {
		case domFloat:
			in := p.floats()
			out := make([]float64, len(in))
			for k := int64(0); k < outer; k++ {
				acc := 0.0
				if prod {
					acc = 1
				}
				for j := k * n; j < (k+1)*n; j++ {
					if prod {
						acc = roundFloat(dt, acc*in[j])
					} else {
						acc = roundFloat(dt, acc+in[j])
					}
					out[j] = acc
				}
			}
			r = FromFloat64(dt, p.Shape, out)
		case domInt:
			in := p.ints()
			out := make([]int64, len(in))
			for k := int64(0); k < outer; k++ {
				acc := int64(0)
				if prod {
					acc = 1
				}
				for j := k * n; j < (k+1)*n; j++ {
					if prod {
						acc = wrapInt(dt, acc*in[j])
					} else {
						acc = wrapInt(dt, acc+in[j])
					}
					out[j] = acc
				}
			}
			r = FromInt64(dt, p.Shape, out)
		default:
			return nil, fmt.Errorf("not supported for %s", dt)
		}
		return one(restore(r, perm)), nil
	}
}

func kCumExtreme(isMax bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		d, err := c.dim("dim", x.Rank())
		if err != nil {
			return nil, err
		}
		p, perm, outer, n := moveLast(x, d)
		idx := make([]int64, p.Numel())
		var vals *Tensor
		switch domainOf(x.DType) {
		case domFloat:
			in := p.floats()
			out := make([]float64, len(in))
			for k := int64(0); k < outer; k++ {
				base := k * n
				best := base
				for j := base; j < base+n; j++ {
					// torch's CPU kernel: a NaN always becomes the running
					// value (so the index is the latest NaN), and nothing
					// replaces a NaN except another NaN.
					v, b := in[j], in[best]
					if math.IsNaN(v) || (!math.IsNaN(b) && ((isMax && v >= b) || (!isMax && v <= b))) {
						best = j
					}
					out[j], idx[j] = in[best], best-base
				}
			}
			vals = FromFloat64(x.DType, p.Shape, out)
		case domInt:
			in := p.ints()
			out := make([]int64, len(in))
			for k := int64(0); k < outer; k++ {
				base := k * n
				best := base
				for j := base; j < base+n; j++ {
					if (isMax && in[j] >= in[best]) || (!isMax && in[j] <= in[best]) {
						best = j
					}
					out[j], idx[j] = in[best], best-base
				}
			}
			vals = FromInt64(x.DType, p.Shape, out)
		default:
			return nil, fmt.Errorf("not supported for %s", x.DType)
		}
		return []Value{restore(vals, perm), restore(FromInt64(ir.Int64, p.Shape, idx), perm)}, nil
	}
}

// lessF orders floats with NaN greater than everything (torch's sort order).
func lessF(a, b float64) bool {
	if math.IsNaN(a) {
		return false
	}
	return math.IsNaN(b) || a < b
}

// sortRows sorts each row of the moved-last layout stably and returns the
// permutation of each row.
func sortRows(p *Tensor, outer, n int64, descending bool) []int64 {
	idx := make([]int64, outer*n)
	var fl []float64
	var il []int64
	if domainOf(p.DType) == domFloat {
		fl = p.floats()
	} else {
		il = p.ints()
	}
	for k := int64(0); k < outer; k++ {
		row := idx[k*n : (k+1)*n]
		for j := range row {
			row[j] = int64(j)
		}
		base := k * n
		sort.SliceStable(row, func(a, b int) bool {
			i, j := base+row[a], base+row[b]
			if fl != nil {
				if descending {
					return lessF(fl[j], fl[i])
				}
				return lessF(fl[i], fl[j])
			}
			if descending {
				return il[i] > il[j]
			}
			return il[i] < il[j]
		})
	}
	return idx
}

// gatherRows picks row elements by per-row indices (k per row).
func gatherRows(p *Tensor, outer, n int64, idx []int64, k int64, shape []int64) *Tensor {
	out := NewTensor(p.DType, shape...)
	switch domainOf(p.DType) {
	case domFloat:
		in := p.floats()
		for r := int64(0); r < outer; r++ {
			for j := int64(0); j < k; j++ {
				out.st.f[r*k+j] = in[r*n+idx[r*k+j]]
			}
		}
	case domComplex:
		in := p.complexes()
		for r := int64(0); r < outer; r++ {
			for j := int64(0); j < k; j++ {
				out.st.c[r*k+j] = in[r*n+idx[r*k+j]]
			}
		}
	default:
		in := p.ints()
		for r := int64(0); r < outer; r++ {
			for j := int64(0); j < k; j++ {
				out.st.i[r*k+j] = in[r*n+idx[r*k+j]]
			}
		}
	}
	return out
}

func kSort(argOnly bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		d, err := c.dim("dim", x.Rank())
		if err != nil {
			return nil, err
		}
		desc, err := c.bool("descending")
		if err != nil {
			return nil, err
		}
		if domainOf(x.DType) == domComplex {
			return nil, fmt.Errorf("sort is not supported for complex tensors")
		}
		p, perm, outer, n := moveLast(x, d)
		idx := sortRows(p, outer, n, desc)
		it := restore(FromInt64(ir.Int64, p.Shape, idx), perm)
		if argOnly {
			return one(it), nil
		}
		vals := restore(gatherRows(p, outer, n, idx, n, p.Shape), perm)
		return []Value{vals, it}, nil
	}
}

func kTopk(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	k, err := c.int("k")
	if err != nil {
		return nil, err
	}
	d, err := c.dim("dim", x.Rank())
	if err != nil {
		return nil, err
	}
	largest, err := c.bool("largest")
	if err != nil {
		return nil, err
	}
	p, perm, outer, n := moveLast(x, d)
	if k < 0 || k > n {
		return nil, fmt.Errorf("selected index k out of range (k=%d, dim size %d)", k, n)
	}
	idx := sortRows(p, outer, n, largest)
	top := make([]int64, outer*k)
	for r := int64(0); r < outer; r++ {
		copy(top[r*k:(r+1)*k], idx[r*n:r*n+k])
	}
	shape := append([]int64{}, p.Shape...)
	if len(shape) > 0 {
		shape[len(shape)-1] = k
	}
	vals := restore(gatherRows(p, outer, n, top, k, shape), perm)
	return []Value{vals, restore(FromInt64(ir.Int64, shape, top), perm)}, nil
}

func kFlip(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	dims, err := c.ints("dims")
	if err != nil {
		return nil, err
	}
	strides := append([]int64{}, x.Strides...)
	off := x.Offset
	seen := map[int]bool{}
	for _, dd := range dims {
		d, err := normDim(dd, x.Rank())
		if err != nil {
			return nil, err
		}
		if x.Rank() == 0 {
			continue
		}
		if seen[d] {
			return nil, fmt.Errorf("flip: dim %d appears multiple times in the list of dims", d)
		}
		seen[d] = true
		if x.Shape[d] > 0 {
			off += (x.Shape[d] - 1) * strides[d]
		}
		strides[d] = -strides[d]
	}
	return one(x.view(append([]int64{}, x.Shape...), strides, off).Clone()), nil
}

// rollDim rolls t along dim d by shift (elements move to higher indices).
func rollDim(t *Tensor, d int, shift int64) (*Tensor, error) {
	n := t.Shape[d]
	if n == 0 {
		return t.Clone(), nil
	}
	shift = ((shift % n) + n) % n
	if shift == 0 {
		return t.Clone(), nil
	}
	start := n - shift
	a, err := sliceView(t, int64(d), &start, nil, 1)
	if err != nil {
		return nil, err
	}
	zero := int64(0)
	b, err := sliceView(t, int64(d), &zero, &start, 1)
	if err != nil {
		return nil, err
	}
	return catTensors([]*Tensor{a, b}, d, t.DType)
}

func kRoll(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	shifts, err := c.ints("shifts")
	if err != nil {
		return nil, err
	}
	dims, err := c.ints("dims")
	if err != nil {
		return nil, err
	}
	if len(dims) == 0 {
		if len(shifts) != 1 {
			return nil, fmt.Errorf("roll: shifts must have one element when dims is empty")
		}
		flat, err := viewAs(x, []int64{x.Numel()}, true)
		if err != nil {
			return nil, err
		}
		r, err := rollDim(flat, 0, shifts[0])
		if err != nil {
			return nil, err
		}
		return one0(viewAs(r, x.Shape, true))
	}
	if len(dims) != len(shifts) {
		return nil, fmt.Errorf("roll: shifts and dimensions must align (%d vs %d)", len(shifts), len(dims))
	}
	r := x
	for i, dd := range dims {
		d, err := normDim(dd, x.Rank())
		if err != nil {
			return nil, err
		}
		if r, err = rollDim(r, d, shifts[i]); err != nil {
			return nil, err
		}
	}
	if r == x {
		r = x.Clone()
	}
	return one(r), nil
}

func kGlu(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	d, err := c.dim("dim", x.Rank())
	if err != nil {
		return nil, err
	}
	if x.Rank() == 0 || x.Shape[d]%2 != 0 {
		return nil, fmt.Errorf("glu: halving dimension must be even, got shape %v", x.Shape)
	}
	h := x.Shape[d] / 2
	zero, end := int64(0), x.Shape[d]
	a, err := sliceView(x, int64(d), &zero, &h, 1)
	if err != nil {
		return nil, err
	}
	b, err := sliceView(x, int64(d), &h, &end, 1)
	if err != nil {
		return nil, err
	}
	if !isFloatDT(x.DType) {
		return nil, fmt.Errorf("glu is not supported for %s", x.DType)
	}
	return one0(binaryF(a, b, x.DType, func(u, v float64) float64 { return u * sigmoid(v) }))
}
