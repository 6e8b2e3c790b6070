package ir

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fxport/fxport/ir/sym"
)

// Linear algebra rules: mm/bmm/addmm/matmul/linear, einsum, grouped
// matmuls, pairwise distances.

func sameDTypes(ts ...*TensorType) error {
	for _, t := range ts[1:] {
		if t.DType != ts[0].DType {
			return fmt.Errorf("expected operands of the same dtype, got %s and %s", ts[0].DType, t.DType)
		}
	}
	return nil
}

func matmulShapes(c *InferCtx, a, b *TensorType, batch bool) ([]sym.Expr, error) {
	want := 2
	if batch {
		want = 3
	}
	if a.Rank() != want || b.Rank() != want {
		return nil, fmt.Errorf("expected %d-D operands, got %s and %s", want, a, b)
	}
	if err := checkSameDim(c, a.Shape[want-1], b.Shape[want-2], fmt.Sprintf("mat1 and mat2 shapes cannot be multiplied (%s and %s)", a, b)); err != nil {
		return nil, err
	}
	if batch {
		if err := checkSameDim(c, a.Shape[0], b.Shape[0], "batch sizes must match"); err != nil {
			return nil, err
		}
		return []sym.Expr{a.Shape[0], a.Shape[1], b.Shape[2]}, nil
	}
	return []sym.Expr{a.Shape[0], b.Shape[1]}, nil
}

// inferMm: mm(self, mat2): [n, k] x [k, m] → [n, m].
func inferMm(c *InferCtx) ([]Type, error) {
	a, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	b, err := tensorAt(c, 1)
	if err != nil {
		return nil, err
	}
	if err := sameDTypes(a, b); err != nil {
		return nil, err
	}
	shape, err := matmulShapes(c, a, b, false)
	if err != nil {
		return nil, err
	}
	return one(withShapeDType(a, shape, a.DType)), nil
}

// inferBmm: bmm(self, mat2): [b, n, k] x [b, k, m] → [b, n, m].
func inferBmm(c *InferCtx) ([]Type, error) {
	a, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	b, err := tensorAt(c, 1)
	if err != nil {
		return nil, err
	}
	if err := sameDTypes(a, b); err != nil {
		return nil, err
	}
	shape, err := matmulShapes(c, a, b, true)
	if err != nil {
		return nil, err
	}
	return one(withShapeDType(a, shape, a.DType)), nil
}

// inferAddmm: addmm(self, mat1, mat2) and baddbmm(self, batch1, batch2): the
// product's shape; self must broadcast to it.
func inferAddmm(c *InferCtx) ([]Type, error) {
	self, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	a, err := tensorAt(c, 1)
	if err != nil {
		return nil, err
	}
	b, err := tensorAt(c, 2)
	if err != nil {
		return nil, err
	}
	if err := sameDTypes(self, a, b); err != nil {
		return nil, err
	}
	shape, err := matmulShapes(c, a, b, a.Rank() == 3)
	if err != nil {
		return nil, err
	}
	bs, err := broadcastShapes(c, self.Shape, shape)
	if err != nil {
		return nil, err
	}
	if len(bs) != len(shape) {
		return nil, fmt.Errorf("self %s does not broadcast to the product shape %s", self, exprList(shape))
	}
	return one(withShapeDType(a, shape, a.DType)), nil
}

// inferMatmul: matmul/mv/dot with torch's rules: 1-D operands gain and then
// lose a dim; batch dims broadcast.
func inferMatmul(c *InferCtx) ([]Type, error) {
	a, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	b, err := tensorAt(c, 1)
	if err != nil {
		return nil, err
	}
	if err := sameDTypes(a, b); err != nil {
		return nil, err
	}
	if a.Rank() == 0 || b.Rank() == 0 {
		return nil, fmt.Errorf("both arguments to matmul need to be at least 1D, got %s and %s", a, b)
	}
	as, bs := a.Shape, b.Shape
	if len(as) == 1 {
		as = []sym.Expr{sym.Const(1), as[0]}
	}
	if len(bs) == 1 {
		bs = []sym.Expr{bs[0], sym.Const(1)}
	}
	if err := checkSameDim(c, as[len(as)-1], bs[len(bs)-2], fmt.Sprintf("shapes %s and %s cannot be multiplied", a, b)); err != nil {
		return nil, err
	}
	batch, err := broadcastShapes(c, as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		return nil, err
	}
	shape := append([]sym.Expr(nil), batch...)
	if a.Rank() > 1 {
		shape = append(shape, as[len(as)-2])
	}
	if b.Rank() > 1 {
		shape = append(shape, bs[len(bs)-1])
	}
	return one(withShapeDType(a, shape, a.DType)), nil
}

