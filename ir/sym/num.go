package sym

import (
	"math"
	"math/big"
	"math/bits"
)

// maxConstBits bounds the size of constants produced by folding Pow: a power
// whose result would need more bits than this is kept unfolded (as a Pow node
// with a constant base). Add and Mul fold exactly at any size.
const maxConstBits = 4096

// ---- checked int64 arithmetic ----

func add64(a, b int64) (int64, bool) {
	s := a + b
	return s, (a^s)&(b^s) >= 0
}

func sub64(a, b int64) (int64, bool) {
	s := a - b
	return s, (a^b)&(a^s) >= 0
}

func mul64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	if (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	p := a * b
	if p/b != a {
		return 0, false
	}
	return p, true
}

// floorDiv64 is Python's a // b (b != 0).
func floorDiv64(a, b int64) (int64, bool) {
	if a == math.MinInt64 && b == -1 {
		return 0, false
	}
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q, true
}

// mod64 is Python's a % b (b != 0); the result has the sign of b.
func mod64(a, b int64) int64 {
	if b == -1 {
		return 0
	}
	r := a % b
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r
}

// pow64 computes a**k (k >= 0) with overflow detection.
func pow64(a, k int64) (int64, bool) {
	switch a {
	case 0:
		if k == 0 {
			return 1, true
		}
		return 0, true
	case 1:
		return 1, true
	case -1:
		if k&1 == 0 {
			return 1, true
		}
		return -1, true
	}
	if k >= 64 {
		return 0, false
	}
	r := int64(1)
	b := a
	for {
		if k&1 == 1 {
			var ok bool
			if r, ok = mul64(r, b); !ok {
				return 0, false
			}
		}
		k >>= 1
		if k == 0 {
			return r, true
		}
		var ok bool
		if b, ok = mul64(b, b); !ok {
			return 0, false
		}
	}
}

func absU64(a int64) uint64 {
	if a < 0 {
		return uint64(^a) + 1
	}
	return uint64(a)
}

func gcdU64(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// ---- constant Exprs (small int64 or big.Int) ----

// bigVal returns the value of a constant Expr as a big.Int. For big
// constants the node's own value is returned: callers must not mutate it.
func (e Expr) bigVal() *big.Int {
	if e.n == smallConst {
		return big.NewInt(e.c)
	}
	return e.n.big
}

func fromBig(b *big.Int) Expr {
	if b.IsInt64() {
		return Const(b.Int64())
	}
	n := &node{op: OpConst, big: b}
	return n.finish()
}

func (e Expr) isConst() bool { return e.n != nil && e.n.op == OpConst }

func cAdd(a, b Expr) Expr {
	if a.n == smallConst && b.n == smallConst {
		if s, ok := add64(a.c, b.c); ok {
			return Const(s)
		}
	}
	return fromBig(new(big.Int).Add(a.bigVal(), b.bigVal()))
}

func cSub(a, b Expr) Expr {
	if a.n == smallConst && b.n == smallConst {
		if s, ok := sub64(a.c, b.c); ok {
			return Const(s)
		}
	}
	return fromBig(new(big.Int).Sub(a.bigVal(), b.bigVal()))
}

func cMul(a, b Expr) Expr {
	if a.n == smallConst && b.n == smallConst {
		if p, ok := mul64(a.c, b.c); ok {
			return Const(p)
		}
	}
	return fromBig(new(big.Int).Mul(a.bigVal(), b.bigVal()))
}

func cNeg(a Expr) Expr { return cSub(Const(0), a) }

func cSign(a Expr) int {
	if a.n == smallConst {
		switch {
		case a.c > 0:
			return 1
		case a.c < 0:
			return -1
		}
		return 0
	}
	return a.n.big.Sign()
}

func cAbs(a Expr) Expr {
	if cSign(a) < 0 {
		return cNeg(a)
	}
	return a
}

func cCmp(a, b Expr) int {
	if a.n == smallConst && b.n == smallConst {
		switch {
		case a.c < b.c:
			return -1
		case a.c > b.c:
			return 1
		}
		return 0
	}
	return a.bigVal().Cmp(b.bigVal())
}

func cIsZero(a Expr) bool { return a.n == smallConst && a.c == 0 }
func cIsOne(a Expr) bool  { return a.n == smallConst && a.c == 1 }

// cFloorDiv is Python floor division of constants; b must be non-zero.
func cFloorDiv(a, b Expr) Expr {
	if a.n == smallConst && b.n == smallConst {
		if q, ok := floorDiv64(a.c, b.c); ok {
			return Const(q)
		}
	}
	bb := b.bigVal()
	q, m := new(big.Int).QuoRem(a.bigVal(), bb, new(big.Int))
	if m.Sign() != 0 && (m.Sign() < 0) != (bb.Sign() < 0) {
		q.Sub(q, big.NewInt(1))
	}
	return fromBig(q)
}

// cMod is Python modulo of constants; b must be non-zero.
func cMod(a, b Expr) Expr {
	if a.n == smallConst && b.n == smallConst {
		return Const(mod64(a.c, b.c))
	}
	bb := b.bigVal()
	m := new(big.Int).Rem(a.bigVal(), bb)
	if m.Sign() != 0 && (m.Sign() < 0) != (bb.Sign() < 0) {
		m.Add(m, bb)
	}
	return fromBig(m)
}

// cGcd returns the non-negative gcd of two constants (gcd(0, x) = |x|).
func cGcd(a, b Expr) Expr {
	if a.n == smallConst && b.n == smallConst {
		g := gcdU64(absU64(a.c), absU64(b.c))
		if g <= math.MaxInt64 {
			return Const(int64(g))
		}
	}
	x := new(big.Int).Abs(a.bigVal())
	y := new(big.Int).Abs(b.bigVal())
	return fromBig(new(big.Int).GCD(nil, nil, x, y))
}

// cPow folds b**k (k >= 0) unless the result would exceed maxConstBits.
func cPow(b Expr, k int64) (Expr, bool) {
	if b.n == smallConst {
		if r, ok := pow64(b.c, k); ok {
			return Const(r), true
		}
	}
	if k == 0 {
		return Const(1), true
	}
	bb := b.bigVal()
	bl := int64(bb.BitLen())
	if k > maxConstBits || bl*k > maxConstBits {
		return Expr{}, false
	}
	return fromBig(new(big.Int).Exp(bb, big.NewInt(k), nil)), true
}

// satMul multiplies non-negative counts, saturating at a large value.
func satMul(a, b int) int {
	const lim = 1 << 40
	if a == 0 || b == 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > lim {
		return lim
	}
	return int(lo)
}

func satPowInt(a int, k int64) int {
	r := 1
	for i := int64(0); i < k; i++ {
		r = satMul(r, a)
		if r >= 1<<40 || r == 0 || a == 1 {
			break
		}
	}
	return r
}
