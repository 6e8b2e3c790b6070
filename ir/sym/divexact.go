package sym

// factor is one base**exp of a monomial.
type factor struct {
	base Expr
	exp  int64
}

// monomial splits a non-constant, non-sum term into its numeric coefficient
// and its factors.
func monomial(t Expr) (Expr, []factor) {
	asFactor := func(f Expr) factor {
		if f.n.op == OpPow {
			return factor{f.n.args[0], f.n.exp}
		}
		return factor{f, 1}
	}
	if t.n.op == OpMul {
		fs := make([]factor, len(t.n.args))
		for i, f := range t.n.args {
			fs[i] = asFactor(f)
		}
		return t.n.k, fs
	}
	return Const(1), []factor{asFactor(t)}
}

// divTerm divides the monomial t by the monomial d exactly, if it can.
func divTerm(t Expr, dc Expr, dfs []factor) (Expr, bool) {
	tc, tfs := monomial(t)
	if !cIsZero(cMod(tc, dc)) {
		return Expr{}, false
	}
	left := make([]int64, len(tfs))
	for i, f := range tfs {
		left[i] = f.exp
	}
	for _, d := range dfs {
		found := false
		for i, f := range tfs {
			if left[i] >= d.exp && f.base.Equal(d.base) {
				left[i] -= d.exp
				found = true
				break
			}
		}
		if !found {
			return Expr{}, false
		}
	}
	parts := []Expr{cFloorDiv(tc, dc)}
	for i, f := range tfs {
		if left[i] > 0 {
			parts = append(parts, Pow(f.base, left[i]))
		}
	}
	return Mul(parts...), true
}

// divExact returns a / b when b is a non-constant monomial (a coefficient
// times symbols, powers or other atoms) that divides every term of a, as in
// 8*s0*s1 // s0 == 8*s1. The quotient equals a // b wherever b != 0, which
// is the only place a // b is defined.
func divExact(a, b Expr) (Expr, bool) {
	switch b.n.op {
	case OpConst, OpAdd:
		return Expr{}, false
	}
	dc, dfs := monomial(b)
	var one [1]Expr
	c, ts := linView(a, &one)
	if !cIsZero(c) || len(ts) == 0 {
		return Expr{}, false
	}
	qs := make([]Expr, 0, len(ts))
	for _, t := range ts {
		q, ok := divTerm(t, dc, dfs)
		if !ok {
			return Expr{}, false
		}
		qs = append(qs, q)
	}
	return Add(qs...), true
}
