package sym

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Bound is one end of a Range; it may be infinite (torch's int_oo / -int_oo).
// Inf: -1 = -inf, +1 = +inf, 0 = the finite value V (V is ignored otherwise).
type Bound struct {
	V   int64
	Inf int8
}

// Finite returns the finite bound v.
func Finite(v int64) Bound { return Bound{V: v} }

// PosInf returns +inf.
func PosInf() Bound { return Bound{Inf: 1} }

// NegInf returns -inf.
func NegInf() Bound { return Bound{Inf: -1} }

// IsFinite reports whether b is finite.
func (b Bound) IsFinite() bool { return b.Inf == 0 }

// String prints "7", "inf" or "-inf".
func (b Bound) String() string {
	switch {
	case b.Inf > 0:
		return "inf"
	case b.Inf < 0:
		return "-inf"
	}
	return strconv.FormatInt(b.V, 10)
}

// Cmp orders bounds: -inf < every finite value < +inf.
func (b Bound) Cmp(o Bound) int {
	bi, oi := b.norm(), o.norm()
	if bi != oi {
		if bi < oi {
			return -1
		}
		return 1
	}
	if bi != 0 {
		return 0
	}
	switch {
	case b.V < o.V:
		return -1
	case b.V > o.V:
		return 1
	}
	return 0
}

func (b Bound) norm() int8 {
	switch {
	case b.Inf > 0:
		return 1
	case b.Inf < 0:
		return -1
	}
	return 0
}

// ParseBound parses a bound: an integer, "inf", "+inf", "-inf", "oo", "-oo",
// "int_oo", "-int_oo", "Infinity", "-Infinity", "IntInfinity()",
// "NegativeIntInfinity()".
func ParseBound(s string) (Bound, error) {
	t := strings.TrimSpace(s)
	switch t {
	case "inf", "+inf", "oo", "+oo", "int_oo", "+int_oo", "Infinity", "+Infinity", "IntInfinity()", "math.inf":
		return PosInf(), nil
	case "-inf", "-oo", "-int_oo", "-Infinity", "NegativeIntInfinity()", "-math.inf":
		return NegInf(), nil
	}
	if strings.HasPrefix(t, "Integer(") && strings.HasSuffix(t, ")") {
		t = strings.TrimSpace(t[len("Integer(") : len(t)-1])
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return Bound{}, fmt.Errorf("sym: invalid bound %q: expected an integer or an infinity", s)
	}
	return Finite(v), nil
}

// Range is a closed integer interval, possibly unbounded, as in torch's
// ValueRanges ("VR[2, int_oo]"). A Range with Lo > Hi is empty.
type Range struct {
	Lo, Hi Bound
}

// Unbounded returns [-inf, inf].
func Unbounded() Range { return Range{NegInf(), PosInf()} }

// Point returns [v, v].
func Point(v int64) Range { return Range{Finite(v), Finite(v)} }

// String prints "[lo, hi]", e.g. "[2, inf]".
func (r Range) String() string { return "[" + r.Lo.String() + ", " + r.Hi.String() + "]" }

// Contains reports whether v is in r.
func (r Range) Contains(v int64) bool {
	return r.Lo.Cmp(Finite(v)) <= 0 && Finite(v).Cmp(r.Hi) <= 0
}

// IsEmpty reports whether r contains no integer.
func (r Range) IsEmpty() bool {
	return r.Lo.Cmp(r.Hi) > 0 || r.Lo.Inf > 0 || r.Hi.Inf < 0
}

// Const returns v if r is exactly [v, v].
func (r Range) Const() (int64, bool) {
	if r.Lo.Inf == 0 && r.Hi.Inf == 0 && r.Lo.V == r.Hi.V {
		return r.Lo.V, true
	}
	return 0, false
}

// Intersect returns the intersection of r and o.
func (r Range) Intersect(o Range) Range {
	return Range{maxB(r.Lo, o.Lo), minB(r.Hi, o.Hi)}
}

// Union returns the smallest range containing r and o.
func (r Range) Union(o Range) Range {
	return Range{minB(r.Lo, o.Lo), maxB(r.Hi, o.Hi)}
}

// ParseRange parses "[lo, hi]" or torch's "VR[lo, hi]" (bounds as in
// ParseBound).
func ParseRange(s string) (Range, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimPrefix(t, "VR")
	if !strings.HasPrefix(t, "[") || !strings.HasSuffix(t, "]") {
		return Range{}, fmt.Errorf("sym: invalid range %q: expected [lo, hi]", s)
	}
	lo, hi, ok := strings.Cut(t[1:len(t)-1], ",")
	if !ok {
		return Range{}, fmt.Errorf("sym: invalid range %q: expected [lo, hi]", s)
	}
	l, err := ParseBound(lo)
	if err != nil {
		return Range{}, err
	}
	h, err := ParseBound(hi)
	if err != nil {
		return Range{}, err
	}
	return Range{l, h}, nil
}

// ---- sound bound arithmetic ----
//
// Each operation takes the rounding direction: upper=false computes a value
// <= the true one, upper=true a value >= it. int64 overflow saturates in the
// sound direction (a too-large lower bound becomes MaxInt64, a too-large upper
// bound +inf, and symmetrically for negative overflow).

func minB(a, b Bound) Bound {
	if a.Cmp(b) <= 0 {
		return a
	}
	return b
}

func maxB(a, b Bound) Bound {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}

func satB(sign int, upper bool) Bound {
	if sign > 0 {
		if upper {
			return PosInf()
		}
		return Finite(math.MaxInt64)
	}
	if upper {
		return Finite(math.MinInt64)
	}
	return NegInf()
}

func signB(a Bound) int {
	switch {
	case a.Inf > 0:
		return 1
	case a.Inf < 0:
		return -1
	case a.V > 0:
		return 1
	case a.V < 0:
		return -1
	}
	return 0
}

func addB(a, b Bound, upper bool) Bound {
	if a.Inf != 0 || b.Inf != 0 {
		if a.Inf != 0 && b.Inf != 0 && a.norm() != b.norm() {
			if upper {
				return PosInf()
			}
			return NegInf()
		}
		if a.Inf != 0 {
			return Bound{Inf: a.norm()}
		}
		return Bound{Inf: b.norm()}
	}
	if s, ok := add64(a.V, b.V); ok {
		return Finite(s)
	}
	return satB(signB(a), upper)
}

func negB(a Bound, upper bool) Bound {
	if a.Inf != 0 {
		return Bound{Inf: -a.norm()}
	}
	if a.V == math.MinInt64 {
		return satB(1, upper)
	}
	return Finite(-a.V)
}

func mulB(a, b Bound, upper bool) Bound {
	sa, sb := signB(a), signB(b)
	if sa == 0 || sb == 0 {
		return Finite(0) // inf * 0 = 0: values are finite integers
	}
	if a.Inf != 0 || b.Inf != 0 {
		return Bound{Inf: int8(sa * sb)}
	}
	if p, ok := mul64(a.V, b.V); ok {
		return Finite(p)
	}
	return satB(sa*sb, upper)
}

func powB(a Bound, k int64, upper bool) Bound {
	if a.Inf != 0 {
		if a.Inf < 0 && k&1 == 1 {
			return NegInf()
		}
		return PosInf()
	}
	if r, ok := pow64(a.V, k); ok {
		return Finite(r)
	}
	s := 1
	if a.V < 0 && k&1 == 1 {
		s = -1
	}
	return satB(s, upper)
}

// fdivB is a bound of floor(a / b) for b >= 1 (b may be +inf).
func fdivB(a, b Bound, upper bool) Bound {
	if b.Inf > 0 {
		switch {
		case a.Inf == 0:
			if a.V >= 0 {
				return Finite(0)
			}
			return Finite(-1)
		case a.Inf > 0: // inf / inf: anything in [0, inf)
			if upper {
				return PosInf()
			}
			return Finite(0)
		default: // -inf / inf: anything in (-inf, -1]
			if upper {
				return Finite(-1)
			}
			return NegInf()
		}
	}
	if a.Inf != 0 {
		return Bound{Inf: a.norm()}
	}
	q, _ := floorDiv64(a.V, b.V) // b >= 1: no overflow
	return Finite(q)
}

func rAdd(x, y Range) Range {
	return Range{addB(x.Lo, y.Lo, false), addB(x.Hi, y.Hi, true)}
}

func rNeg(x Range) Range {
	return Range{negB(x.Hi, false), negB(x.Lo, true)}
}

func rMul(x, y Range) Range {
	lo := minB(minB(mulB(x.Lo, y.Lo, false), mulB(x.Lo, y.Hi, false)),
		minB(mulB(x.Hi, y.Lo, false), mulB(x.Hi, y.Hi, false)))
	hi := maxB(maxB(mulB(x.Lo, y.Lo, true), mulB(x.Lo, y.Hi, true)),
		maxB(mulB(x.Hi, y.Lo, true), mulB(x.Hi, y.Hi, true)))
	return Range{lo, hi}
}

func rPow(x Range, k int64) Range {
	switch {
	case k == 0:
		return Point(1)
	case k&1 == 1:
		return Range{powB(x.Lo, k, false), powB(x.Hi, k, true)}
	case signB(x.Lo) >= 0:
		return Range{powB(x.Lo, k, false), powB(x.Hi, k, true)}
	case signB(x.Hi) <= 0:
		return Range{powB(x.Hi, k, false), powB(x.Lo, k, true)}
	}
	return Range{Finite(0), maxB(powB(x.Lo, k, true), powB(x.Hi, k, true))}
}

var zeroB, oneB = Finite(0), Finite(1)

// fdivPos bounds floor(x / y) for y >= 1: floor division is monotone in x
// and, for fixed sign of x, in y, so the extremes are at the corners.
func fdivPos(x, y Range) Range {
	lo := minB(minB(fdivB(x.Lo, y.Lo, false), fdivB(x.Lo, y.Hi, false)),
		minB(fdivB(x.Hi, y.Lo, false), fdivB(x.Hi, y.Hi, false)))
	hi := maxB(maxB(fdivB(x.Lo, y.Lo, true), fdivB(x.Lo, y.Hi, true)),
		maxB(fdivB(x.Hi, y.Lo, true), fdivB(x.Hi, y.Hi, true)))
	return Range{lo, hi}
}

func rFloorDiv(x, y Range) Range {
	if y.Lo.Cmp(zeroB) > 0 {
		return fdivPos(x, y)
	}
	if y.Hi.Cmp(zeroB) < 0 {
		return fdivPos(rNeg(x), rNeg(y))
	}
	var out Range
	have := false
	if y.Hi.Cmp(zeroB) > 0 {
		out, have = fdivPos(x, Range{oneB, y.Hi}), true
	}
	if y.Lo.Cmp(zeroB) < 0 {
		r := fdivPos(rNeg(x), Range{oneB, negB(y.Lo, true)})
		if have {
			out = out.Union(r)
		} else {
			out, have = r, true
		}
	}
	if !have {
		return Unbounded()
	}
	return out
}

func rMod(x, y Range) Range {
	if y.Lo.Cmp(zeroB) > 0 {
		// result in [0, y-1]; for x >= 0 also <= x, and x itself if x < y
		hi := addB(y.Hi, Finite(-1), true)
		if x.Lo.Cmp(zeroB) >= 0 {
			if x.Hi.Cmp(y.Lo) < 0 {
				return x
			}
			hi = minB(hi, x.Hi)
		}
		return Range{zeroB, hi}
	}
	if y.Hi.Cmp(zeroB) < 0 {
		// result in [y+1, 0]; for x <= 0 also >= x, and x itself if x > y
		lo := addB(y.Lo, Finite(1), false)
		if x.Hi.Cmp(zeroB) <= 0 {
			if x.Lo.Cmp(y.Hi) > 0 {
				return x
			}
			lo = maxB(lo, x.Lo)
		}
		return Range{lo, zeroB}
	}
	return Range{minB(zeroB, addB(y.Lo, Finite(1), false)), maxB(zeroB, addB(y.Hi, Finite(-1), true))}
}
