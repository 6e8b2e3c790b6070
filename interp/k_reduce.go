package interp

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
)

// Reductions. The reduced dims are moved last and made contiguous, so each
// output element reduces one contiguous row.

// reduceMask reads the dims to reduce: an int, a list, None or a missing
// argument (every dim). With emptyAll an empty list also means every dim.
func reduceMask(c *call, name string, rank int, emptyAll bool) ([]bool, error) {
	mask := make([]bool, rank)
	all := func() []bool {
		for i := range mask {
			mask[i] = true
		}
		return mask
	}
	if !c.has(name) {
		return all(), nil
	}
	v, err := c.arg(name)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return all(), nil
	}
	dims, err := intList(v, name)
	if err != nil {
		return nil, err
	}
	if len(dims) == 0 && emptyAll {
		return all(), nil
	}
	for _, d := range dims {
		k, err := normDim(d, rank)
		if err != nil {
			return nil, err
		}
		if rank == 0 {
			continue
		}
		if mask[k] {
			return nil, fmt.Errorf("dim %d appears multiple times in the list of dims", k)
		}
		mask[k] = true
	}
	return mask, nil
}

func (c *call) keepdim() (bool, error) {
	if !c.has("keepdim") {
		return false, nil
	}
	return c.bool("keepdim")
}

// rows lays t out with the masked dims last: it returns the permuted
// contiguous tensor, the output shape, the number of rows and their length.
func rows(t *Tensor, mask []bool, keepdim bool) (*Tensor, []int64, int64, int64) {
	var perm []int64
	var outShape []int64
	inner := int64(1)
	for i, d := range t.Shape {
		if !mask[i] {
			perm = append(perm, int64(i))
			outShape = append(outShape, d)
		} else if keepdim {
			outShape = append(outShape, 1)
		}
	}
	for i, d := range t.Shape {
		if mask[i] {
			perm = append(perm, int64(i))
			inner *= d
		}
	}
	p, _ := permuteView(t, perm)
	p = p.Contiguous()
	if outShape == nil {
		outShape = []int64{}
	}
	outer := int64(1)
	for i, d := range t.Shape {
		if !mask[i] {
			outer *= d
		}
	}
	return p, outShape, outer, inner
}

// reduceF reduces the float values of t (converted to dt) row by row.
func reduceF(t *Tensor, dt ir.DType, mask []bool, keepdim bool, f func(row []float64) float64) *Tensor {
	p, shape, outer, inner := rows(t.To(dt), mask, keepdim)
	data := p.floats()
	out := NewTensor(dt, shape...)
	for r := int64(0); r < outer; r++ {
		out.st.f[r] = roundFloat(dt, f(data[r*inner:(r+1)*inner]))
	}
	return out
}

// reduceI reduces the int values of t (converted to dt) row by row.
func reduceI(t *Tensor, dt ir.DType, mask []bool, keepdim bool, f func(row []int64) int64) *Tensor {
	p, shape, outer, inner := rows(t.To(dt), mask, keepdim)
	data := p.ints()
	out := NewTensor(dt, shape...)
	for r := int64(0); r < outer; r++ {
		out.st.i[r] = wrapInt(dt, f(data[r*inner:(r+1)*inner]))
	}
	return out
}

func sumF(row []float64) float64 {
	s := 0.0
	for _, x := range row {
		s += x
	}
	return s
}

func sumI(row []int64) int64 {
	var s int64
	for _, x := range row {
		s += x
	}
	return s
}

