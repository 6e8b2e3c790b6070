package edit

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// Shape and symbolic-size builders first written for the ExecuTorch
// legalizations, shared with the ONNX patches.

var etOpReshape = ir.OpAtenReshape

// ShapeArg materializes a shape as a SymInt[] argument.
func ShapeArg(b *ir.Builder, at *ir.Node, shape []sym.Expr) (ir.Arg, error) {
	l := make([]ir.Arg, len(shape))
	for i, d := range shape {
		a, err := SymArg(b, at, d)
		if err != nil {
			return ir.Arg{}, err
		}
		l[i] = a
	}
	return ir.ListArg(l...), nil
}

// Reshape builds reshape(v, shape); a reshape to v's own shape is v.
func Reshape(b *ir.Builder, at *ir.Node, v ir.Arg, shape []sym.Expr) (*ir.Value, error) {
	if t := v.Value.Tensor(); t != nil && t.IsContiguous() && len(t.Shape) == len(shape) {
		same := true
		for i := range shape {
			same = same && t.Shape[i].Equal(shape[i])
		}
		if same {
			return v.Value, nil
		}
	}
	s, err := ShapeArg(b, at, shape)
	if err != nil {
		return nil, err
	}
	return b.Value(etOpReshape, v, s)
}

// InsertOnes reshapes v so that size-1 dims sit at the given positions of
// the result (positions in increasing order, counted in the result's rank).
// It is unsqueeze spelled as reshape.
func InsertOnes(b *ir.Builder, at *ir.Node, v ir.Arg, pos ...int) (*ir.Value, error) {
	t, err := ir.ArgTensor(v, "input")
	if err != nil {
		return nil, err
	}
	rank := t.Rank() + len(pos)
	shape := make([]sym.Expr, 0, rank)
	src, p := 0, 0
	for i := 0; i < rank; i++ {
		if p < len(pos) && pos[p] == i {
			shape = append(shape, sym.Const(1))
			p++
			continue
		}
		if src >= t.Rank() {
			return nil, fmt.Errorf("bad insert positions %v for rank %d", pos, t.Rank())
		}
		shape = append(shape, t.Shape[src])
		src++
	}
	return Reshape(b, at, v, shape)
}

// SameTypes reports whether the replacements have the result types of n.
func SameTypes(n *ir.Node, vs []*ir.Value) bool {
	for i, v := range vs {
		if v != nil && !ir.TypeEqual(v.Type, n.Results[i].Type) {
			return false
		}
	}
	return true
}

// NormDim reads an int dim argument and maps it into [0, rank).
func NormDim(a ir.Arg, rank int) (int, error) {
	if a.Kind != ir.ArgInt {
		return 0, fmt.Errorf("dim must be an int literal, got %s", a)
	}
	d := a.Int
	if d < 0 {
		d += int64(rank)
	}
	if d < 0 || d >= int64(rank) {
		return 0, fmt.Errorf("dim %d out of range for rank %d", a.Int, rank)
	}
	return int(d), nil
}

var etOpSymSize = ir.OpAtenSymSizeInt

var OpPyAdd = ir.OpOperatorAdd

var etOpPyMul = ir.OpOperatorMul

var etOpPyFloorDiv = ir.OpOperatorFloordiv

var OpPyMod = ir.OpOperatorMod

var etOpSymMin = ir.OpTorchSymMin

var etOpSymMax = ir.OpTorchSymMax

// SymArg returns an argument denoting e at the builder's insertion point,
// which lies just before at: an int literal for a constant, an existing
// SymInt value equal to e defined before at, or Python sym arithmetic built
// from sources of e's symbols (SymInt values, or sym_size of a tensor that
// has the symbol as a dim). It fails, naming the symbol, when a symbol has
// no source visible at that point.
func SymArg(b *ir.Builder, at *ir.Node, e sym.Expr) (ir.Arg, error) {
	if !e.IsValid() {
		return ir.Arg{}, fmt.Errorf("invalid symbolic expression")
	}
	if c, ok := e.Const(); ok {
		return ir.IntArg(c), nil
	}
	if v := etFindSymValue(at, e); v != nil {
		return ir.ValueArg(v), nil
	}
	args := e.Args()
	switch e.Op() {
	case sym.OpSym:
		name, _ := e.Name()
		return etSymSource(b, at, name)
	case sym.OpAdd:
		return etFoldSym(b, at, OpPyAdd, args)
	case sym.OpMul:
		return etFoldSym(b, at, etOpPyMul, args)
	case sym.OpPow:
		n, _ := args[1].Const()
		fs := make([]sym.Expr, n)
		for i := range fs {
			fs[i] = args[0]
		}
		return etFoldSym(b, at, etOpPyMul, fs)
	case sym.OpFloorDiv:
		return etFoldSym(b, at, etOpPyFloorDiv, args)
	case sym.OpMod:
		return etFoldSym(b, at, OpPyMod, args)
	case sym.OpMin:
		return etFoldSym(b, at, etOpSymMin, args)
	case sym.OpMax:
		return etFoldSym(b, at, etOpSymMax, args)
	}
	return ir.Arg{}, fmt.Errorf("cannot build %s (%s) as a SymInt", e, e.Op())
}

