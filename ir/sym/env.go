package sym

import (
	"fmt"
	"maps"
	"slices"
)

// Env holds what is known about symbols: value ranges, hints (trace-time
// values of backed symbols) and whether a symbol is unbacked.
//
// The zero Env (and a nil *Env, for the read-only methods) is usable: it
// knows nothing, and unknown symbols range over [-inf, inf]. Callers register
// symbols used as sizes with Lo >= 0. An Env is not safe for concurrent
// mutation; concurrent reads are fine.
type Env struct {
	ranges   map[string]Range
	hints    map[string]int64
	unbacked map[string]bool
}

// NewEnv returns an empty Env.
func NewEnv() *Env { return &Env{} }

// Declare registers (or re-registers) a symbol with its range, optional hint
// and unbacked flag.
func (v *Env) Declare(name string, r Range, hint *int64, unbacked bool) {
	if v.ranges == nil {
		v.ranges = map[string]Range{}
	}
	v.ranges[name] = r
	if hint != nil {
		if v.hints == nil {
			v.hints = map[string]int64{}
		}
		v.hints[name] = *hint
	} else {
		delete(v.hints, name)
	}
	if unbacked {
		if v.unbacked == nil {
			v.unbacked = map[string]bool{}
		}
		v.unbacked[name] = true
	} else {
		delete(v.unbacked, name)
	}
}

// Range returns the declared range of a symbol.
func (v *Env) Range(name string) (Range, bool) {
	if v == nil {
		return Unbounded(), false
	}
	r, ok := v.ranges[name]
	if !ok {
		return Unbounded(), false
	}
	return r, true
}

// SetRange sets the range of a symbol (declaring it if needed).
func (v *Env) SetRange(name string, r Range) {
	if v.ranges == nil {
		v.ranges = map[string]Range{}
	}
	v.ranges[name] = r
}

// Refine intersects the range of a symbol with r (declaring it if needed).
func (v *Env) Refine(name string, r Range) {
	old, _ := v.Range(name)
	v.SetRange(name, old.Intersect(r))
}

// Hint returns the trace-time value of a symbol, if known.
func (v *Env) Hint(name string) (int64, bool) {
	if v == nil {
		return 0, false
	}
	h, ok := v.hints[name]
	return h, ok
}

// SetHint records the trace-time value of a symbol.
func (v *Env) SetHint(name string, h int64) {
	if v.hints == nil {
		v.hints = map[string]int64{}
	}
	v.hints[name] = h
	if v.ranges == nil {
		v.ranges = map[string]Range{}
	}
	if _, ok := v.ranges[name]; !ok {
		v.ranges[name] = Unbounded()
	}
}

// IsUnbacked reports whether the symbol was declared unbacked.
func (v *Env) IsUnbacked(name string) bool {
	return v != nil && v.unbacked[name]
}

// Symbols returns the declared symbols, sorted (sort.Strings order).
func (v *Env) Symbols() []string {
	if v == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(v.ranges))
}

// Clone returns an independent copy of v.
func (v *Env) Clone() *Env {
	if v == nil {
		return NewEnv()
	}
	return &Env{
		ranges:   maps.Clone(v.ranges),
		hints:    maps.Clone(v.hints),
		unbacked: maps.Clone(v.unbacked),
	}
}