func init() {
	register(kSum("dim", true, "dtype", false), ir.OpAtenSumDimIntList, ir.OpAtenSum)
	register(kSum("dim", true, "dtype", true), ir.OpAtenNansum)
	register(kSum("dims", false, "output_dtype", false), ir.OpPrimsSum)
	register(kProd("dim", "dtype"), ir.OpAtenProd, ir.OpAtenProdDimInt)
	register(kProd("dims", "output_dtype"), ir.OpPrimsProd)
	register(kMean, ir.OpAtenMean, ir.OpAtenMeanDim)
	register(kExtreme(true, "dim", true), ir.OpAtenAmax, ir.OpAtenMax)
	register(kExtreme(false, "dim", true), ir.OpAtenAmin, ir.OpAtenMin)
	register(kExtreme(true, "dims", false), ir.OpPrimsAmax)
	register(kExtreme(false, "dims", false), ir.OpPrimsAmin)
	register(kAnyAll(true), ir.OpAtenAny, ir.OpAtenAnyDim, ir.OpAtenAnyDims)
	register(kAnyAll(false), ir.OpAtenAll, ir.OpAtenAllDim, ir.OpAtenAllDims)
	register(kIsAllAny(false), ir.OpAten_IsAllTrue)
	register(kIsAllAny(true), ir.OpAten_IsAnyTrue)
	register(kArgExtreme(true), ir.OpAtenArgmax)
	register(kArgExtreme(false), ir.OpAtenArgmin)
	register(kExtremeDim(true), ir.OpAtenMaxDim)
	register(kExtremeDim(false), ir.OpAtenMinDim)
	register(kVar(false, false), ir.OpAtenVarCorrection, ir.OpAtenVarDim, ir.OpAtenVar, ir.OpPrimsVar)
	register(kVar(true, false), ir.OpAtenStdCorrection, ir.OpAtenStdDim, ir.OpAtenStd)
	register(kVar(false, true), ir.OpAtenVarMeanCorrection)
	register(kLogsumexp, ir.OpAtenLogsumexp)
	register(kNorm("p"), ir.OpAtenNormScalar, ir.OpAtenNormScalarOptDim)
	register(kNorm("ord"), ir.OpAtenLinalgVectorNorm)
}

// sumDType is the accumulation/result dtype of sum and prod.
func sumDType(c *call, in ir.DType, dtypeArg string) (ir.DType, error) {
	if c.has(dtypeArg) {
		if d, ok, err := c.optDType(dtypeArg); err != nil {
			return 0, err
		} else if ok {
			return d, nil
		}
	}
	if domainOf(in) == domInt {
		return ir.Int64, nil
	}
	return in, nil
}

func kSum(dimArg string, emptyAll bool, dtypeArg string, nan bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor(c.argName0())
		if err != nil {
			return nil, err
		}
		mask, err := reduceMask(c, dimArg, x.Rank(), emptyAll)
		if err != nil {
			return nil, err
		}
		keep, err := c.keepdim()
		if err != nil {
			return nil, err
		}
		dt, err := sumDType(c, x.DType, dtypeArg)
		if err != nil {
			return nil, err
		}
		switch domainOf(dt) {
		case domFloat:
			f := sumF
			if nan {
				f = func(row []float64) float64 {
					s := 0.0
					for _, v := range row {
						if !math.IsNaN(v) {
							s += v
						}
					}
					return s
				}
			}
			return one(reduceF(x, dt, mask, keep, f)), nil
		case domInt:
			if dt == ir.Bool {
				return one(reduceI(x, dt, mask, keep, func(r []int64) int64 { return b2i(sumI(r) != 0) })), nil
			}
			return one(reduceI(x, dt, mask, keep, sumI)), nil
		case domComplex:
			p, shape, outer, inner := rows(x.To(dt), mask, keep)
			data := p.complexes()
			out := make([]complex128, outer)
			for r := range out {
				for _, v := range data[int64(r)*inner : int64(r+1)*inner] {
					out[r] += v
				}
			}
			return one(FromComplex128(dt, shape, out)), nil
		}
		return nil, fmt.Errorf("sum is not supported for %s", dt)
	}
}

func kProd(dimArg, dtypeArg string) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor(c.argName0())
		if err != nil {
			return nil, err
		}
		mask, err := reduceMask(c, dimArg, x.Rank(), dimArg == "dim")
		if err != nil {
			return nil, err
		}
		keep, err := c.keepdim()
		if err != nil {
			return nil, err
		}
		dt, err := sumDType(c, x.DType, dtypeArg)
		if err != nil {
			return nil, err
		}
		switch domainOf(dt) {
		case domFloat:
			return one(reduceF(x, dt, mask, keep, func(r []float64) float64 {
				p := 1.0
				for _, v := range r {
					p *= v
				}
				return p
			})), nil
		case domInt:
			return one(reduceI(x, dt, mask, keep, func(r []int64) int64 {
				p := int64(1)
				for _, v := range r {
					p *= v
				}
				return p
			})), nil
		}
		return nil, fmt.Errorf("prod is not supported for %s", dt)
	}
}

