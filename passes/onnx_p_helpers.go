package passes

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// Shared building blocks of the ONNX torch patches (onnx_pNN_*.go): a
// builder wrapper that keeps the first error, so a rewrite reads as the
// formula it builds, and symbolic-size arithmetic on SymInt arguments.

// tpBuilder wraps the patch's builder. Every method is a no-op after the
// first error, which err() returns.
type tpBuilder struct {
	b   *ir.Builder
	n   *ir.Node // the node being rewritten, for error context
	err error
}

func newTP(b *ir.Builder, n *ir.Node) *tpBuilder { return &tpBuilder{b: b, n: n} }

// node builds op with positional and keyword arguments.
func (t *tpBuilder) node(op ir.Op, pos []ir.Arg, kw map[string]ir.Arg) *ir.Node {
	if t.err != nil {
		return nil
	}
	nd, err := t.b.CallKw(op, pos, kw)
	if err != nil {
		t.err = fmt.Errorf("building %s: %w", op, err)
		return nil
	}
	return nd
}

// v builds a single-result op from positional arguments.
func (t *tpBuilder) v(op ir.Op, args ...ir.Arg) *ir.Value {
	return t.kw(op, args, nil)
}

// kw builds a single-result op with keyword arguments.
func (t *tpBuilder) kw(op ir.Op, pos []ir.Arg, kw map[string]ir.Arg) *ir.Value {
	nd := t.node(op, pos, kw)
	if nd == nil {
		return nil
	}
	if len(nd.Results) != 1 {
		t.err = fmt.Errorf("building %s: want one result, got %d", op, len(nd.Results))
		return nil
	}
	return nd.Result()
}

// cast converts x to dt with _to_copy, or returns x when it already has dt.
func (t *tpBuilder) cast(x *ir.Value, dt ir.DType) *ir.Value {
	if t.err != nil {
		return nil
	}
	if tt := x.Tensor(); tt != nil && tt.DType == dt {
		return x
	}
	return t.kw(tpOpToCopy, []ir.Arg{ir.ValueArg(x)}, map[string]ir.Arg{"dtype": ir.DTypeArg(dt)})
}

// dim returns the size of dim d of x as a SymInt argument: a literal when
// it is static, else a sym_size.int node.
func (t *tpBuilder) dim(x *ir.Value, d int) ir.Arg {
	if t.err != nil {
		return ir.IntArg(0)
	}
	if c, ok := x.Tensor().Shape[d].Const(); ok {
		return ir.IntArg(c)
	}
	s := t.v(tpOpSymSize, ir.ValueArg(x), ir.IntArg(int64(d)))
	if s == nil {
		return ir.IntArg(0)
	}
	return ir.ValueArg(s)
}

// shape returns the sizes of x as a SymInt[] argument.
func (t *tpBuilder) shape(x *ir.Value) ir.Arg {
	tt := x.Tensor()
	out := make([]ir.Arg, tt.Rank())
	for i := range out {
		out[i] = t.dim(x, i)
	}
	return ir.ListArg(out...)
}

// arith combines two SymInt arguments with a Python operator, folding
// literals and the identities x+0, x-0, x*1, x*0, x//1.
func (t *tpBuilder) arith(op ir.Op, a, b ir.Arg) ir.Arg {
	if t.err != nil {
		return ir.IntArg(0)
	}
	ac, aok := tpIntLit(a)
	bc, bok := tpIntLit(b)
	if aok && bok {
		r, ok := tpFold(op, ac, bc)
		if ok {
			return ir.IntArg(r)
		}
	}
	switch {
	case bok && bc == 0 && (op == tpOpPyAdd || op == tpOpPySub):
		return a
	case aok && ac == 0 && op == tpOpPyAdd:
		return b
	case bok && bc == 1 && (op == tpOpPyMul || op == tpOpPyFloorDiv):
		return a
	case aok && ac == 1 && op == tpOpPyMul:
		return b
	case (aok && ac == 0 || bok && bc == 0) && op == tpOpPyMul:
		return ir.IntArg(0)
	}
	v := t.v(op, a, b)
	if v == nil {
		return ir.IntArg(0)
	}
	return ir.ValueArg(v)
}

func (t *tpBuilder) add(a, b ir.Arg) ir.Arg { return t.arith(tpOpPyAdd, a, b) }
func (t *tpBuilder) sub(a, b ir.Arg) ir.Arg { return t.arith(tpOpPySub, a, b) }
func (t *tpBuilder) mul(a, b ir.Arg) ir.Arg { return t.arith(tpOpPyMul, a, b) }

func tpIntLit(a ir.Arg) (int64, bool) {
	if a.Kind == ir.ArgInt {
		return a.Int, true
	}
	return 0, false
}

