package interp

import (
	"fmt"
	"strings"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/fxport/fxport/ir"
)

// Matrix products run through gonum's BLAS in float64 (results rounded to
// the dtype once); integer products use exact int64 loops.

func init() {
	register(kMm, ir.OpAtenMm)
	register(kBmm, ir.OpAtenBmm)
	register(kAddmm, ir.OpAtenAddmm)
	register(kBaddbmm, ir.OpAtenBaddbmm)
	register(kMatmul("self", "other"), ir.OpAtenMatmul)
	register(kMatmul("self", "vec"), ir.OpAtenMv)
	register(kMatmul("self", "tensor"), ir.OpAtenDot)
	register(kLinear, ir.OpAtenLinear)
	register(kEinsum, ir.OpAtenEinsum)
	register(kCdist, ir.OpAten_CdistForward)
	register(kPdist, ir.OpAten_PdistForward)
}

// gemmF computes C[m×n] = A[m×k] · B[k×n] (row-major).
func gemmF(a, b []float64, m, k, n int) []float64 {
	c := make([]float64, m*n)
	if m == 0 || n == 0 || k == 0 {
		return c
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
		blas64.General{Rows: m, Cols: k, Stride: k, Data: a},
		blas64.General{Rows: k, Cols: n, Stride: n, Data: b},
		0, blas64.General{Rows: m, Cols: n, Stride: n, Data: c})
	return c
}

func gemmI(a, b []int64, m, k, n int) []int64 {
	c := make([]int64, m*n)
	for i := 0; i < m; i++ {
		for p := 0; p < k; p++ {
			av := a[i*k+p]
			if av == 0 {
				continue
			}
			row := b[p*n : (p+1)*n]
			out := c[i*n : (i+1)*n]
			for j, bv := range row {
				out[j] += av * bv
			}
		}
	}
	return c
}

// batchedMatmul multiplies a [B, m, k] by b [B, k, n] (both already
// broadcast to the same batch) into [batch..., m, n].
func batchedMatmul(a, b *Tensor, batch []int64) (*Tensor, error) {
	if a.DType != b.DType {
		return nil, fmt.Errorf("expected both matrices to have the same dtype, but got %s != %s", a.DType, b.DType)
	}
	dt := a.DType
	m, k := a.Shape[a.Rank()-2], a.Shape[a.Rank()-1]
	k2, n := b.Shape[b.Rank()-2], b.Shape[b.Rank()-1]
	if k != k2 {
		return nil, fmt.Errorf("mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)", m, k, k2, n)
	}
	nb := numel(batch)
	outShape := append(append([]int64{}, batch...), m, n)
	out := NewTensor(dt, outShape...)
	ac, bc := a.Contiguous(), b.Contiguous()
	switch domainOf(dt) {
	case domFloat:
		av, bv := ac.floats(), bc.floats()
		for i := int64(0); i < nb; i++ {
			r := gemmF(av[i*m*k:(i+1)*m*k], bv[i*k*n:(i+1)*k*n], int(m), int(k), int(n))
			for j, v := range r {
				out.st.f[i*m*n+int64(j)] = roundFloat(dt, v)
			}
		}
	case domInt:
		if dt == ir.Bool {
			return nil, fmt.Errorf("matmul is not supported for bool tensors")
		}
		av, bv := ac.ints(), bc.ints()
		for i := int64(0); i < nb; i++ {
			r := gemmI(av[i*m*k:(i+1)*m*k], bv[i*k*n:(i+1)*k*n], int(m), int(k), int(n))
			for j, v := range r {
				out.st.i[i*m*n+int64(j)] = wrapInt(dt, v)
			}
		}
	default:
		av, bv := ac.complexes(), bc.complexes()
		for i := int64(0); i < nb; i++ {
			for r := int64(0); r < m; r++ {
				for col := int64(0); col < n; col++ {
					var s complex128
					for p := int64(0); p < k; p++ {
						s += av[i*m*k+r*k+p] * bv[i*k*n+p*n+col]
					}
					out.st.c[i*m*n+r*n+col] = roundComplex(dt, s)
				}
			}
		}
	}
	return out, nil
}