func kMean(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	mask, err := reduceMask(c, "dim", x.Rank(), true)
	if err != nil {
		return nil, err
	}
	keep, err := c.keepdim()
	if err != nil {
		return nil, err
	}
	dt := x.DType
	if d, ok, err := c.optDType("dtype"); err != nil {
		return nil, err
	} else if ok {
		dt = d
	}
	if !isFloatDT(dt) {
		return nil, fmt.Errorf("mean(): could not infer output dtype: input dtype must be floating point, got %s", dt)
	}
	return one(reduceF(x, dt, mask, keep, func(r []float64) float64 { return sumF(r) / float64(len(r)) })), nil
}

func maxF(r []float64) float64 {
	m := math.Inf(-1)
	for _, v := range r {
		if math.IsNaN(v) {
			return v
		}
		if v > m {
			m = v
		}
	}
	return m
}

func minF(r []float64) float64 {
	m := math.Inf(1)
	for _, v := range r {
		if math.IsNaN(v) {
			return v
		}
		if v < m {
			m = v
		}
	}
	return m
}

func kExtreme(isMax bool, dimArg string, emptyAll bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor(c.argName0())
		if err != nil {
			return nil, err
		}
		mask, err := reduceMask(c, dimArg, x.Rank(), emptyAll)
		if err != nil {
			return nil, err
		}
		keep, err := c.keepdim()
		if err != nil {
			return nil, err
		}
		for i, m := range mask {
			if m && x.Shape[i] == 0 {
				return nil, fmt.Errorf("cannot compute max/min over an empty dimension %d", i)
			}
		}
		if x.Numel() == 0 && x.Rank() == 0 {
			return nil, fmt.Errorf("cannot compute max/min of an empty tensor")
		}
		switch domainOf(x.DType) {
		case domFloat:
			f := minF
			if isMax {
				f = maxF
			}
			return one(reduceF(x, x.DType, mask, keep, f)), nil
		case domInt:
			return one(reduceI(x, x.DType, mask, keep, func(r []int64) int64 {
				m := r[0]
				for _, v := range r[1:] {
					if (isMax && v > m) || (!isMax && v < m) {
						m = v
					}
				}
				return m
			})), nil
		}
		return nil, fmt.Errorf("max/min is not supported for %s", x.DType)
	}
}

func kAnyAll(isAny bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		mask, err := reduceMask(c, "dim", x.Rank(), true)
		if err != nil {
			return nil, err
		}
		keep, err := c.keepdim()
		if err != nil {
			return nil, err
		}
		out := ir.Bool
		if x.DType == ir.Uint8 {
			out = ir.Uint8
		}
		return one(reduceI(x.To(ir.Bool), out, mask, keep, func(r []int64) int64 {
			for _, v := range r {
				if (v != 0) == isAny {
					return b2i(isAny)
				}
			}
			return b2i(!isAny)
		})), nil
	}
}

func kIsAllAny(isAny bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		mask := make([]bool, x.Rank())
		for i := range mask {
			mask[i] = true
		}
		return one(reduceI(x.To(ir.Bool), ir.Bool, mask, false, func(r []int64) int64 {
			for _, v := range r {
				if (v != 0) == isAny {
					return b2i(isAny)
				}
			}
			return b2i(!isAny)
		})), nil
	}
}

// argExtremeRow returns the index of the max (min) of a row; NaN counts as
// the extreme, and ties keep the first index.
func argExtremeRowF(r []float64, isMax bool) int64 {
	best := 0
	for i := 1; i < len(r); i++ {
		v, b := r[i], r[best]
		if math.IsNaN(b) {
			break
		}
		if math.IsNaN(v) || (isMax && v > b) || (!isMax && v < b) {
			best = i
		}
	}
	return int64(best)
}