// Bounds returns a sound range for e under the symbol ranges (interval
// arithmetic, infinity-aware, with overflow saturating in the sound
// direction). Booleans have ranges within [0, 1]. The invalid Expr and
// divisions by a range containing only zero yield [-inf, inf].
func (v *Env) Bounds(e Expr) Range {
	n := e.n
	if n == smallConst {
		return Point(e.c)
	}
	if n == nil {
		return Unbounded()
	}
	switch n.op {
	case OpConst:
		if n.big.Sign() > 0 {
			return Range{Finite(1<<63 - 1), PosInf()}
		}
		return Range{NegInf(), Finite(-1 << 63)}
	case OpSym:
		r, _ := v.Range(n.name)
		return r
	case OpTrue:
		return Point(1)
	case OpFalse:
		return Point(0)
	case OpAdd:
		r := v.Bounds(n.k)
		for _, a := range n.args {
			r = rAdd(r, v.Bounds(a))
		}
		return r
	case OpMul:
		r := v.Bounds(n.k)
		for _, a := range n.args {
			r = rMul(r, v.Bounds(a))
		}
		return r
	case OpPow:
		return rPow(v.Bounds(n.args[0]), n.exp)
	case OpFloorDiv:
		return rFloorDiv(v.Bounds(n.args[0]), v.Bounds(n.args[1]))
	case OpMod:
		return rMod(v.Bounds(n.args[0]), v.Bounds(n.args[1]))
	case OpMin, OpMax:
		r := v.Bounds(n.args[0])
		for _, a := range n.args[1:] {
			ra := v.Bounds(a)
			if n.op == OpMin {
				r = Range{minB(r.Lo, ra.Lo), minB(r.Hi, ra.Hi)}
			} else {
				r = Range{maxB(r.Lo, ra.Lo), maxB(r.Hi, ra.Hi)}
			}
		}
		return r
	case OpEq, OpNe, OpLe:
		return boolRange(v.truth(e))
	case OpAnd, OpOr:
		return boolRange(v.truth(e))
	}
	return Unbounded()
}

// truth values: -1 known false, 0 unknown, 1 known true
func boolRange(t int) Range {
	switch t {
	case 1:
		return Point(1)
	case -1:
		return Point(0)
	}
	return Range{Finite(0), Finite(1)}
}

func (v *Env) truth(e Expr) int {
	n := e.n
	switch n.op {
	case OpTrue:
		return 1
	case OpFalse:
		return -1
	case OpEq, OpNe, OpLe:
		d := v.Bounds(n.args[0])
		var t int
		switch n.op {
		case OpLe:
			switch {
			case d.Hi.Cmp(zeroB) <= 0:
				t = 1
			case d.Lo.Cmp(zeroB) > 0:
				t = -1
			}
		default:
			switch {
			case d.Lo.Cmp(zeroB) == 0 && d.Hi.Cmp(zeroB) == 0:
				t = 1
			case d.Lo.Cmp(zeroB) > 0 || d.Hi.Cmp(zeroB) < 0:
				t = -1
			}
			if n.op == OpNe {
				t = -t
			}
		}
		if t == 0 {
			t = v.truthLinear(n.op, n.args[0])
		}
		return t
	case OpAnd:
		res := 1
		for _, a := range n.args {
			switch v.truth(a) {
			case -1:
				return -1
			case 0:
				res = 0
			}
		}
		return res
	case OpOr:
		res := -1
		for _, a := range n.args {
			switch v.truth(a) {
			case 1:
				return 1
			case 0:
				res = 0
			}
		}
		return res
	}
	// integer used as a condition: true when non-zero
	r := v.Bounds(e)
	switch {
	case r.Lo.Cmp(zeroB) > 0 || r.Hi.Cmp(zeroB) < 0:
		return 1
	case r.Lo.Cmp(zeroB) == 0 && r.Hi.Cmp(zeroB) == 0:
		return -1
	}
	return 0
}

// truthLinear tries harder on d <= 0 when plain interval arithmetic fails
// because d contains Min/Max terms: Min(a, ...) <= a and Max(a, ...) >= a,
// so d <= 0 holds if it holds with a positive Min term (or a negative Max
// term) replaced by one of its operands. It returns 0 when nothing is learnt.
func (v *Env) truthLinear(o Op, d Expr) int {
	if o != OpLe {
		return 0
	}
	// d <= 0 is implied if, for some term Max(a, b, ...) with coefficient -1,
	// d with that term replaced by any single operand is <= 0 (Max >= each).
	var one [1]Expr
	c, ts := linView(d, &one)
	for i, t := range ts {
		co := coefOf(t)
		base := t
		if t.n.op == OpMul {
			if len(t.n.args) != 1 {
				continue
			}
			base = t.n.args[0]
		}
		var want Op
		switch cSign(co) {
		case -1:
			want = OpMax // -Max(...) <= -a
		case 1:
			want = OpMin // Min(...) <= a
		}
		if base.n.op != want {
			continue
		}
		for _, a := range base.n.args {
			rest := make([]Expr, 0, len(ts)+1)
			rest = append(rest, ts[:i]...)
			rest = append(rest, ts[i+1:]...)
			rest = append(rest, Mul(co, a), c)
			if v.Bounds(Add(rest...)).Hi.Cmp(zeroB) <= 0 {
				return 1
			}
		}
	}
	return 0
}