// matmul is torch.matmul: 1-D operands are promoted to matrices and the
// added dim removed; batch dims broadcast.
func matmul(a, b *Tensor) (*Tensor, error) {
	if a.Rank() == 0 || b.Rank() == 0 {
		return nil, fmt.Errorf("both arguments to matmul need to be at least 1D, but they are %dD and %dD", a.Rank(), b.Rank())
	}
	aVec, bVec := a.Rank() == 1, b.Rank() == 1
	if aVec {
		a, _ = unsqueezeView(a, 0)
	}
	if bVec {
		b, _ = unsqueezeView(b, 1)
	}
	batch, err := broadcastShapes(a.Shape[:a.Rank()-2], b.Shape[:b.Rank()-2])
	if err != nil {
		return nil, err
	}
	ae, err := expandTo(a, append(append([]int64{}, batch...), a.Shape[a.Rank()-2:]...))
	if err != nil {
		return nil, err
	}
	be, err := expandTo(b, append(append([]int64{}, batch...), b.Shape[b.Rank()-2:]...))
	if err != nil {
		return nil, err
	}
	out, err := batchedMatmul(ae, be, batch)
	if err != nil {
		return nil, err
	}
	shape := append([]int64{}, batch...)
	if !aVec {
		shape = append(shape, out.Shape[out.Rank()-2])
	}
	if !bVec {
		shape = append(shape, out.Shape[out.Rank()-1])
	}
	return viewAs(out, shape, true)
}

func kMm(c *call) ([]Value, error) {
	a, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	b, err := c.tensor("mat2")
	if err != nil {
		return nil, err
	}
	if a.Rank() != 2 || b.Rank() != 2 {
		return nil, fmt.Errorf("mm expects 2-D matrices, got %dD and %dD", a.Rank(), b.Rank())
	}
	return one0(batchedMatmul(a, b, nil))
}

func kBmm(c *call) ([]Value, error) {
	a, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	b, err := c.tensor("mat2")
	if err != nil {
		return nil, err
	}
	if a.Rank() != 3 || b.Rank() != 3 || a.Shape[0] != b.Shape[0] {
		return nil, fmt.Errorf("bmm expects 3-D tensors with the same batch size, got %v and %v", a.Shape, b.Shape)
	}
	return one0(batchedMatmul(a, b, a.Shape[:1]))
}

func kMatmul(lhs, rhs string) kernel {
	return func(c *call) ([]Value, error) {
		a, err := c.tensor(lhs)
		if err != nil {
			return nil, err
		}
		b, err := c.tensor(rhs)
		if err != nil {
			return nil, err
		}
		return one0(matmul(a, b))
	}
}

// addScaled computes beta*self + alpha*prod, broadcasting self; beta == 0
// ignores self entirely (NaNs included), as torch does.
func addScaled(self, prod *Tensor, beta, alpha scalar) (*Tensor, error) {
	dt := prod.DType
	if self.DType != dt {
		return nil, fmt.Errorf("self and mat2 must have the same dtype, but got %s and %s", self.DType, dt)
	}
	bf, af := roundFloat(dt, beta.float()), roundFloat(dt, alpha.float())
	bi, ai := beta.int(), alpha.int()
	s := arith{
		f: func(x, y float64) float64 {
			if bf == 0 {
				return af * y
			}
			return bf*x + af*y
		},
		i: func(x, y int64) (int64, error) { return bi*x + ai*y, nil },
	}
	sb, err := expandTo(self, prod.Shape)
	if err != nil {
		return nil, err
	}
	return s.applyAs(sb, prod, dt)
}

func betaAlpha(c *call) (scalar, scalar, error) {
	b, err := c.scalar("beta")
	if err != nil {
		return scalar{}, scalar{}, err
	}
	a, err := c.scalar("alpha")
	return b, a, err
}

func kAddmm(c *call) ([]Value, error) {
	self, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	m1, err := c.tensor("mat1")
	if err != nil {
		return nil, err
	}
	m2, err := c.tensor("mat2")
	if err != nil {
		return nil, err
	}
	if m1.Rank() != 2 || m2.Rank() != 2 {
		return nil, fmt.Errorf("addmm expects 2-D matrices, got %dD and %dD", m1.Rank(), m2.Rank())
	}
	beta, alpha, err := betaAlpha(c)
	if err != nil {
		return nil, err
	}
	prod, err := batchedMatmul(m1, m2, nil)
	if err != nil {
		return nil, err
	}
	return one0(addScaled(self, prod, beta, alpha))
}

