package edit

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// Builder wraps a patch's builder. Every method is a no-op after the first
// error, which Err holds, so a rewrite reads as the formula it builds.
type Builder struct {
	b   *ir.Builder
	n   *ir.Node // the node being rewritten, for error context
	Err error
}

// NewBuilder wraps b for rewriting n (n gives errors their context).
func NewBuilder(b *ir.Builder, n *ir.Node) *Builder { return &Builder{b: b, n: n} }

// node builds op with positional and keyword arguments.
func (t *Builder) node(op ir.Op, pos []ir.Arg, kw map[string]ir.Arg) *ir.Node {
	if t.Err != nil {
		return nil
	}
	nd, err := t.b.CallKw(op, pos, kw)
	if err != nil {
		t.Err = fmt.Errorf("building %s: %w", op, err)
		return nil
	}
	return nd
}

// V builds a single-result op from positional arguments.
func (t *Builder) V(op ir.Op, args ...ir.Arg) *ir.Value {
	return t.Kw(op, args, nil)
}

// Kw builds a single-result op with keyword arguments.
func (t *Builder) Kw(op ir.Op, pos []ir.Arg, kw map[string]ir.Arg) *ir.Value {
	nd := t.node(op, pos, kw)
	if nd == nil {
		return nil
	}
	if len(nd.Results) != 1 {
		t.Err = fmt.Errorf("building %s: want one result, got %d", op, len(nd.Results))
		return nil
	}
	return nd.Result()
}

// Cast converts x to dt with _to_copy, or returns x when it already has dt.
func (t *Builder) Cast(x *ir.Value, dt ir.DType) *ir.Value {
	if t.Err != nil {
		return nil
	}
	if tt := x.Tensor(); tt != nil && tt.DType == dt {
		return x
	}
	return t.Kw(tpOpToCopy, []ir.Arg{ir.ValueArg(x)}, map[string]ir.Arg{"dtype": ir.DTypeArg(dt)})
}

// Dim returns the size of dim d of x as a SymInt argument: a literal when
// it is static, else a sym_size.int node.
func (t *Builder) Dim(x *ir.Value, d int) ir.Arg {
	if t.Err != nil {
		return ir.IntArg(0)
	}
	if c, ok := x.Tensor().Shape[d].Const(); ok {
		return ir.IntArg(c)
	}
	s := t.V(tpOpSymSize, ir.ValueArg(x), ir.IntArg(int64(d)))
	if s == nil {
		return ir.IntArg(0)
	}
	return ir.ValueArg(s)
}

// Shape returns the sizes of x as a SymInt[] argument.
func (t *Builder) Shape(x *ir.Value) ir.Arg {
	tt := x.Tensor()
	out := make([]ir.Arg, tt.Rank())
	for i := range out {
		out[i] = t.Dim(x, i)
	}
	return ir.ListArg(out...)
}

// Arith combines two SymInt arguments with a Python operator, folding
// literals and the identities x+0, x-0, x*1, x*0, x//1.
func (t *Builder) Arith(op ir.Op, a, b ir.Arg) ir.Arg {
	if t.Err != nil {
		return ir.IntArg(0)
	}
	ac, aok := IntLit(a)
	bc, bok := IntLit(b)
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
	case bok && bc == 1 && (op == tpOpPyMul || op == OpPyFloorDiv):
		return a
	case aok && ac == 1 && op == tpOpPyMul:
		return b
	case (aok && ac == 0 || bok && bc == 0) && op == tpOpPyMul:
		return ir.IntArg(0)
	}
	v := t.V(op, a, b)
	if v == nil {
		return ir.IntArg(0)
	}
	return ir.ValueArg(v)
}

func (t *Builder) Add(a, b ir.Arg) ir.Arg { return t.Arith(tpOpPyAdd, a, b) }
func (t *Builder) Sub(a, b ir.Arg) ir.Arg { return t.Arith(tpOpPySub, a, b) }
func (t *Builder) Mul(a, b ir.Arg) ir.Arg { return t.Arith(tpOpPyMul, a, b) }

func IntLit(a ir.Arg) (int64, bool) {
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
	case OpPyFloorDiv:
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

// SymExpr is the symbolic value of a SymInt argument (a literal or a
// SymInt value), or false.
func SymExpr(a ir.Arg) (sym.Expr, bool) {
	e, err := ir.SymIntOf(a)
	if err != nil || !e.IsValid() {
		return sym.Expr{}, false
	}
	return e, true
}

// Known reports whether cond is provably true for n's program.
func Known(n *ir.Node, cond sym.Expr) bool {
	if c, ok := cond.Const(); ok {
		return c != 0
	}
	if n.Graph == nil || n.Graph.Program == nil || n.Graph.Program.Env == nil {
		return false
	}
	return n.Graph.Program.Env.StaticallyKnownTrue(cond)
}

// NormDimLit normalizes a possibly negative dim against rank; false when it
// is out of range.
func NormDimLit(d int64, rank int) (int, bool) {
	if d < 0 {
		d += int64(rank)
	}
	if d < 0 || d >= int64(rank) {
		return 0, false
	}
	return int(d), true
}

var (
	tpOpToCopy     = ir.OpAten_ToCopy
	tpOpSymSize    = ir.OpAtenSymSizeInt
	tpOpPyAdd      = ir.OpOperatorAdd
	tpOpPySub      = ir.OpOperatorSub
	tpOpPyMul      = ir.OpOperatorMul
	OpPyFloorDiv   = ir.OpOperatorFloordiv
	tpOpPyMod      = ir.OpOperatorMod
	OpNarrow       = ir.OpAtenNarrow
	OpCat          = ir.OpAtenCat
	OpUnsqueeze    = ir.OpAtenUnsqueeze
	OpSumDim       = ir.OpAtenSumDimIntList
	tpOpLtTensor   = ir.OpAtenLtTensor
	OpLeTensor     = ir.OpAtenLeTensor
	OpEqTensor     = ir.OpAtenEqTensor
	OpWhereSelf    = ir.OpAtenWhereSelf
	OpViewAsReal   = ir.OpAtenViewAsReal
	OpViewAsCplx   = ir.OpAtenViewAsComplex
	OpComplex      = ir.OpAtenComplex
	OpSelectInt    = ir.OpAtenSelectInt
	OpMulTensor    = ir.OpAtenMulTensor
	OpAddTensor    = ir.OpAtenAddTensor
	tpOpSubTensor  = ir.OpAtenSubTensor
	tpOpMovedim    = ir.OpAtenMovedimInt
	OpReshape      = ir.OpAtenReshape
	tpOpScalarTens = ir.OpAtenScalarTensor
	OpLogicalNot   = ir.OpAtenLogicalNot
	OpLogicalAnd   = ir.OpAtenLogicalAnd
	tpOpLogicalOr  = ir.OpAtenLogicalOr
	tpOpIsNaN      = ir.OpAtenIsnan
	tpOpArange     = ir.OpAtenArange
)

// RealImag splits a complex tensor into its parts (view_as_real,
// then select on the trailing pair dim).
func (t *Builder) RealImag(z *ir.Value) (re, im *ir.Value) {
	r := t.V(OpViewAsReal, ir.ValueArg(z))
	if r == nil {
		return nil, nil
	}
	re = t.V(OpSelectInt, ir.ValueArg(r), ir.IntArg(-1), ir.IntArg(0))
	im = t.V(OpSelectInt, ir.ValueArg(r), ir.IntArg(-1), ir.IntArg(1))
	return re, im
}