func tpFold(op ir.Op, a, b int64) (int64, bool) {
	switch op {
	case tpOpPyAdd:
		return a + b, true
	case tpOpPySub:
		return a - b, true
	case tpOpPyMul:
		return a * b, true
	case tpOpPyFloorDiv:
		if b == 0 {
			return 0, false
		}
		q := a / b
		if (a%b != 0) && ((a < 0) != (b < 0)) {
			q--
		}
		return q, true
	case tpOpPyMod:
		if b == 0 {
			return 0, false
		}
		m := a % b
		if m != 0 && (m < 0) != (b < 0) {
			m += b
		}
		return m, true
	}
	return 0, false
}

// tpSymExpr is the symbolic value of a SymInt argument (a literal or a
// SymInt value), or false.
func tpSymExpr(a ir.Arg) (sym.Expr, bool) {
	e, err := ir.SymIntOf(a)
	if err != nil || !e.IsValid() {
		return sym.Expr{}, false
	}
	return e, true
}

// tpKnown reports whether cond is provably true for n's program.
func tpKnown(n *ir.Node, cond sym.Expr) bool {
	if c, ok := cond.Const(); ok {
		return c != 0
	}
	if n.Graph == nil || n.Graph.Program == nil || n.Graph.Program.Env == nil {
		return false
	}
	return n.Graph.Program.Env.StaticallyKnownTrue(cond)
}

// tpNormDim normalizes a possibly negative dim against rank; false when it
// is out of range.
func tpNormDim(d int64, rank int) (int, bool) {
	if d < 0 {
		d += int64(rank)
	}
	if d < 0 || d >= int64(rank) {
		return 0, false
	}
	return int(d), true
}

var (
	tpOpToCopy     = ir.MustLookupOp("aten._to_copy.default")
	tpOpSymSize    = ir.MustLookupOp("aten.sym_size.int")
	tpOpPyAdd      = ir.MustLookupOp("operator.add")
	tpOpPySub      = ir.MustLookupOp("operator.sub")
	tpOpPyMul      = ir.MustLookupOp("operator.mul")
	tpOpPyFloorDiv = ir.MustLookupOp("operator.floordiv")
	tpOpPyMod      = ir.MustLookupOp("operator.mod")
	tpOpNarrow     = ir.MustLookupOp("aten.narrow.default")
	tpOpCat        = ir.MustLookupOp("aten.cat.default")
	tpOpUnsqueeze  = ir.MustLookupOp("aten.unsqueeze.default")
	tpOpSumDim     = ir.MustLookupOp("aten.sum.dim_IntList")
	tpOpLtTensor   = ir.MustLookupOp("aten.lt.Tensor")
	tpOpLeTensor   = ir.MustLookupOp("aten.le.Tensor")
	tpOpEqTensor   = ir.MustLookupOp("aten.eq.Tensor")
	tpOpWhereSelf  = ir.MustLookupOp("aten.where.self")
	tpOpViewAsReal = ir.MustLookupOp("aten.view_as_real.default")
	tpOpViewAsCplx = ir.MustLookupOp("aten.view_as_complex.default")
	tpOpComplex    = ir.MustLookupOp("aten.complex.default")
	tpOpSelectInt  = ir.MustLookupOp("aten.select.int")
	tpOpMulTensor  = ir.MustLookupOp("aten.mul.Tensor")
	tpOpAddTensor  = ir.MustLookupOp("aten.add.Tensor")
	tpOpSubTensor  = ir.MustLookupOp("aten.sub.Tensor")
	tpOpMovedim    = ir.MustLookupOp("aten.movedim.int")
	tpOpReshape    = ir.MustLookupOp("aten.reshape.default")
	tpOpScalarTens = ir.MustLookupOp("aten.scalar_tensor.default")
	tpOpLogicalNot = ir.MustLookupOp("aten.logical_not.default")
	tpOpLogicalAnd = ir.MustLookupOp("aten.logical_and.default")
	tpOpLogicalOr  = ir.MustLookupOp("aten.logical_or.default")
	tpOpIsNaN      = ir.MustLookupOp("aten.isnan.default")
	tpOpArange     = ir.MustLookupOp("aten.arange.default")
)

// realImag splits a complex tensor into its parts (view_as_real,
// then select on the trailing pair dim).
func (t *tpBuilder) realImag(z *ir.Value) (re, im *ir.Value) {
	r := t.v(tpOpViewAsReal, ir.ValueArg(z))
	if r == nil {
		return nil, nil
	}
	re = t.v(tpOpSelectInt, ir.ValueArg(r), ir.IntArg(-1), ir.IntArg(0))
	im = t.v(tpOpSelectInt, ir.ValueArg(r), ir.IntArg(-1), ir.IntArg(1))
	return re, im
}
