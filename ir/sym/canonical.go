package sym

// Canonical-form invariants (every constructor returns an expression that
// satisfies them, and applying the constructor again to the operands of a
// canonical node reproduces the node):
//
//   - Constants are folded. Integer constants are exact: values outside int64
//     are kept as big constants (see the package doc).
//   - Add: k is the constant term; args are >= 1 non-constant, non-Add terms
//     with pairwise distinct monomials (term without its coefficient), sorted
//     by compareMono; len(args) + (k != 0) >= 2.
//   - Mul: k is the coefficient (never 0); args are non-constant, non-Mul
//     factors sorted by compareFactor, with equal bases combined into a Pow
//     (exponents beyond int64 are split into several factors);
//     (k != 1 or len(args) >= 2). Products involving sums are expanded
//     (distributed) unless the expansion would exceed maxExpandTerms terms;
//     a product with exactly one sum factor is always distributed.
//   - Pow: exponent >= 2; the base is not a Mul unless the coefficient power
//     is too large to fold; a constant base only when folding is too large;
//     a sum base only when expansion is too large.
//   - FloorDiv(a, b), Mod(a, b) with a constant divisor b > 1: no term of a
//     has a coefficient divisible by b, the constant of a is in [0, b), the
//     gcd of all coefficients of a and b is 1; FloorDiv(FloorDiv(x, c), d)
//     is merged to FloorDiv(x, c*d). A zero divisor is kept as written.
//   - Min/Max: flattened, deduplicated, constants merged, operands that
//     differ from another operand by a constant are dropped when dominated,
//     sorted by compare, >= 2 operands.
//   - Comparisons are Eq(d), Ne(d), Le(d) meaning d == 0, d != 0, d <= 0 with
//     d canonical, non-constant, and the gcd of d's term coefficients 1;
//     for Eq/Ne the first term of d has a positive coefficient.
//   - And/Or: flattened, no True/False operands, deduplicated, sorted,
//     >= 2 operands; Not is pushed down to comparisons (never stored).

// maxExpandTerms bounds the number of terms a product of sums may expand to.
const maxExpandTerms = 256

// ---- Add ----

// Add returns the canonical sum of xs (0 for no operands).
func Add(xs ...Expr) Expr {
	switch len(xs) {
	case 0:
		return Const(0)
	case 1:
		if !isInt(xs[0]) {
			return Expr{}
		}
		return xs[0]
	case 2:
		a, b := xs[0], xs[1]
		if a.n == smallConst && b.n == smallConst {
			if s, ok := add64(a.c, b.c); ok {
				return Const(s)
			}
		}
		if a.n == smallConst && a.c == 0 && isInt(b) {
			return b
		}
		if b.n == smallConst && b.c == 0 && isInt(a) {
			return a
		}
	}
	c := Const(0)
	var buf [8]Expr
	terms := buf[:0]
	for _, x := range xs {
		if !isInt(x) {
			return Expr{}
		}
		switch x.n.op {
		case OpConst:
			c = cAdd(c, x)
		case OpAdd:
			c = cAdd(c, x.n.k)
			terms = append(terms, x.n.args...)
		default:
			terms = append(terms, x)
		}
	}
	return sumOf(c, terms)
}

// Sub returns a - b.
func Sub(a, b Expr) Expr { return Add(a, Neg(b)) }

// Neg returns -a.
func Neg(a Expr) Expr { return Mul(Const(-1), a) }

// coefOf returns the numeric coefficient of an Add term.
func coefOf(t Expr) Expr {
	if t.n.op == OpMul {
		return t.n.k
	}
	return Const(1)
}

