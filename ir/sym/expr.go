package sym

import (
	"cmp"
	"math/big"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Op is the kind of the root of a canonical expression. The numeric order of
// the kinds is part of the canonical ordering of operands.
type Op uint8

// Expression kinds.
const (
	OpInvalid  Op = iota // the zero Expr
	OpConst              // integer constant
	OpSym                // symbol
	OpPow                // base**n, n >= 2
	OpMul                // coefficient * factors
	OpAdd                // terms + constant
	OpFloorDiv           // a // b
	OpMod                // Mod(a, b)
	OpMin                // Min(a, b, ...)
	OpMax                // Max(a, b, ...)
	OpFalse              // False
	OpTrue               // True
	OpEq                 // L == R
	OpNe                 // L != R
	OpLe                 // L <= R (also the canonical form of <, >, >=)
	OpAnd                // And(a, b, ...)
	OpOr                 // Or(a, b, ...)
)

var opNames = [...]string{"Invalid", "Const", "Sym", "Pow", "Mul", "Add", "FloorDiv", "Mod", "Min", "Max", "False", "True", "Eq", "Ne", "Le", "And", "Or"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "Op(?)"
}

func (o Op) isBool() bool { return o >= OpFalse }

// node is the shared, immutable body of a non-trivial expression.
type node struct {
	op   Op
	exp  int64  // OpPow: exponent (>= 2)
	hash uint64 // structural hash
	name string // OpSym
	big  *big.Int
	k    Expr   // OpAdd: constant term (may be 0); OpMul: coefficient (never 0)
	args []Expr // operands; see the invariants in canonical.go
	inl  [2]Expr
}

// Expr is an immutable, canonical symbolic integer (or boolean) expression.
//
// Constants that fit in an int64 are stored inline (no allocation); symbols are
// interned. The zero Expr is invalid (IsValid reports false); every
// constructor returns the zero Expr when an operand is invalid or of the
// wrong sort (a boolean where an integer is required or vice versa).
type Expr struct {
	n *node // nil: invalid; smallConst: the constant c
	c int64
}

var (
	smallConst = &node{op: OpConst}
	trueNode   = &node{op: OpTrue}
	falseNode  = &node{op: OpFalse}
)

func init() {
	trueNode.finish()
	falseNode.finish()
}

// Const returns the integer constant v. It never allocates.
func Const(v int64) Expr { return Expr{n: smallConst, c: v} }

// True returns the boolean constant True.
func True() Expr { return Expr{n: trueNode} }

// False returns the boolean constant False.
func False() Expr { return Expr{n: falseNode} }

func boolExpr(b bool) Expr {
	if b {
		return True()
	}
	return False()
}

// ---- symbols ----

var reservedNames = map[string]bool{
	"True": true, "False": true, "true": true, "false": true,
	"and": true, "or": true, "not": true,
}

// ValidName reports whether name can be used as a symbol name: an ASCII
// identifier ([A-Za-z_][A-Za-z0-9_]*) other than True, False, true, false,
// and, or, not.
func ValidName(name string) bool {
	if name == "" || reservedNames[name] {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Fast table for the common torch names s<N>, u<N> (N < symTabSize).
const symTabSize = 4096

var (
	fastSyms [2][symTabSize]atomic.Pointer[node]
	symTab   sync.Map // string -> *node
)

func fastSymIndex(name string) (int, int, bool) {
	if len(name) < 2 || len(name) > 5 {
		return 0, 0, false
	}
	var t int
	switch name[0] {
	case 's':
		t = 0
	case 'u':
		t = 1
	default:
		return 0, 0, false
	}
	if name[1] == '0' && len(name) > 2 {
		return 0, 0, false
	}
	v := 0
	for i := 1; i < len(name); i++ {
		c := name[i]
		if c < '0' || c > '9' {
			return 0, 0, false
		}
		v = v*10 + int(c-'0')
	}
	if v >= symTabSize {
		return 0, 0, false
	}
	return t, v, true
}

// Sym returns the symbol with the given name (e.g. "s0" for a backed size,
// "u3" for an unbacked one). Symbols are interned, so repeated calls do not
// allocate. An invalid name (see ValidName) yields the invalid Expr.
func Sym(name string) Expr {
	if t, i, ok := fastSymIndex(name); ok {
		if n := fastSyms[t][i].Load(); n != nil {
			return Expr{n: n}
		}
		n := &node{op: OpSym, name: name}
		n.finish()
		fastSyms[t][i].CompareAndSwap(nil, n)
		return Expr{n: fastSyms[t][i].Load()}
	}
	if v, ok := symTab.Load(name); ok {
		return Expr{n: v.(*node)}
	}
	if !ValidName(name) {
		return Expr{}
	}
	n := &node{op: OpSym, name: strings.Clone(name)}
	n.finish()
	v, _ := symTab.LoadOrStore(n.name, n)
	return Expr{n: v.(*node)}
}

// ---- node construction and hashing ----

func newNode(o Op, args []Expr) *node {
	n := &node{op: o}
	if len(args) <= len(n.inl) {
		copy(n.inl[:], args)
		n.args = n.inl[:len(args):len(args)]
	} else {
		n.args = slices.Clone(args)
	}
	return n
}

func binNode(o Op, a, b Expr) Expr {
	n := &node{op: o}
	n.inl[0], n.inl[1] = a, b
	n.args = n.inl[:2:2]
	return n.finish()
}

func powRaw(b Expr, k int64) Expr {
	if k == 1 {
		return b
	}
	n := &node{op: OpPow, exp: k}
	n.inl[0] = b
	n.args = n.inl[:1:1]
	return n.finish()
}

func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func combine(h, x uint64) uint64 {
	return mix64(h*0x9E3779B97F4A7C15 ^ x)
}

func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return mix64(h)
}

func hashOf(e Expr) uint64 {
	if e.n == smallConst {
		return mix64(uint64(e.c) ^ 0x5851F42D4C957F2D)
	}
	if e.n == nil {
		return 0
	}
	return e.n.hash
}

func (n *node) finish() Expr {
	h := mix64(uint64(n.op)*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019)
	switch n.op {
	case OpSym:
		h = combine(h, hashString(n.name))
	case OpConst:
		h = combine(h, hashString(n.big.String()))
	case OpPow:
		h = combine(h, hashOf(n.args[0]))
		h = combine(h, uint64(n.exp))
	default:
		if n.op == OpAdd || n.op == OpMul {
			h = combine(h, hashOf(n.k))
		}
		for _, a := range n.args {
			h = combine(h, hashOf(a))
		}
	}
	n.hash = h
	return Expr{n: n}
}

// ---- ordering ----

// Compare is a total order on canonical expressions, consistent with Equal
// (Compare(a, b) == 0 exactly when a.Equal(b)). It is the order used to sort
// operands; the invalid Expr sorts first.
func Compare(a, b Expr) int { return compare(a, b) }

func compare(a, b Expr) int {
	if a.n == b.n {
		if a.n == smallConst {
			return cmp.Compare(a.c, b.c)
		}
		return 0
	}
	if a.n == nil {
		return -1
	}
	if b.n == nil {
		return 1
	}
	oa, ob := a.n.op, b.n.op
	if oa != ob {
		return cmp.Compare(oa, ob)
	}
	switch oa {
	case OpConst:
		return cCmp(a, b)
	case OpSym:
		return natCmp(a.n.name, b.n.name)
	case OpPow:
		if c := compare(a.n.args[0], b.n.args[0]); c != 0 {
			return c
		}
		return cmp.Compare(a.n.exp, b.n.exp)
	case OpTrue, OpFalse:
		return 0
	}
	if c := compareList(a.n.args, b.n.args); c != 0 {
		return c
	}
	if oa == OpAdd || oa == OpMul {
		return cCmp(a.n.k, b.n.k)
	}
	return 0
}

func compareList(a, b []Expr) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// natCmp orders names naturally: "s2" < "s10". Ties (such as "s01" vs "s1")
// are broken by plain string order, so the order is total.
func natCmp(a, b string) int {
	pa, da := splitDigits(a)
	pb, db := splitDigits(b)
	if c := strings.Compare(pa, pb); c != 0 {
		return c
	}
	ta, tb := strings.TrimLeft(da, "0"), strings.TrimLeft(db, "0")
	if len(ta) != len(tb) {
		return cmp.Compare(len(ta), len(tb))
	}
	if c := strings.Compare(ta, tb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func splitDigits(s string) (string, string) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	return s[:i], s[i:]
}

// factorBase splits a Mul factor into base and exponent.
func factorBase(x Expr) (Expr, int64) {
	if x.n.op == OpPow {
		return x.n.args[0], x.n.exp
	}
	return x, 1
}

// compareFactor orders Mul factors by base, then exponent.
func compareFactor(a, b Expr) int {
	ba, ea := factorBase(a)
	bb, eb := factorBase(b)
	if c := compare(ba, bb); c != 0 {
		return c
	}
	return cmp.Compare(ea, eb)
}

func monoLen(x Expr) int {
	if x.n.op == OpMul {
		return len(x.n.args)
	}
	return 1
}

func monoAt(x Expr, i int) Expr {
	if x.n.op == OpMul {
		return x.n.args[i]
	}
	return x
}

// monoDegree is the total degree of a monomial (saturating).
func monoDegree(x Expr) int64 {
	var d int64
	for i, n := 0, monoLen(x); i < n; i++ {
		_, e := factorBase(monoAt(x, i))
		if s, ok := add64(d, e); ok {
			d = s
		} else {
			return 1<<63 - 1
		}
	}
	return d
}

// compareMono orders Add terms by their monomial (the term without its
// numeric coefficient): higher total degree first, then lexicographically by
// factors.
func compareMono(a, b Expr) int {
	if da, db := monoDegree(a), monoDegree(b); da != db {
		return cmp.Compare(db, da)
	}
	la, lb := monoLen(a), monoLen(b)
	for i := 0; i < la && i < lb; i++ {
		if c := compareFactor(monoAt(a, i), monoAt(b, i)); c != 0 {
			return c
		}
	}
	return cmp.Compare(la, lb)
}

func sortExprs(xs []Expr, f func(a, b Expr) int) {
	if len(xs) <= 12 {
		for i := 1; i < len(xs); i++ {
			x := xs[i]
			j := i
			for j > 0 && f(xs[j-1], x) > 0 {
				xs[j] = xs[j-1]
				j--
			}
			xs[j] = x
		}
		return
	}
	slices.SortFunc(xs, f)
}

// ---- accessors ----

// IsValid reports whether e is a valid expression (not the zero Expr).
func (e Expr) IsValid() bool { return e.n != nil }

// Equal reports whether e and o have the same canonical form. Equality is
// sound (equal forms denote the same function of the symbols) but incomplete:
// some mathematically equal expressions have different canonical forms.
func (e Expr) Equal(o Expr) bool {
	if e.n == o.n {
		return e.c == o.c
	}
	if e.n == nil || o.n == nil || e.n == smallConst || o.n == smallConst {
		return false
	}
	if e.n.hash != o.n.hash {
		return false
	}
	return compare(e, o) == 0
}

// Hash returns a structural hash: Equal expressions have equal hashes.
func (e Expr) Hash() uint64 { return hashOf(e) }

// Const returns the value of e if it is an integer constant that fits in an
// int64.
func (e Expr) Const() (int64, bool) {
	if e.n == smallConst {
		return e.c, true
	}
	return 0, false
}

// IsConst reports whether e is an integer constant (possibly one that does
// not fit in an int64, see the package doc on overflow).
func (e Expr) IsConst() bool { return e.isConst() }

// IsBool reports whether e is a boolean expression (True, False, a
// comparison, And, Or).
func (e Expr) IsBool() bool { return e.n != nil && e.n.op.isBool() }

// IsInt reports whether e is a valid integer-valued expression.
func (e Expr) IsInt() bool { return e.n != nil && !e.n.op.isBool() }

func isInt(e Expr) bool  { return e.n != nil && !e.n.op.isBool() }
func isBool(e Expr) bool { return e.n != nil && e.n.op.isBool() }

// Op returns the kind of the root of e.
func (e Expr) Op() Op {
	if e.n == nil {
		return OpInvalid
	}
	return e.n.op
}

// Name returns the symbol name if e is a symbol.
func (e Expr) Name() (string, bool) {
	if e.n != nil && e.n.op == OpSym {
		return e.n.name, true
	}
	return "", false
}

// Args returns the operands of e such that applying the constructor for
// e.Op() to them yields an expression Equal to e:
//
//	OpAdd:      terms..., then the constant term if non-zero    (Add)
//	OpMul:      the coefficient if not 1, then the factors       (Mul)
//	OpPow:      [base, Const(n)]                                 (Pow)
//	OpFloorDiv: [a, b]; OpMod: [a, b]                            (FloorDiv, Mod)
//	OpMin, OpMax, OpAnd, OpOr: the operands
//	OpEq, OpNe, OpLe: [L, R] as printed ("L == R", "L != R", "L <= R")
//
// Constants, symbols, True, False and the invalid Expr have no operands.
// The returned slice is fresh and may be modified.
func (e Expr) Args() []Expr {
	if e.n == nil {
		return nil
	}
	n := e.n
	switch n.op {
	case OpConst, OpSym, OpTrue, OpFalse:
		return nil
	case OpAdd:
		out := slices.Clone(n.args)
		if !cIsZero(n.k) {
			out = append(out, n.k)
		}
		return out
	case OpMul:
		out := make([]Expr, 0, len(n.args)+1)
		if !cIsOne(n.k) {
			out = append(out, n.k)
		}
		return append(out, n.args...)
	case OpPow:
		return []Expr{n.args[0], Const(n.exp)}
	case OpEq, OpNe, OpLe:
		l, r := relSides(n.args[0])
		return []Expr{l, r}
	}
	return slices.Clone(n.args)
}