// inferLinear: linear(input [..., in], weight [out, in], bias) → [..., out].
func inferLinear(c *InferCtx) ([]Type, error) {
	x, err := c.Tensor("input")
	if err != nil {
		return nil, err
	}
	w, err := c.Tensor("weight")
	if err != nil {
		return nil, err
	}
	if err := sameDTypes(x, w); err != nil {
		return nil, err
	}
	if x.Rank() == 0 {
		return nil, fmt.Errorf("linear input must have at least one dim")
	}
	in := x.Shape[x.Rank()-1]
	shape := append([]sym.Expr(nil), x.Shape[:x.Rank()-1]...)
	switch w.Rank() {
	case 1:
		if err := checkSameDim(c, in, w.Shape[0], "linear: input features do not match the weight"); err != nil {
			return nil, err
		}
	case 2:
		if err := checkSameDim(c, in, w.Shape[1], fmt.Sprintf("mat1 and mat2 shapes cannot be multiplied (%s and %s^T)", x, w)); err != nil {
			return nil, err
		}
		shape = append(shape, w.Shape[0])
	default:
		return nil, fmt.Errorf("linear weight must be 1-D or 2-D, got rank %d", w.Rank())
	}
	if b, err := c.OptTensor("bias"); err != nil {
		return nil, err
	} else if b != nil {
		if _, err := broadcastShapes(c, b.Shape, shape); err != nil {
			return nil, fmt.Errorf("linear bias: %w", err)
		}
	}
	return one(withShapeDType(x, shape, x.DType)), nil
}

// inferEinsum: einsum(equation, tensors) with explicit or implicit output and
// "..." broadcasting.
func inferEinsum(c *InferCtx) ([]Type, error) {
	eq, err := c.Str("equation")
	if err != nil {
		return nil, err
	}
	ts, err := c.Tensors("tensors")
	if err != nil {
		return nil, err
	}
	eq = strings.ReplaceAll(eq, " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(ts) {
		return nil, fmt.Errorf("einsum(): %d operands in the equation, %d given", len(terms), len(ts))
	}
	sizes := map[rune]sym.Expr{}
	counts := map[rune]int{}
	var ellipsis []sym.Expr
	haveEllipsis := false
	for i, term := range terms {
		t := ts[i]
		if t == nil {
			return nil, fmt.Errorf("einsum(): operand %d is None", i)
		}
		pre, post, hasE := strings.Cut(term, "...")
		letters := []rune(pre + post)
		n := len(letters)
		if !hasE && n != t.Rank() || hasE && n > t.Rank() {
			return nil, fmt.Errorf("einsum(): the subscripts of operand %d (%q) do not match its %d dims", i, term, t.Rank())
		}
		ne := t.Rank() - n
		pos := 0
		for _, r := range pre {
			if err := einsumDim(c, sizes, r, t.Shape[pos]); err != nil {
				return nil, err
			}
			counts[r]++
			pos++
		}
		if hasE {
			haveEllipsis = true
			if ellipsis, err = broadcastShapes(c, ellipsis, t.Shape[pos:pos+ne]); err != nil {
				return nil, fmt.Errorf("einsum(): ellipsis dims do not broadcast: %w", err)
			}
			pos += ne
		}
		for _, r := range post {
			if err := einsumDim(c, sizes, r, t.Shape[pos]); err != nil {
				return nil, err
			}
			counts[r]++
			pos++
		}
	}
	var out []sym.Expr
	if explicit {
		pre, post, hasE := strings.Cut(rhs, "...")
		for _, r := range pre {
			d, ok := sizes[r]
			if !ok {
				return nil, fmt.Errorf("einsum(): output subscript %c does not appear in the inputs", r)
			}
			out = append(out, d)
		}
		if hasE {
			out = append(out, ellipsis...)
		}
		for _, r := range post {
			d, ok := sizes[r]
			if !ok {
				return nil, fmt.Errorf("einsum(): output subscript %c does not appear in the inputs", r)
			}
			out = append(out, d)
		}
	} else {
		if haveEllipsis {
			out = append(out, ellipsis...)
		}
		var once []rune
		for r, n := range counts {
			if n == 1 {
				once = append(once, r)
			}
		}
		sort.Slice(once, func(i, j int) bool { return once[i] < once[j] })
		for _, r := range once {
			out = append(out, sizes[r])
		}
	}
	if out == nil {
		out = []sym.Expr{}
	}
	return one(withShapeDType(ts[0], out, ts[0].DType)), nil
}