func kBaddbmm(c *call) ([]Value, error) {
	self, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	b1, err := c.tensor("batch1")
	if err != nil {
		return nil, err
	}
	b2, err := c.tensor("batch2")
	if err != nil {
		return nil, err
	}
	if b1.Rank() != 3 || b2.Rank() != 3 || b1.Shape[0] != b2.Shape[0] {
		return nil, fmt.Errorf("baddbmm expects 3-D batches of one size, got %v and %v", b1.Shape, b2.Shape)
	}
	beta, alpha, err := betaAlpha(c)
	if err != nil {
		return nil, err
	}
	prod, err := batchedMatmul(b1, b2, b1.Shape[:1])
	if err != nil {
		return nil, err
	}
	return one0(addScaled(self, prod, beta, alpha))
}

func kLinear(c *call) ([]Value, error) {
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	w, err := c.tensor("weight")
	if err != nil {
		return nil, err
	}
	bias, err := c.optTensor("bias")
	if err != nil {
		return nil, err
	}
	if w.Rank() > 2 {
		return nil, fmt.Errorf("linear weight must be 1-D or 2-D, got %dD", w.Rank())
	}
	wt := w
	if w.Rank() == 2 {
		wt, _ = transposeView(w, 0, 1)
	}
	out, err := matmul(x, wt)
	if err != nil {
		return nil, err
	}
	if bias == nil {
		return one(out), nil
	}
	return one0(arith{f: func(a, b float64) float64 { return a + b }, i: func(a, b int64) (int64, error) { return a + b, nil }}.applyAs(out, bias, out.DType))
}

// kEinsum evaluates an einsum equation by direct summation over every
// index (with '...' standing for the broadcast leading dims).
func kEinsum(c *call) ([]Value, error) {
	eq, err := c.str("equation")
	if err != nil {
		return nil, err
	}
	ts, err := c.tensors("tensors")
	if err != nil {
		return nil, err
	}
	return one0(einsum(eq, ts))
}