// etFoldSym builds op(op(a0, a1), a2)… over the materialized operands.
func etFoldSym(b *ir.Builder, at *ir.Node, op ir.Op, xs []sym.Expr) (ir.Arg, error) {
	acc, err := SymArg(b, at, xs[0])
	if err != nil {
		return ir.Arg{}, err
	}
	for _, x := range xs[1:] {
		a, err := SymArg(b, at, x)
		if err != nil {
			return ir.Arg{}, err
		}
		v, err := b.Value(op, acc, a)
		if err != nil {
			return ir.Arg{}, err
		}
		acc = ir.ValueArg(v)
	}
	return acc, nil
}

// etFindSymValue finds a SymInt value equal to e that is visible just before
// at: an input of at's graph or the result of an earlier node.
func etFindSymValue(at *ir.Node, e sym.Expr) *ir.Value {
	g := at.Graph
	for _, in := range g.Inputs {
		if t, ok := in.Type.(*ir.SymIntType); ok && t.Expr.IsValid() && t.Expr.Equal(e) {
			return in
		}
	}
	for n := g.First(); n != nil && n != at; n = n.Next() {
		for _, r := range n.Results {
			if t, ok := r.Type.(*ir.SymIntType); ok && t.Expr.IsValid() && t.Expr.Equal(e) {
				return r
			}
		}
	}
	return nil
}

// etSymSource materializes one symbol: a SymInt value that equals it, else
// sym_size of the first tensor (inputs first, then earlier results) that has
// it as a dim.
func etSymSource(b *ir.Builder, at *ir.Node, name string) (ir.Arg, error) {
	s := sym.Sym(name)
	if v := etFindSymValue(at, s); v != nil {
		return ir.ValueArg(v), nil
	}
	g := at.Graph
	cands := append([]*ir.Value(nil), g.Inputs...)
	for n := g.First(); n != nil && n != at; n = n.Next() {
		cands = append(cands, n.Results...)
	}
	for _, v := range cands {
		t := v.Tensor()
		if t == nil {
			continue
		}
		for d, dim := range t.Shape {
			if dim.Equal(s) {
				r, err := b.Value(etOpSymSize, ir.ValueArg(v), ir.IntArg(int64(d)))
				if err != nil {
					return ir.Arg{}, err
				}
				return ir.ValueArg(r), nil
			}
		}
	}
	return ir.Arg{}, fmt.Errorf("symbol %s has no source (no SymInt value or tensor dim) before %s", name, at.Short())
}

var OpTranspose = ir.OpAtenTransposeInt

var OpMatmul = ir.OpAtenMatmul

var OpMulScalar = ir.OpAtenMulScalar

var OpSafeSoftmax = ir.OpAten_SafeSoftmax

var OpRepeatIntl = ir.OpAtenRepeatInterleaveSelfInt

// RollAmount is shift mod size, in [0, size): folded when both are literals
// or the shift is provably in range, else operator.mod.
func (t *Builder) RollAmount(n *ir.Node, shift, size ir.Arg) ir.Arg {
	se, sok := SymExpr(shift)
	ne, nok := SymExpr(size)
	if sok && nok {
		if Known(n, sym.And(sym.Ge(se, sym.Const(0)), sym.Lt(se, ne))) {
			return shift
		}
		if Known(n, sym.And(sym.Lt(se, sym.Const(0)), sym.Ge(sym.Add(se, ne), sym.Const(0)))) {
			return t.Add(size, shift)
		}
	}
	return t.Arith(tpOpPyMod, shift, size)
}

// Narrows builds narrow(x, d, starts[i], lengths[i]) for each piece.
func (t *Builder) Narrows(x *ir.Value, d int, starts, lengths []ir.Arg) []*ir.Value {
	out := make([]*ir.Value, len(starts))
	for i := range starts {
		out[i] = t.V(OpNarrow, ir.ValueArg(x), ir.IntArg(int64(d)), starts[i], lengths[i])
	}
	return out
}