func argExtremeRowI(r []int64, isMax bool) int64 {
	best := 0
	for i := 1; i < len(r); i++ {
		if (isMax && r[i] > r[best]) || (!isMax && r[i] < r[best]) {
			best = i
		}
	}
	return int64(best)
}

// argRows computes per-row extreme indices over the masked dims.
func argRows(x *Tensor, mask []bool, keep, isMax bool) (*Tensor, *Tensor, error) {
	for i, m := range mask {
		if m && x.Shape[i] == 0 {
			return nil, nil, fmt.Errorf("cannot compute argmax/argmin over an empty dimension")
		}
	}
	if x.Numel() == 0 {
		return nil, nil, fmt.Errorf("cannot compute argmax/argmin of an empty tensor")
	}
	p, shape, outer, inner := rows(x, mask, keep)
	idx := NewTensor(ir.Int64, shape...)
	vals := NewTensor(x.DType, shape...)
	switch domainOf(x.DType) {
	case domFloat:
		data := p.floats()
		for r := int64(0); r < outer; r++ {
			row := data[r*inner : (r+1)*inner]
			k := argExtremeRowF(row, isMax)
			idx.st.i[r] = k
			vals.st.f[r] = row[k]
		}
	case domInt:
		data := p.ints()
		for r := int64(0); r < outer; r++ {
			row := data[r*inner : (r+1)*inner]
			k := argExtremeRowI(row, isMax)
			idx.st.i[r] = k
			vals.st.i[r] = row[k]
		}
	default:
		return nil, nil, fmt.Errorf("not supported for %s", x.DType)
	}
	return vals, idx, nil
}

func kArgExtreme(isMax bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		keep, err := c.keepdim()
		if err != nil {
			return nil, err
		}
		dim, ok, err := c.optInt("dim")
		if err != nil {
			return nil, err
		}
		if !ok {
			// Over the flattened tensor; keepdim keeps every dim as 1.
			flat, err := viewAs(x, []int64{x.Numel()}, true)
			if err != nil {
				return nil, err
			}
			_, idx, err := argRows(flat, []bool{true}, false, isMax)
			if err != nil {
				return nil, err
			}
			if keep {
				ones := make([]int64, x.Rank())
				for i := range ones {
					ones[i] = 1
				}
				return one0(viewAs(idx, ones, true))
			}
			return one(idx), nil
		}
		mask := make([]bool, x.Rank())
		d, err := normDim(dim, x.Rank())
		if err != nil {
			return nil, err
		}
		if x.Rank() > 0 {
			mask[d] = true
		}
		_, idx, err := argRows(x, mask, keep, isMax)
		if err != nil {
			return nil, err
		}
		return one(idx), nil
	}
}

func kExtremeDim(isMax bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		keep, err := c.keepdim()
		if err != nil {
			return nil, err
		}
		dim, err := c.int("dim")
		if err != nil {
			return nil, err
		}
		d, err := normDim(dim, x.Rank())
		if err != nil {
			return nil, err
		}
		mask := make([]bool, x.Rank())
		if x.Rank() > 0 {
			mask[d] = true
		}
		vals, idx, err := argRows(x, mask, keep, isMax)
		if err != nil {
			return nil, err
		}
		return []Value{vals, idx}, nil
	}
}

// correction reads var/std's correction from whichever form the overload has.
func correction(c *call) (float64, error) {
	switch {
	case c.has("correction"):
		s, ok, err := c.optScalar("correction")
		if err != nil {
			return 0, err
		}
		if !ok {
			return 1, nil
		}
		return s.float(), nil
	case c.has("unbiased"):
		u, err := c.optBool("unbiased", true)
		if err != nil {
			return 0, err
		}
		if u {
			return 1, nil
		}
		return 0, nil
	}
	return 1, nil
}

func varRow(r []float64, corr float64) (variance, mean float64) {
	n := float64(len(r))
	mean = sumF(r) / n
	m2 := 0.0
	for _, v := range r {
		d := v - mean
		m2 += d * d
	}
	return m2 / math.Max(0, n-corr), mean
}

