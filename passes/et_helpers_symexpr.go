package passes

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// Helpers shared by the ExecuTorch legalizations: turning a symbolic size
// expression into an operand a SymInt argument can take.

var (
	etOpSymSize    = ir.MustLookupOp("aten.sym_size.int")
	etOpPyAdd      = ir.MustLookupOp("operator.add")
	etOpPyMul      = ir.MustLookupOp("operator.mul")
	etOpPyFloorDiv = ir.MustLookupOp("operator.floordiv")
	etOpPyMod      = ir.MustLookupOp("operator.mod")
	etOpSymMin     = ir.MustLookupOp("torch.sym_min")
	etOpSymMax     = ir.MustLookupOp("torch.sym_max")
)

// etSymArg returns an argument denoting e at the builder's insertion point,
// which lies just before at: an int literal for a constant, an existing
// SymInt value equal to e defined before at, or Python sym arithmetic built
// from sources of e's symbols (SymInt values, or sym_size of a tensor that
// has the symbol as a dim). It fails, naming the symbol, when a symbol has
// no source visible at that point.
func etSymArg(b *ir.Builder, at *ir.Node, e sym.Expr) (ir.Arg, error) {
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
		return etFoldSym(b, at, etOpPyAdd, args)
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
		return etFoldSym(b, at, etOpPyMod, args)
	case sym.OpMin:
		return etFoldSym(b, at, etOpSymMin, args)
	case sym.OpMax:
		return etFoldSym(b, at, etOpSymMax, args)
	}
	return ir.Arg{}, fmt.Errorf("cannot build %s (%s) as a SymInt", e, e.Op())
}

// etFoldSym builds op(op(a0, a1), a2)… over the materialized operands.
func etFoldSym(b *ir.Builder, at *ir.Node, op ir.Op, xs []sym.Expr) (ir.Arg, error) {
	acc, err := etSymArg(b, at, xs[0])
	if err != nil {
		return ir.Arg{}, err
	}
	for _, x := range xs[1:] {
		a, err := etSymArg(b, at, x)
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
