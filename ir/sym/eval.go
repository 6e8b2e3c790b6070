package sym

import (
	"errors"
	"math/big"
	"slices"
	"sort"
)

// Errors reported by Eval.
var (
	ErrDivisionByZero = errors.New("sym: division by zero")
	ErrOverflow       = errors.New("sym: integer overflow (value does not fit in int64)")
	ErrInvalid        = errors.New("sym: invalid expression")
)

// UnboundError is returned by Eval for a symbol without a binding.
type UnboundError struct{ Name string }

func (e *UnboundError) Error() string { return "sym: unbound symbol " + e.Name }

// Symbols returns the free symbols of e, sorted (sort.Strings order) and
// without duplicates.
func (e Expr) Symbols() []string {
	if e.n == nil || e.n == smallConst {
		return nil
	}
	if e.n.op == OpSym {
		return []string{e.n.name}
	}
	var out []string
	collectSyms(e, &out)
	sort.Strings(out)
	return slices.Compact(out)
}

func collectSyms(e Expr, out *[]string) {
	if e.n == nil || e.n == smallConst {
		return
	}
	if e.n.op == OpSym {
		*out = append(*out, e.n.name)
		return
	}
	for _, a := range e.n.args {
		collectSyms(a, out)
	}
}

// HasSymbol reports whether the symbol name occurs in e.
func (e Expr) HasSymbol(name string) bool {
	if e.n == nil || e.n == smallConst {
		return false
	}
	if e.n.op == OpSym {
		return e.n.name == name
	}
	for _, a := range e.n.args {
		if a.HasSymbol(name) {
			return true
		}
	}
	return false
}

// mapChildren rebuilds e with f applied to each operand, through the
// canonical constructors. It returns e itself when no operand changed.
func mapChildren(e Expr, f func(Expr) Expr) Expr {
	n := e.n
	if n == nil || n == smallConst {
		return e
	}
	switch n.op {
	case OpConst, OpSym, OpTrue, OpFalse:
		return e
	}
	var buf [8]Expr
	xs := buf[:0]
	changed := false
	for _, a := range n.args {
		b := f(a)
		if b.n != a.n || b.c != a.c {
			changed = true
		}
		xs = append(xs, b)
	}
	if !changed {
		return e
	}
	switch n.op {
	case OpAdd:
		return Add(append(xs, n.k)...)
	case OpMul:
		return Mul(append(xs, n.k)...)
	case OpPow:
		return Pow(xs[0], n.exp)
	case OpFloorDiv:
		return FloorDiv(xs[0], xs[1])
	case OpMod:
		return Mod(xs[0], xs[1])
	case OpMin:
		return Min(xs...)
	case OpMax:
		return Max(xs...)
	case OpEq, OpNe, OpLe:
		return mkRel(n.op, xs[0])
	case OpAnd:
		return And(xs...)
	case OpOr:
		return Or(xs...)
	}
	return Expr{}
}

// Subst replaces symbols by expressions (simultaneously) and returns the
// canonical result. Symbols not in m are left alone. If a replacement is
// invalid or of the wrong sort the result is invalid.
func (e Expr) Subst(m map[string]Expr) Expr {
	if len(m) == 0 || e.n == nil {
		return e
	}
	var f func(Expr) Expr
	f = func(x Expr) Expr {
		if x.n == nil || x.n == smallConst {
			return x
		}
		if x.n.op == OpSym {
			if r, ok := m[x.n.name]; ok {
				return r
			}
			return x
		}
		return mapChildren(x, f)
	}
	return f(e)
}

// Eval evaluates e with the given symbol values using int64 arithmetic with
// Python semantics for // and %. Booleans evaluate to 0 or 1. Errors: an
// *UnboundError naming the first unbound symbol, ErrDivisionByZero,
// ErrOverflow (an intermediate or final value outside int64), ErrInvalid.
func (e Expr) Eval(bind map[string]int64) (int64, error) {
	return eval(e, bind)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func eval(e Expr, bind map[string]int64) (int64, error) {
	n := e.n
	if n == smallConst {
		return e.c, nil
	}
	if n == nil {
		return 0, ErrInvalid
	}
	switch n.op {
	case OpConst:
		return 0, ErrOverflow
	case OpSym:
		v, ok := bind[n.name]
		if !ok {
			return 0, &UnboundError{Name: n.name}
		}
		return v, nil
	case OpTrue:
		return 1, nil
	case OpFalse:
		return 0, nil
	case OpAdd, OpMul:
		if n.k.n != smallConst {
			if n.op == OpAdd {
				return evalSumBig(n, bind)
			}
			return evalProdBig(n, bind)
		}
		acc := n.k.c
		for _, a := range n.args {
			v, err := eval(a, bind)
			if err != nil {
				return 0, err
			}
			var ok bool
			if n.op == OpAdd {
				acc, ok = add64(acc, v)
				if !ok {
					return evalSumBig(n, bind)
				}
			} else if acc, ok = mul64(acc, v); !ok {
				return evalProdBig(n, bind)
			}
		}
		return acc, nil
	case OpPow:
		v, err := eval(n.args[0], bind)
		if err != nil {
			return 0, err
		}
		r, ok := pow64(v, n.exp)
		if !ok {
			return 0, ErrOverflow
		}
		return r, nil
	case OpFloorDiv, OpMod:
		a, err := eval(n.args[0], bind)
		if err != nil {
			return 0, err
		}
		b, err := eval(n.args[1], bind)
		if err != nil {
			return 0, err
		}
		if b == 0 {
			return 0, ErrDivisionByZero
		}
		if n.op == OpMod {
			return mod64(a, b), nil
		}
		q, ok := floorDiv64(a, b)
		if !ok {
			return 0, ErrOverflow
		}
		return q, nil
	case OpMin, OpMax:
		var acc int64
		for i, a := range n.args {
			v, err := eval(a, bind)
			if err != nil {
				return 0, err
			}
			if i == 0 || (n.op == OpMin && v < acc) || (n.op == OpMax && v > acc) {
				acc = v
			}
		}
		return acc, nil
	case OpEq, OpNe, OpLe:
		d, err := eval(n.args[0], bind)
		if err != nil {
			return 0, err
		}
		switch n.op {
		case OpEq:
			return b2i(d == 0), nil
		case OpNe:
			return b2i(d != 0), nil
		}
		return b2i(d <= 0), nil
	case OpAnd, OpOr:
		res := n.op == OpAnd
		for _, a := range n.args {
			v, err := eval(a, bind)
			if err != nil {
				return 0, err
			}
			if n.op == OpAnd {
				res = res && v != 0
			} else {
				res = res || v != 0
			}
		}
		return b2i(res), nil
	}
	return 0, ErrInvalid
}

// evalSumBig re-evaluates a sum whose partial sums overflow int64; the total
// may still fit.
func evalSumBig(n *node, bind map[string]int64) (int64, error) {
	acc := new(big.Int).Set(n.k.bigVal())
	for _, a := range n.args {
		v, err := eval(a, bind)
		if err != nil {
			return 0, err
		}
		acc.Add(acc, big.NewInt(v))
	}
	if !acc.IsInt64() {
		return 0, ErrOverflow
	}
	return acc.Int64(), nil
}

// evalProdBig evaluates a product with a coefficient beyond int64: it is
// representable only if a factor is zero.
func evalProdBig(n *node, bind map[string]int64) (int64, error) {
	zero := false
	for _, a := range n.args {
		v, err := eval(a, bind)
		if err != nil {
			return 0, err
		}
		zero = zero || v == 0
	}
	if zero {
		return 0, nil
	}
	return 0, ErrOverflow
}