func einsumDim(c *InferCtx, sizes map[rune]sym.Expr, r rune, d sym.Expr) error {
	if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
		return fmt.Errorf("einsum(): invalid subscript %q", r)
	}
	if old, ok := sizes[r]; ok {
		b, err := broadcastDims(c, old, d)
		if err != nil {
			return fmt.Errorf("einsum(): subscript %c has sizes %s and %s", r, old, d)
		}
		sizes[r] = b
		return nil
	}
	sizes[r] = d
	return nil
}

// inferGroupedMm: _grouped_mm(self, mat2, offs, bias, out_dtype):
// 2-D x 3-D → [m, n]; 3-D x 3-D → [g, m, n]; 2-D x 2-D → [g, m, n] with g
// groups from offs; 3-D x 2-D → [m, n].
func inferGroupedMm(c *InferCtx) ([]Type, error) {
	a, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	b, err := c.Tensor("mat2")
	if err != nil {
		return nil, err
	}
	offs, err := c.OptTensor("offs")
	if err != nil {
		return nil, err
	}
	var shape []sym.Expr
	switch {
	case a.Rank() == 2 && b.Rank() == 3:
		shape = []sym.Expr{a.Shape[0], b.Shape[2]}
	case a.Rank() == 3 && b.Rank() == 3:
		shape = []sym.Expr{a.Shape[0], a.Shape[1], b.Shape[2]}
	case a.Rank() == 2 && b.Rank() == 2:
		if offs == nil || offs.Rank() != 1 {
			return nil, fmt.Errorf("2-D x 2-D grouped mm needs 1-D offs")
		}
		shape = []sym.Expr{offs.Shape[0], a.Shape[0], b.Shape[1]}
	case a.Rank() == 3 && b.Rank() == 2:
		shape = []sym.Expr{a.Shape[1], b.Shape[1]}
	default:
		return nil, fmt.Errorf("grouped mm expects 2-D or 3-D operands, got %s and %s", a, b)
	}
	dt := a.DType
	if d, ok, err := c.OptDType("out_dtype"); err != nil {
		return nil, err
	} else if ok {
		dt = d
	}
	return one(withShapeDType(a, shape, dt)), nil
}

// inferGroupedMmFallback: transformers::grouped_mm_fallback(input [S, K],
// weight [E, K, N], offs) → [S, N].
func inferGroupedMmFallback(c *InferCtx) ([]Type, error) {
	x, err := c.Tensor("input")
	if err != nil {
		return nil, err
	}
	w, err := c.Tensor("weight")
	if err != nil {
		return nil, err
	}
	if x.Rank() != 2 || w.Rank() != 3 {
		return nil, fmt.Errorf("expects a 2-D input and a 3-D weight, got %s and %s", x, w)
	}
	if err := checkSameDim(c, x.Shape[1], w.Shape[1], "input and weight inner dims"); err != nil {
		return nil, err
	}
	return one(withShapeDType(x, []sym.Expr{x.Shape[0], w.Shape[2]}, x.DType)), nil
}

// inferCdist: _cdist_forward(x1 [..., P, M], x2 [..., R, M]) → [..., P, R].
func inferCdist(c *InferCtx) ([]Type, error) {
	a, err := c.Tensor("x1")
	if err != nil {
		return nil, err
	}
	b, err := c.Tensor("x2")
	if err != nil {
		return nil, err
	}
	if a.Rank() < 2 || b.Rank() < 2 {
		return nil, fmt.Errorf("cdist only supports at least 2-D tensors, got %s and %s", a, b)
	}
	if err := checkSameDim(c, a.Shape[a.Rank()-1], b.Shape[b.Rank()-1], "x1 and x2 must have the same number of columns"); err != nil {
		return nil, err
	}
	batch, err := broadcastShapes(c, a.Shape[:a.Rank()-2], b.Shape[:b.Rank()-2])
	if err != nil {
		return nil, err
	}
	shape := append(batch, a.Shape[a.Rank()-2], b.Shape[b.Rank()-2])
	return one(withShapeDType(a, shape, a.DType)), nil
}

// inferPdist: _pdist_forward(self [N, M]) → [N*(N-1)/2].
func inferPdist(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	if t.Rank() != 2 {
		return nil, fmt.Errorf("pdist only supports 2-D tensors, got rank %d", t.Rank())
	}
	n := t.Shape[0]
	return one(withShapeDType(t, []sym.Expr{sym.FloorDiv(sym.Mul(n, sym.Sub(n, sym.Const(1))), sym.Const(2))}, t.DType)), nil
}