// UpperBound returns the upper end of Bounds(e).
func (v *Env) UpperBound(e Expr) Bound { return v.Bounds(e).Hi }

// LowerBound returns the lower end of Bounds(e).
func (v *Env) LowerBound(e Expr) Bound { return v.Bounds(e).Lo }

// StaticallyKnownTrue reports whether cond is provably true from its
// canonical form and the symbol ranges (sound, incomplete). An integer
// expression counts as a condition that is true when non-zero; the invalid
// Expr is never known true.
func (v *Env) StaticallyKnownTrue(cond Expr) bool {
	return cond.n != nil && v.truth(cond) == 1
}

// StaticallyKnownFalse reports whether cond is provably false.
func (v *Env) StaticallyKnownFalse(cond Expr) bool {
	return cond.n != nil && v.truth(cond) == -1
}

// EvalHint evaluates e with every symbol replaced by its hint. It fails for a
// symbol without a hint (e.g. an unbacked one), naming it, and otherwise as
// Eval does.
func (v *Env) EvalHint(e Expr) (int64, error) {
	syms := e.Symbols()
	bind := make(map[string]int64, len(syms))
	for _, s := range syms {
		h, ok := v.Hint(s)
		if !ok {
			if v.IsUnbacked(s) {
				return 0, fmt.Errorf("sym: unbacked symbol %s has no hint: %w", s, &UnboundError{Name: s})
			}
			return 0, fmt.Errorf("sym: symbol %s has no hint: %w", s, &UnboundError{Name: s})
		}
		bind[s] = h
	}
	return e.Eval(bind)
}

// Simplify rewrites e using the symbol ranges: Min/Max operands that are
// provably dominated are dropped, Mod(x, b) with 0 <= x < b becomes x,
// x // b with 0 <= x < b becomes 0, and conditions that are statically known
// become True/False. The result is Equal-comparable canonical form and
// denotes the same value for every assignment within the ranges.
func (v *Env) Simplify(e Expr) Expr {
	if e.n == nil || e.n == smallConst {
		return e
	}
	e = mapChildren(e, v.Simplify)
	if e.n == nil || e.n == smallConst {
		return e
	}
	n := e.n
	switch n.op {
	case OpMin, OpMax:
		args := slices.Clone(n.args)
		for i := 0; i < len(args); i++ {
			for j := 0; j < len(args); j++ {
				if i == j {
					continue
				}
				// drop args[i] if args[j] is never worse
				d := v.Bounds(Sub(args[j], args[i]))
				var wins bool
				if n.op == OpMax {
					wins = d.Lo.Cmp(zeroB) >= 0
				} else {
					wins = d.Hi.Cmp(zeroB) <= 0
				}
				if wins {
					args = slices.Delete(args, i, i+1)
					i--
					break
				}
			}
		}
		if len(args) != len(n.args) {
			if n.op == OpMin {
				return Min(args...)
			}
			return Max(args...)
		}
	case OpMod, OpFloorDiv:
		x, y := v.Bounds(n.args[0]), v.Bounds(n.args[1])
		if x.Lo.Cmp(zeroB) >= 0 && y.Lo.Cmp(zeroB) > 0 && x.Hi.Cmp(y.Lo) < 0 {
			if n.op == OpMod {
				return n.args[0]
			}
			return Const(0)
		}
	case OpEq, OpNe, OpLe, OpAnd, OpOr:
		switch v.truth(e) {
		case 1:
			return True()
		case -1:
			return False()
		}
	}
	return e
}