func einsum(eq string, ts []*Tensor) (*Tensor, error) {
	eq = strings.ReplaceAll(eq, " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	ins := strings.Split(lhs, ",")
	if len(ins) != len(ts) {
		return nil, fmt.Errorf("einsum(): %d operands in the equation, %d tensors given", len(ins), len(ts))
	}
	dt, err := promoteTensors(ts)
	if err != nil {
		return nil, err
	}
	// Expand '...' into upper-case placeholder letters per operand.
	ellRank := 0
	for i, s := range ins {
		if strings.Contains(s, "...") {
			ellRank = max(ellRank, ts[i].Rank()-(len(s)-3))
		}
	}
	ell := ""
	for i := 0; i < ellRank; i++ {
		ell += string(rune('A' + i))
	}
	sizes := map[rune]int64{}
	subs := make([][]rune, len(ins))
	for i, s := range ins {
		if strings.Contains(s, "...") {
			k := ts[i].Rank() - (len(s) - 3)
			s = strings.Replace(s, "...", ell[ellRank-k:], 1)
		}
		subs[i] = []rune(s)
		if len(subs[i]) != ts[i].Rank() {
			return nil, fmt.Errorf("einsum(): the number of subscripts in %q does not match the number of dimensions (%d) of operand %d", s, ts[i].Rank(), i)
		}
		for k, r := range subs[i] {
			d := ts[i].Shape[k]
			if old, ok := sizes[r]; ok && old != d {
				switch {
				case old == 1:
					sizes[r] = d
				case d == 1:
				default:
					return nil, fmt.Errorf("einsum(): subscript %c has size %d for operand %d which does not broadcast with previously seen size %d", r, d, i, old)
				}
			} else if !ok {
				sizes[r] = d
			}
		}
	}
	var out []rune
	if explicit {
		rhs = strings.Replace(rhs, "...", ell, 1)
		out = []rune(rhs)
	} else {
		count := map[rune]int{}
		for _, s := range subs {
			for _, r := range s {
				count[r]++
			}
		}
		out = []rune(ell)
		for r := 'a'; r <= 'z'; r++ {
			if count[r] == 1 {
				out = append(out, r)
			}
		}
	}
	var all []rune
	seen := map[rune]bool{}
	for _, r := range out {
		if _, ok := sizes[r]; !ok {
			return nil, fmt.Errorf("einsum(): output subscript %c does not appear in the inputs", r)
		}
		all, seen[r] = append(all, r), true
	}
	for _, s := range subs {
		for _, r := range s {
			if !seen[r] {
				all, seen[r] = append(all, r), true
			}
		}
	}
	shape := make([]int64, len(all))
	for i, r := range all {
		shape[i] = sizes[r]
	}
	pos := map[rune]int{}
	for i, r := range all {
		pos[r] = i
	}
	vals := make([][]float64, len(ts))
	strides := make([][]int64, len(ts))
	for i, t := range ts {
		ct := t.To(ir.Float64).Contiguous()
		vals[i] = ct.floats()
		st := contiguousStrides(ct.Shape)
		strides[i] = make([]int64, len(all))
		for k, r := range subs[i] {
			if ct.Shape[k] != 1 {
				strides[i][pos[r]] += st[k]
			}
		}
	}
	outShape := shape[:len(out)]
	res := make([]float64, numel(outShape))
	inner := numel(shape[len(out):])
	forEachPos(shape, func(p []int64, k int64) {
		prod := 1.0
		for i := range ts {
			off := int64(0)
			for d, x := range p {
				off += x * strides[i][d]
			}
			prod *= vals[i][off]
		}
		res[k/inner] += prod
	})
	return FromFloat64(dt, append([]int64{}, outShape...), res), nil
}

func kCdist(c *call) ([]Value, error) {
	x1, err := c.tensor("x1")
	if err != nil {
		return nil, err
	}
	x2, err := c.tensor("x2")
	if err != nil {
		return nil, err
	}
	p, err := c.float("p")
	if err != nil {
		return nil, err
	}
	if x1.Rank() < 2 || x2.Rank() < 2 || x1.Shape[x1.Rank()-1] != x2.Shape[x2.Rank()-1] {
		return nil, fmt.Errorf("cdist expects inputs of shape [..., P, M] and [..., R, M], got %v and %v", x1.Shape, x2.Shape)
	}
	batch, err := broadcastShapes(x1.Shape[:x1.Rank()-2], x2.Shape[:x2.Rank()-2])
	if err != nil {
		return nil, err
	}
	pn, m := x1.Shape[x1.Rank()-2], x1.Shape[x1.Rank()-1]
	rn := x2.Shape[x2.Rank()-2]
	a, err := expandTo(x1, append(append([]int64{}, batch...), pn, m))
	if err != nil {
		return nil, err
	}
	b, err := expandTo(x2, append(append([]int64{}, batch...), rn, m))
	if err != nil {
		return nil, err
	}
	av, bv := a.Clone().floats(), b.Clone().floats()
	nb := numel(batch)
	res := make([]float64, nb*pn*rn)
	diff := make([]float64, m)
	for i := int64(0); i < nb; i++ {
		for r := int64(0); r < pn; r++ {
			for q := int64(0); q < rn; q++ {
				for k := int64(0); k < m; k++ {
					diff[k] = av[(i*pn+r)*m+k] - bv[(i*rn+q)*m+k]
				}
				res[(i*pn+r)*rn+q] = pNorm(diff, p)
			}
		}
	}
	return one(FromFloat64(x1.DType, append(append([]int64{}, batch...), pn, rn), res)), nil
}

func kPdist(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	p, err := c.float("p")
	if err != nil {
		return nil, err
	}
	if x.Rank() != 2 {
		return nil, fmt.Errorf("pdist only supports 2D tensors, got %dD", x.Rank())
	}
	n, m := x.Shape[0], x.Shape[1]
	v := x.floats()
	var res []float64
	diff := make([]float64, m)
	for i := int64(0); i < n; i++ {
		for j := i + 1; j < n; j++ {
			for k := int64(0); k < m; k++ {
				diff[k] = v[i*m+k] - v[j*m+k]
			}
			res = append(res, pNorm(diff, p))
		}
	}
	return one(FromFloat64(x.DType, []int64{int64(len(res))}, res)), nil
}