// withCoef returns the term t (non-constant, non-Add) with its coefficient
// replaced by coef (non-zero).
func withCoef(t Expr, coef Expr) Expr {
	if t.n.op == OpMul {
		if cIsOne(coef) && len(t.n.args) == 1 {
			return t.n.args[0]
		}
		if compare(coef, t.n.k) == 0 {
			return t
		}
		n := &node{op: OpMul, k: coef, args: t.n.args}
		return n.finish()
	}
	if cIsOne(coef) {
		return t
	}
	n := &node{op: OpMul, k: coef}
	n.inl[0] = t
	n.args = n.inl[:1:1]
	return n.finish()
}

// sumOf builds the canonical sum of the constant c and terms (non-constant,
// non-Add). terms is scratch space and is modified.
func sumOf(c Expr, terms []Expr) Expr {
	if len(terms) > 1 {
		sortExprs(terms, compareMono)
	}
	out := terms[:0]
	for i := 0; i < len(terms); {
		t := terms[i]
		j := i + 1
		if j < len(terms) && compareMono(t, terms[j]) == 0 {
			coef := coefOf(t)
			for ; j < len(terms) && compareMono(t, terms[j]) == 0; j++ {
				coef = cAdd(coef, coefOf(terms[j]))
			}
			i = j
			if cIsZero(coef) {
				continue
			}
			t = withCoef(t, coef)
		} else {
			i = j
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return c
	}
	if len(out) == 1 && cIsZero(c) {
		return out[0]
	}
	n := newNode(OpAdd, out)
	n.k = c
	return n.finish()
}

// nterms is the number of summands of an Add (including the constant).
func nterms(a Expr) int {
	if cIsZero(a.n.k) {
		return len(a.n.args)
	}
	return len(a.n.args) + 1
}

// ---- Mul ----

// Mul returns the canonical product of xs (1 for no operands).
func Mul(xs ...Expr) Expr {
	switch len(xs) {
	case 0:
		return Const(1)
	case 1:
		if !isInt(xs[0]) {
			return Expr{}
		}
		return xs[0]
	case 2:
		a, b := xs[0], xs[1]
		if a.n == smallConst && b.n == smallConst {
			if p, ok := mul64(a.c, b.c); ok {
				return Const(p)
			}
		}
		if a.n == smallConst && a.c == 1 && isInt(b) {
			return b
		}
		if b.n == smallConst && b.c == 1 && isInt(a) {
			return a
		}
	}
	coef := Const(1)
	var buf [8]Expr
	fs := buf[:0]
	for _, x := range xs {
		if !isInt(x) {
			return Expr{}
		}
		switch x.n.op {
		case OpConst:
			coef = cMul(coef, x)
		case OpMul:
			coef = cMul(coef, x.n.k)
			fs = append(fs, x.n.args...)
		default:
			fs = append(fs, x)
		}
	}
	if cIsZero(coef) {
		return Const(0)
	}
	return productOf(coef, fs)
}

// productOf builds the canonical product of coef (non-zero) and fs
// (non-constant, non-Mul factors). fs is scratch space and is modified.
func productOf(coef Expr, fs []Expr) Expr {
	if len(fs) == 0 {
		return coef
	}
	if len(fs) > 1 {
		sortExprs(fs, compareFactor)
		fs = combinePowers(fs)
	}
	occ, cost := 0, 1
	for _, f := range fs {
		switch f.n.op {
		case OpAdd:
			occ++
			cost = satMul(cost, nterms(f))
		case OpPow:
			if b := f.n.args[0]; b.n.op == OpAdd {
				if f.n.exp > 1<<20 {
					occ = 1 << 20
				} else {
					occ += int(f.n.exp)
				}
				cost = satMul(cost, satPowInt(nterms(b), f.n.exp))
			}
		}
	}
	if len(fs) == 1 && cIsOne(coef) && (fs[0].n.op != OpPow || occ < 2 || cost > maxExpandTerms) {
		return fs[0]
	}
	if occ == 1 || (occ >= 2 && cost <= maxExpandTerms) {
		return expand(coef, fs)
	}
	n := newNode(OpMul, fs)
	n.k = coef
	return n.finish()
}

// combinePowers merges adjacent factors with equal bases (fs sorted by
// compareFactor). The result reuses fs.
func combinePowers(fs []Expr) []Expr {
	out := fs[:0]
	for i := 0; i < len(fs); {
		b, e := factorBase(fs[i])
		j := i + 1
		for j < len(fs) {
			b2, _ := factorBase(fs[j])
			if compare(b, b2) != 0 {
				break
			}
			j++
		}
		if j == i+1 {
			out = append(out, fs[i])
			i = j
			continue
		}
		total := e
		overflow := false
		for _, f := range fs[i+1 : j] {
			_, e2 := factorBase(f)
			s, ok := add64(total, e2)
			if !ok {
				overflow = true
				break
			}
			total = s
		}
		if !overflow {
			out = append(out, powRaw(b, total))
		} else {
			// Split an exponent beyond int64 into maximal chunks; the number of
			// chunks never exceeds the number of factors consumed.
			var sum, maxE uint64 = 0, 1<<63 - 1
			var chunks int
			for _, f := range fs[i:j] {
				_, e2 := factorBase(f)
				sum += uint64(e2)
				if sum >= maxE {
					sum -= maxE
					chunks++
				}
			}
			if sum > 0 {
				out = append(out, powRaw(b, int64(sum)))
			}
			for ; chunks > 0; chunks-- {
				out = append(out, powRaw(b, int64(maxE)))
			}
		}
		i = j
	}
	return out
}

// expand distributes the product coef * fs over its sum factors.
func expand(coef Expr, fs []Expr) Expr {
	var plain, adds []Expr
	for _, f := range fs {
		switch {
		case f.n.op == OpAdd:
			adds = append(adds, f)
		case f.n.op == OpPow && f.n.args[0].n.op == OpAdd:
			for k := int64(0); k < f.n.exp; k++ {
				adds = append(adds, f.n.args[0])
			}
		default:
			plain = append(plain, f)
		}
	}
	acc := []Expr{productOf(coef, plain)}
	for _, a := range adds {
		next := make([]Expr, 0, len(acc)*nterms(a))
		for _, t := range acc {
			for _, u := range a.n.args {
				next = append(next, Mul(t, u))
			}
			if !cIsZero(a.n.k) {
				next = append(next, Mul(t, a.n.k))
			}
		}
		acc = next
	}
	return Add(acc...)
}

// ---- Pow ----

// Pow returns base**exp for exp >= 0 (x**0 = 1, including 0**0, as in
// Python). A negative exponent yields the invalid Expr.
func Pow(base Expr, exp int64) Expr {
	if !isInt(base) || exp < 0 {
		return Expr{}
	}
	if exp == 0 {
		return Const(1)
	}
	if exp == 1 {
		return base
	}
	switch base.n.op {
	case OpConst:
		if r, ok := cPow(base, exp); ok {
			return r
		}
		return powRaw(base, exp)
	case OpPow:
		if e, ok := mul64(base.n.exp, exp); ok {
			return Pow(base.n.args[0], e)
		}
		return powRaw(base, exp)
	case OpMul:
		ck, ok := cPow(base.n.k, exp)
		if !ok {
			return powRaw(base, exp)
		}
		fs := make([]Expr, 0, len(base.n.args)+1)
		fs = append(fs, ck)
		for _, f := range base.n.args {
			fs = append(fs, Pow(f, exp))
		}
		return Mul(fs...)
	case OpAdd:
		return productOf(Const(1), []Expr{powRaw(base, exp)})
	}
	return powRaw(base, exp)
}

// ---- FloorDiv / Mod / CeilDiv ----

// linView splits an integer expression into constant + terms.
func linView(a Expr, one *[1]Expr) (Expr, []Expr) {
	switch a.n.op {
	case OpConst:
		return a, nil
	case OpAdd:
		return a.n.k, a.n.args
	}
	one[0] = a
	return Const(0), one[:]
}

// FloorDiv returns a // b with Python semantics (rounding toward -inf).
// Division by a constant zero is kept unevaluated (Eval reports it);
// 0 // b folds to 0 for symbolic b, assuming b != 0.
func FloorDiv(a, b Expr) Expr {
	if !isInt(a) || !isInt(b) {
		return Expr{}
	}
	if b.isConst() {
		s := cSign(b)
		switch {
		case s == 0:
			return binNode(OpFloorDiv, a, b)
		case a.isConst():
			return cFloorDiv(a, b)
		case s < 0:
			// a // -c == (-a) // c
			return FloorDiv(Neg(a), cNeg(b))
		case cIsOne(b):
			return a
		}
		return floorDivPos(a, b)
	}
	if a.n == smallConst && a.c == 0 {
		return Const(0)
	}
	if q, ok := divExact(a, b); ok {
		// (b*Q) // b == Q wherever the division is defined (b != 0).
		return q
	}
	return binNode(OpFloorDiv, a, b)
}

func floorDivPos(a, b Expr) Expr {
	var one [1]Expr
	c, ts := linView(a, &one)
	qc, rc := cFloorDiv(c, b), cMod(c, b)
	var qbuf, rbuf [8]Expr
	q, r := qbuf[:0], rbuf[:0]
	for _, t := range ts {
		co := coefOf(t)
		if cIsZero(cMod(co, b)) {
			q = append(q, withCoef(t, cFloorDiv(co, b)))
		} else {
			r = append(r, t)
		}
	}
	if len(r) == 0 {
		// (b*Q + c) // b == Q + c // b
		return Add(append(q, qc)...)
	}
	g := cGcd(b, rc)
	for _, t := range r {
		if cIsOne(g) {
			break
		}
		g = cGcd(g, coefOf(t))
	}
	if !cIsOne(g) {
		b = cFloorDiv(b, g)
		rc = cFloorDiv(rc, g)
		for i, t := range r {
			r[i] = withCoef(t, cFloorDiv(coefOf(t), g))
		}
	}
	inner := sumOf(rc, r)
	var fd Expr
	if inner.n.op == OpFloorDiv && inner.n.args[1].isConst() && cSign(inner.n.args[1]) > 0 {
		// (x // c) // d == x // (c*d) for c, d > 0
		fd = FloorDiv(inner.n.args[0], cMul(inner.n.args[1], b))
	} else {
		fd = binNode(OpFloorDiv, inner, b)
	}
	if len(q) == 0 && cIsZero(qc) {
		return fd
	}
	return Add(append(q, qc, fd)...)
}

// Mod returns a % b with Python semantics (the result has the sign of b).
// A constant zero divisor is kept unevaluated; Mod(0, b) folds to 0 for
// symbolic b, assuming b != 0.
func Mod(a, b Expr) Expr {
	if !isInt(a) || !isInt(b) {
		return Expr{}
	}
	if b.isConst() {
		s := cSign(b)
		switch {
		case s == 0:
			return binNode(OpMod, a, b)
		case a.isConst():
			return cMod(a, b)
		case s < 0:
			// a % -c == -((-a) % c)
			return Neg(Mod(Neg(a), cNeg(b)))
		case cIsOne(b):
			return Const(0)
		}
		return modPos(a, b)
	}
	if a.n == smallConst && a.c == 0 {
		return Const(0)
	}
	if _, ok := divExact(a, b); ok {
		return Const(0)
	}
	return binNode(OpMod, a, b)
}

func modPos(a, b Expr) Expr {
	var one [1]Expr
	c, ts := linView(a, &one)
	rc := cMod(c, b)
	var rbuf [8]Expr
	r := rbuf[:0]
	for _, t := range ts {
		if !cIsZero(cMod(coefOf(t), b)) {
			r = append(r, t)
		}
	}
	if len(r) == 0 {
		return rc
	}
	g := cGcd(b, rc)
	for _, t := range r {
		if cIsOne(g) {
			break
		}
		g = cGcd(g, coefOf(t))
	}
	if !cIsOne(g) {
		// Mod(g*x, g*b) == g*Mod(x, b)
		for i, t := range r {
			r[i] = withCoef(t, cFloorDiv(coefOf(t), g))
		}
		return Mul(g, modPos(sumOf(cFloorDiv(rc, g), r), cFloorDiv(b, g)))
	}
	inner := sumOf(rc, r)
	if inner.n.op == OpMod && inner.n.args[1].isConst() && cSign(inner.n.args[1]) > 0 {
		d := inner.n.args[1]
		if cIsZero(cMod(d, b)) {
			// Mod(Mod(x, k*b), b) == Mod(x, b)
			return Mod(inner.n.args[0], b)
		}
		if cIsZero(cMod(b, d)) {
			// Mod(x, d) is already in [0, d) subset of [0, b)
			return inner
		}
	}
	return binNode(OpMod, inner, b)
}

// CeilDiv returns ceil(a / b), i.e. -((-a) // b). For a positive constant b
// the canonical form is (a + b - 1) // b.
func CeilDiv(a, b Expr) Expr {
	if !isInt(a) || !isInt(b) {
		return Expr{}
	}
	if b.isConst() {
		switch cSign(b) {
		case 1:
			return FloorDiv(Add(a, cSub(b, Const(1))), b)
		case -1:
			return CeilDiv(Neg(a), cNeg(b))
		}
	}
	return Neg(FloorDiv(Neg(a), b))
}

// ---- Min / Max ----

// Min returns the minimum of xs (invalid for no operands).
func Min(xs ...Expr) Expr { return minmax(OpMin, xs) }

// Max returns the maximum of xs (invalid for no operands).
func Max(xs ...Expr) Expr { return minmax(OpMax, xs) }

func minmax(o Op, xs []Expr) Expr {
	if len(xs) == 0 {
		return Expr{}
	}
	if len(xs) == 1 {
		if !isInt(xs[0]) {
			return Expr{}
		}
		return xs[0]
	}
	var c Expr
	var buf [8]Expr
	args := buf[:0]
	better := func(x Expr) bool { // x replaces the current constant
		if c.n == nil {
			return true
		}
		if o == OpMin {
			return cCmp(x, c) < 0
		}
		return cCmp(x, c) > 0
	}
	for _, x := range xs {
		if !isInt(x) {
			return Expr{}
		}
		if x.n.op == o {
			for _, y := range x.n.args {
				if y.isConst() {
					if better(y) {
						c = y
					}
				} else {
					args = append(args, y)
				}
			}
		} else if x.isConst() {
			if better(x) {
				c = x
			}
		} else {
			args = append(args, x)
		}
	}
	if len(args) > 1 {
		sortExprs(args, compare)
		args = slicesCompact(args)
	}
	if len(args) > 1 && len(args) <= 16 {
		// drop operands dominated by a constant offset of another
		keep := args[:0]
		var dropped [16]bool
		for i := range args {
			for j := i + 1; j < len(args); j++ {
				if dropped[i] {
					break
				}
				if dropped[j] {
					continue
				}
				d := Sub(args[i], args[j])
				if !d.isConst() {
					continue
				}
				s := cSign(d)
				if (o == OpMin) == (s >= 0) {
					dropped[i] = true
				} else {
					dropped[j] = true
				}
			}
		}
		for i, a := range args {
			if !dropped[i] {
				keep = append(keep, a)
			}
		}
		args = keep
	}
	if c.n != nil {
		if len(args) == 0 {
			return c
		}
		args = append(args, Expr{})
		copy(args[1:], args)
		args[0] = c
	}
	if len(args) == 1 {
		return args[0]
	}
	return newNode(o, args).finish()
}

func slicesCompact(xs []Expr) []Expr {
	out := xs[:1]
	for _, x := range xs[1:] {
		if compare(out[len(out)-1], x) != 0 {
			out = append(out, x)
		}
	}
	return out
}
