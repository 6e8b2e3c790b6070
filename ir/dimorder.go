package ir

import (
	"errors"
	"fmt"
	"sort"

	"github.com/fxport/fxport/ir/sym"
)

// Dim orders from strides (catalog row ET-P13, invariant
// et-dim-order-from-stride).
//
// torch describes a layout by strides, fxport's IR by a dim order
// (TensorType.DimOrder). ExecuTorch derives the dim order as the dims sorted
// by decreasing stride; with symbolic strides the Python exporter had to
// patch that sort, since comparing two SymInts that involve unbacked symbols
// raises a data-dependent guard error. DimOrderFromStrides is the one place
// fxport performs that derivation, with the semantics of the patch's second
// revision: decide each comparison from the symbol ranges when they decide
// it, and otherwise compare at substituted values.

// UnboundedStrideHint is the value an unbacked symbol with no finite upper
// bound takes when strides are compared at substituted values (2^20, as the
// Python exporter's fallback).
const UnboundedStrideHint = 1 << 20

// ErrZeroStride is wrapped by DimOrderFromStrides's error for a stride that
// is definitely 0 on a dim whose size is not definitely 1: an expanded
// (broadcast) layout, which no dim order describes.
var ErrZeroStride = errors.New("0 in strides is not supported by ExecuTorch (an expanded layout has no dim order)")

// ErrNegativeStride is wrapped by DimOrderFromStrides's error for a stride
// that is definitely negative (torch has no negative strides).
var ErrNegativeStride = errors.New("negative strides have no dim order")

// DimOrderFromStrides derives a tensor's dim order from its sizes and
// strides, as ExecuTorch's dim_order_from_stride does: the dims sorted by
// decreasing stride, ties kept in dim order (a stable sort). env holds the
// ranges, hints and unbacked flags of the symbols the expressions use; nil
// knows nothing.
//
// Each comparison of two strides is decided from the ranges when
// env.StaticallyKnownTrue can (s1*s2 > s2 when s1 >= 2); otherwise both
// strides are evaluated with every symbol substituted: a backed symbol by
// its hint, or by its upper bound when it has none; an unbacked symbol by
// its upper bound, or by UnboundedStrideHint when it is unbounded. A value
// outside the symbol's range is clamped into it, so a substitution never
// contradicts what the ranges prove and the order is a consistent total
// order. Evaluation is exact (no overflow).
//
// Dims whose size is definitely 1 carry no layout information: they are
// left out of the sort and placed canonically, each before the first
// larger-indexed dim of the sorted order (so [N, 1, H, W] in channels_last
// is [0, 2, 3, 1]). A tensor with a dim that is definitely empty (size 0)
// has no layout, and a tensor of rank < 2 only one; both get nil.
//
// The result is nil for the contiguous order (0, 1, …, rank-1), as
// TensorType.DimOrder spells it, and otherwise a permutation of the dims.
// A stride that is definitely 0 on a dim whose size is not definitely 1 is
// an error wrapping ErrZeroStride and naming the dim; a stride that only
// might be 0 (an unbacked u0 in [0, 8]) is not, and sorts by its
// substituted value. A definitely negative stride wraps ErrNegativeStride.
// Other errors: mismatched lengths, invalid expressions, and a comparison
// that neither the ranges nor the substitution can decide.
func DimOrderFromStrides(sizes, strides []sym.Expr, env *sym.Env) ([]int, error) {
	n := len(sizes)
	if len(strides) != n {
		return nil, fmt.Errorf("%d strides for %d sizes", len(strides), n)
	}
	for i := range sizes {
		if !sizes[i].IsValid() || !sizes[i].IsInt() {
			return nil, fmt.Errorf("sizes[%d] is not a valid integer expression", i)
		}
		if !strides[i].IsValid() || !strides[i].IsInt() {
			return nil, fmt.Errorf("strides[%d] is not a valid integer expression", i)
		}
	}
	if n < 2 {
		return nil, nil
	}
	one := make([]bool, n)
	var order []int
	for i := range sizes {
		if env.StaticallyKnownTrue(sym.Eq(sizes[i], sym.Const(0))) {
			return nil, nil
		}
		if one[i] = env.StaticallyKnownTrue(sym.Eq(sizes[i], sym.Const(1))); one[i] {
			continue
		}
		if env.StaticallyKnownTrue(sym.Eq(strides[i], sym.Const(0))) {
			return nil, fmt.Errorf("dim %d (size %s) has stride 0: %w", i, sizes[i], ErrZeroStride)
		}
		if env.StaticallyKnownTrue(sym.Lt(strides[i], sym.Const(0))) {
			return nil, fmt.Errorf("dim %d (size %s) has stride %s: %w", i, sizes[i], strides[i], ErrNegativeStride)
		}
		order = append(order, i)
	}
	c := strideComparer{env: env, strides: strides}
	sort.SliceStable(order, func(a, b int) bool { return c.greater(order[a], order[b]) })
	if c.err != nil {
		return nil, c.err
	}
	if sort.IntsAreSorted(order) {
		return nil, nil
	}
	for d := 0; d < n; d++ {
		if !one[d] {
			continue
		}
		at := len(order)
		for k, o := range order {
			if o > d {
				at = k
				break
			}
		}
		order = append(order[:at], append([]int{d}, order[at:]...)...)
	}
	return order, nil
}

