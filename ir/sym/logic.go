package sym

// Eq returns the condition a == b.
func Eq(a, b Expr) Expr { return relOf(OpEq, a, b, 0) }

// Ne returns the condition a != b.
func Ne(a, b Expr) Expr { return relOf(OpNe, a, b, 0) }

// Le returns the condition a <= b.
func Le(a, b Expr) Expr { return relOf(OpLe, a, b, 0) }

// Lt returns the condition a < b, canonically a - b + 1 <= 0.
func Lt(a, b Expr) Expr { return relOf(OpLe, a, b, 1) }

// Gt returns the condition a > b, canonically Lt(b, a).
func Gt(a, b Expr) Expr { return Lt(b, a) }

// Ge returns the condition a >= b, canonically Le(b, a).
func Ge(a, b Expr) Expr { return Le(b, a) }

func relOf(o Op, a, b Expr, off int64) Expr {
	if !isInt(a) || !isInt(b) {
		return Expr{}
	}
	d := Sub(a, b)
	if off != 0 {
		d = Add(d, Const(off))
	}
	return mkRel(o, d)
}

// mkRel builds the canonical comparison "d op 0".
func mkRel(o Op, d Expr) Expr {
	if !isInt(d) {
		return Expr{}
	}
	if d.isConst() {
		s := cSign(d)
		switch o {
		case OpEq:
			return boolExpr(s == 0)
		case OpNe:
			return boolExpr(s != 0)
		}
		return boolExpr(s <= 0)
	}
	var one [1]Expr
	c, ts := linView(d, &one)
	g := Const(0)
	for _, t := range ts {
		g = cGcd(g, coefOf(t))
		if cIsOne(g) {
			break
		}
	}
	neg := o != OpLe && cSign(coefOf(ts[0])) < 0
	if !cIsOne(g) || neg {
		if o == OpLe {
			// g*P + c <= 0  <=>  P + ceil(c/g) <= 0
			c = cNeg(cFloorDiv(cNeg(c), g))
		} else {
			if !cIsZero(cMod(c, g)) {
				// g*P + c == 0 has no integer solution
				return boolExpr(o == OpNe)
			}
			c = cFloorDiv(c, g)
		}
		if neg {
			g = cNeg(g)
			c = cNeg(c)
		}
		nt := make([]Expr, len(ts))
		for i, t := range ts {
			nt[i] = withCoef(t, cFloorDiv(coefOf(t), g))
		}
		d = sumOf(c, nt)
	}
	n := &node{op: o}
	n.inl[0] = d
	n.args = n.inl[:1:1]
	return n.finish()
}

// relSides splits the canonical difference d of a comparison into the two
// printed sides: positive terms on the left; negated negative terms and the
// negated constant on the right. When there are no positive terms (possible
// only for <=) the constant moves to the left instead: "c <= P".
func relSides(d Expr) (Expr, Expr) {
	var one [1]Expr
	c, ts := linView(d, &one)
	var l, r []Expr
	for _, t := range ts {
		co := coefOf(t)
		if cSign(co) > 0 {
			l = append(l, t)
		} else {
			r = append(r, withCoef(t, cNeg(co)))
		}
	}
	if len(l) == 0 {
		return c, sumOf(Const(0), r)
	}
	return sumOf(Const(0), l), sumOf(cNeg(c), r)
}

// Not returns the negation of a boolean expression. Negation is pushed into
// comparisons (Not(a <= b) is b + 1 <= a) and through And/Or (De Morgan).
func Not(a Expr) Expr {
	if !isBool(a) {
		return Expr{}
	}
	switch a.n.op {
	case OpTrue:
		return False()
	case OpFalse:
		return True()
	case OpEq, OpNe:
		o := OpNe
		if a.n.op == OpNe {
			o = OpEq
		}
		n := &node{op: o}
		n.inl[0] = a.n.args[0]
		n.args = n.inl[:1:1]
		return n.finish()
	case OpLe:
		// d > 0  <=>  1 - d <= 0
		return mkRel(OpLe, Sub(Const(1), a.n.args[0]))
	case OpAnd, OpOr:
		xs := make([]Expr, len(a.n.args))
		for i, x := range a.n.args {
			xs[i] = Not(x)
		}
		if a.n.op == OpAnd {
			return Or(xs...)
		}
		return And(xs...)
	}
	return Expr{}
}

// And returns the conjunction of xs (True for no operands).
func And(xs ...Expr) Expr { return junction(OpAnd, xs) }

// Or returns the disjunction of xs (False for no operands).
func Or(xs ...Expr) Expr { return junction(OpOr, xs) }

func junction(o Op, xs []Expr) Expr {
	identity, dominant := OpTrue, OpFalse
	if o == OpOr {
		identity, dominant = OpFalse, OpTrue
	}
	var buf [8]Expr
	args := buf[:0]
	for _, x := range xs {
		if !isBool(x) {
			return Expr{}
		}
		switch x.n.op {
		case identity:
		case dominant:
			return x
		case o:
			args = append(args, x.n.args...)
		default:
			args = append(args, x)
		}
	}
	if len(args) > 1 {
		sortExprs(args, compare)
		args = slicesCompact(args)
	}
	if len(args) > 1 && len(args) <= 32 {
		// x and Not(x) together decide the junction
		for _, a := range args {
			na := Not(a)
			for _, b := range args {
				if b.Equal(na) {
					return boolExpr(dominant == OpTrue)
				}
			}
		}
	}
	switch len(args) {
	case 0:
		return boolExpr(identity == OpTrue)
	case 1:
		return args[0]
	}
	return newNode(o, args).finish()
}