func kVar(std, withMean bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor(c.argName0())
		if err != nil {
			return nil, err
		}
		dimArg := "dim"
		emptyAll := true
		if !c.has("dim") && c.has("dims") {
			dimArg, emptyAll = "dims", false
		}
		mask, err := reduceMask(c, dimArg, x.Rank(), emptyAll)
		if err != nil {
			return nil, err
		}
		keep, err := c.keepdim()
		if err != nil {
			return nil, err
		}
		corr, err := correction(c)
		if err != nil {
			return nil, err
		}
		dt := x.DType
		if c.has("output_dtype") {
			if d, ok, err := c.optDType("output_dtype"); err != nil {
				return nil, err
			} else if ok {
				dt = d
			}
		}
		if !isFloatDT(dt) {
			return nil, fmt.Errorf("std and var only support floating point dtypes, got %s", dt)
		}
		v := reduceF(x, dt, mask, keep, func(r []float64) float64 {
			s, _ := varRow(r, corr)
			if std {
				return math.Sqrt(s)
			}
			return s
		})
		if !withMean {
			return one(v), nil
		}
		m := reduceF(x, dt, mask, keep, func(r []float64) float64 { return sumF(r) / float64(len(r)) })
		return []Value{v, m}, nil
	}
}

func kLogsumexp(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	mask, err := reduceMask(c, "dim", x.Rank(), true)
	if err != nil {
		return nil, err
	}
	keep, err := c.keepdim()
	if err != nil {
		return nil, err
	}
	dt := toFloatDType(x.DType)
	return one(reduceF(x, dt, mask, keep, logSumExp)), nil
}

func logSumExp(r []float64) float64 {
	m := math.Inf(-1)
	for _, v := range r {
		if math.IsNaN(v) {
			return v
		}
		m = math.Max(m, v)
	}
	if math.IsInf(m, 0) {
		// All -inf gives -inf; any +inf gives +inf.
		return m
	}
	s := 0.0
	for _, v := range r {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

func pNorm(r []float64, p float64) float64 {
	switch {
	case math.IsInf(p, 1):
		m := 0.0
		for _, v := range r {
			if math.IsNaN(v) {
				return v
			}
			m = math.Max(m, math.Abs(v))
		}
		return m
	case math.IsInf(p, -1):
		m := math.Inf(1)
		for _, v := range r {
			if math.IsNaN(v) {
				return v
			}
			m = math.Min(m, math.Abs(v))
		}
		return m
	case p == 0:
		n := 0.0
		for _, v := range r {
			if v != 0 {
				n++
			}
		}
		return n
	case p == 1:
		s := 0.0
		for _, v := range r {
			s += math.Abs(v)
		}
		return s
	case p == 2:
		s := 0.0
		for _, v := range r {
			s += v * v
		}
		return math.Sqrt(s)
	}
	s := 0.0
	for _, v := range r {
		s += math.Pow(math.Abs(v), p)
	}
	return math.Pow(s, 1/p)
}

func kNorm(pArg string) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		p := 2.0
		if s, ok, err := c.optScalar(pArg); err != nil {
			return nil, err
		} else if ok {
			p = s.float()
		}
		mask, err := reduceMask(c, "dim", x.Rank(), true)
		if err != nil {
			return nil, err
		}
		keep, err := c.keepdim()
		if err != nil {
			return nil, err
		}
		dt := toFloatDType(x.DType).ToReal()
		if c.has("dtype") {
			if d, ok, err := c.optDType("dtype"); err != nil {
				return nil, err
			} else if ok {
				dt = d.ToReal()
			}
		}
		if !isFloatDT(dt) {
			return nil, fmt.Errorf("norm is not supported for %s", dt)
		}
		src := x
		if domainOf(x.DType) == domComplex {
			src = unaryF(absComplex(x), dt, func(v float64) float64 { return v })
		}
		return one(reduceF(src, dt, mask, keep, func(r []float64) float64 { return pNorm(r, p) })), nil
	}
}

// absComplex returns |x| of a complex tensor as float64.
func absComplex(x *Tensor) *Tensor {
	vals := x.complexes()
	out := make([]float64, len(vals))
	for i, v := range vals {
		out[i] = math.Hypot(real(v), imag(v))
	}
	return FromFloat64(ir.Float64, x.Shape, out)
}
