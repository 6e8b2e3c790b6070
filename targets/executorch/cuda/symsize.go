package cuda

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// Symbolic sizes and the partition. sym_size has a SymInt result, so it
// stays on the host; a claimed node reading it makes the SymInt a region
// input, which the CUDA runtime cannot take as such (it passes device
// tensors only, pte-format.md §9.2). Three rewrites deal with that:
//
//   - reanchorSymSizes (before partitioning): sym_size.int(%t, d) of an
//     intermediate %t whose size equals a dim of a graph input reads the
//     input instead, so it no longer depends on a partition;
//   - symBuilder (while outlining): a SymInt the region reads that is an
//     expression in the dims of the region's tensor inputs (s0, s0*2,
//     s0*s1 + 1, …) is recomputed inside the region from sym_size.int of
//     those inputs and Python sym arithmetic (operator.add/mul/floordiv/
//     mod, torch.sym_min/sym_max), the ops torch.export itself records;
//   - boxing (while outlining): any other SymInt, SymFloat, SymBool or
//     Python scalar the region reads (a data-dependent item(), say) is
//     passed as a 0-dim device tensor: full([], v, dtype=int64/float64/
//     bool) on the host, a host→device copy, and _local_scalar_dense in
//     the region, which AOTInductor compiles as a data-dependent value.

var opSymSize = ir.OpAtenSymSizeInt

// findDim returns the first tensor of cands (and the dim) whose size at
// that dim equals e.
func findDim(e sym.Expr, cands []*ir.Value) (*ir.Value, int, bool) {
	if !e.IsValid() {
		return nil, 0, false
	}
	for _, v := range cands {
		t := v.Tensor()
		if t == nil {
			continue
		}
		for d, s := range t.Shape {
			if s.Equal(e) {
				return v, d, true
			}
		}
	}
	return nil, 0, false
}

// reanchorSymSizes points each sym_size.int of an intermediate tensor of
// p's main graph at a graph input with an equal dim, when there is one
// (user inputs first). It returns the number of nodes changed.
func reanchorSymSizes(p *ir.Program) int {
	var users, others []*ir.Value
	for i, v := range p.Main.Inputs {
		if i < len(p.Signature.Inputs) && p.Signature.Inputs[i].Kind == ir.UserInput {
			users = append(users, v)
		} else {
			others = append(others, v)
		}
	}
	cands := append(users, others...)
	count := 0
	for _, n := range p.Main.Nodes() {
		if n.Op != opSymSize || len(n.Args) != 2 || len(n.Results) != 1 || n.Args[0].Kind != ir.ArgValue || n.Args[0].Value.IsInput() {
			continue
		}
		st, ok := n.Results[0].Type.(*ir.SymIntType)
		if !ok {
			continue
		}
		in, d, ok := findDim(st.Expr, cands)
		if !ok {
			continue
		}
		n.SetArg(0, ir.ValueArg(in))
		n.SetArg(1, ir.IntArg(int64(d)))
		n.AddProvenance(passName)
		count++
	}
	return count
}

var (
	opFull             = ir.OpAtenFull
	opLocalScalarDense = ir.OpAten_LocalScalarDense
	symOps             = map[sym.Op]ir.Op{
		sym.OpAdd:      ir.OpOperatorAdd,
		sym.OpMul:      ir.OpOperatorMul,
		sym.OpFloorDiv: ir.OpOperatorFloordiv,
		sym.OpMod:      ir.OpOperatorMod,
		sym.OpMin:      ir.OpTorchSymMin,
		sym.OpMax:      ir.OpTorchSymMax,
	}
)

// symExpr returns the expression of a SymInt value (false for anything
// else, or an unknown expression).
func symExpr(v *ir.Value) (sym.Expr, bool) {
	st, ok := v.Type.(*ir.SymIntType)
	if !ok || !st.Expr.IsValid() {
		return sym.Expr{}, false
	}
	return st.Expr, true
}

// canBuild reports whether e can be computed from the dims of tensors:
// it is a constant, equals a dim, or is a sum, product, power, floor
// division, modulo, min or max of such expressions.
func canBuild(e sym.Expr, tensors []*ir.Value) bool {
	if !e.IsValid() {
		return false
	}
	if _, ok := e.Const(); ok {
		return true
	}
	if _, _, ok := findDim(e, tensors); ok {
		return true
	}
	switch e.Op() {
	case sym.OpPow:
		args := e.Args()
		n, ok := args[1].Const()
		return ok && n <= 64 && canBuild(args[0], tensors)
	case sym.OpAdd, sym.OpMul, sym.OpFloorDiv, sym.OpMod, sym.OpMin, sym.OpMax:
		for _, a := range e.Args() {
			if !canBuild(a, tensors) {
				return false
			}
		}
		return true
	}
	return false
}

// symBuilder computes SymInt expressions inside a region from the dims of
// its tensor inputs; values it built are reused.
type symBuilder struct {
	b       *ir.Builder
	tensors []*ir.Value // the region's tensor inputs
	built   map[string]*ir.Value
}

// build returns an argument denoting e (canBuild(e) must hold): an int
// literal, or a SymInt value computed at the builder's insertion point.
func (s *symBuilder) build(e sym.Expr) (ir.Arg, error) {
	if c, ok := e.Const(); ok {
		return ir.IntArg(c), nil
	}
	key := e.String()
	if v, ok := s.built[key]; ok {
		return ir.ValueArg(v), nil
	}
	var v *ir.Value
	var err error
	if t, d, ok := findDim(e, s.tensors); ok {
		v, err = s.b.Value(opSymSize, ir.ValueArg(t), ir.IntArg(int64(d)))
	} else {
		args := e.Args()
		op, known := symOps[e.Op()]
		fold := args
		if e.Op() == sym.OpPow {
			n, _ := args[1].Const()
			op, known, fold = symOps[sym.OpMul], true, make([]sym.Expr, n)
			for i := range fold {
				fold[i] = args[0]
			}
		}
		if !known || len(fold) == 0 {
			return ir.Arg{}, fmt.Errorf("cannot compute %s (%s) from tensor dims", e, e.Op())
		}
		var acc ir.Arg
		for i, x := range fold {
			a, err := s.build(x)
			if err != nil {
				return ir.Arg{}, err
			}
			if i == 0 {
				acc = a
				continue
			}
			nv, err := s.b.Value(op, acc, a)
			if err != nil {
				return ir.Arg{}, fmt.Errorf("computing %s: %w", e, err)
			}
			acc = ir.ValueArg(nv)
		}
		if acc.Kind != ir.ArgValue {
			return acc, nil
		}
		v = acc.Value
	}
	if err != nil {
		return ir.Arg{}, fmt.Errorf("computing %s: %w", e, err)
	}
	s.built[key] = v
	return ir.ValueArg(v), nil
}

// boxDType is the dtype of the 0-dim tensor that carries a non-tensor
// value of type t into a region (false when t cannot be boxed).
func boxDType(t ir.Type) (ir.DType, bool) {
	switch t := t.(type) {
	case *ir.SymIntType:
		return ir.Int64, true
	case *ir.SymFloatType:
		return ir.Float64, true
	case *ir.SymBoolType:
		return ir.Bool, true
	case *ir.ScalarType:
		switch t.Kind {
		case ir.IntKind:
			return ir.Int64, true
		case ir.FloatKind:
			return ir.Float64, true
		case ir.BoolKind:
			return ir.Bool, true
		}
	}
	return 0, false
}