// strideComparer orders dims by decreasing stride (see
// DimOrderFromStrides); the first comparison it cannot decide is kept in
// err.
type strideComparer struct {
	env     *sym.Env
	strides []sym.Expr
	subst   map[string]sym.Expr // symbol → substituted constant, built on first need
	values  map[int]sym.Expr    // dim → stride at the substitution
	err     error
}

// greater reports whether dim a's stride is larger than dim b's.
func (c *strideComparer) greater(a, b int) bool {
	sa, sb := c.strides[a], c.strides[b]
	if c.env.StaticallyKnownTrue(sym.Gt(sa, sb)) {
		return true
	}
	if c.env.StaticallyKnownTrue(sym.Le(sa, sb)) {
		return false
	}
	va, vb := c.value(a), c.value(b)
	switch sign(sym.Sub(va, vb)) {
	case 1:
		return true
	case 0, -1:
		return false
	}
	if c.err == nil {
		c.err = fmt.Errorf("cannot order the strides of dims %d (%s) and %d (%s): the ranges do not decide it and they do not evaluate at the substituted hints (%s and %s)", a, sa, b, sb, va, vb)
	}
	return false
}

// value is dim d's stride with every symbol substituted.
func (c *strideComparer) value(d int) sym.Expr {
	if v, ok := c.values[d]; ok {
		return v
	}
	if c.subst == nil {
		c.subst = map[string]sym.Expr{}
		c.values = map[int]sym.Expr{}
	}
	for _, s := range c.strides[d].Symbols() {
		if _, ok := c.subst[s]; !ok {
			c.subst[s] = sym.Const(substituteHint(c.env, s))
		}
	}
	v := c.strides[d].Subst(c.subst)
	c.values[d] = v
	return v
}

// substituteHint is the value symbol name takes when two strides are
// compared at substituted values: a backed symbol's hint, else its upper
// bound; for an unbacked symbol its upper bound; UnboundedStrideHint when
// that bound is infinite; clamped into the symbol's range.
func substituteHint(env *sym.Env, name string) int64 {
	r, _ := env.Range(name)
	v, ok := int64(0), false
	if !env.IsUnbacked(name) {
		v, ok = env.Hint(name)
	}
	if !ok {
		if r.Hi.IsFinite() {
			v = r.Hi.V
		} else {
			v = UnboundedStrideHint
		}
	}
	if r.Lo.IsFinite() && v < r.Lo.V {
		v = r.Lo.V
	}
	if r.Hi.IsFinite() && v > r.Hi.V {
		v = r.Hi.V
	}
	return v
}

// sign is the sign of a constant expression (of any magnitude): -1, 0 or
// 1, or 2 when e is not a constant.
func sign(e sym.Expr) int {
	if !e.IsValid() || !e.IsConst() {
		return 2
	}
	if v, ok := e.Const(); ok {
		switch {
		case v > 0:
			return 1
		case v < 0:
			return -1
		}
		return 0
	}
	// A constant beyond int64: its bounds say which side of 0 it is on.
	if (*sym.Env)(nil).Bounds(e).Lo.Cmp(sym.Finite(1)) >= 0 {
		return 1
	}
	return -1
}
