package sym

import (
	"fmt"
	"math/big"
	"strings"
)

// ParseError describes a syntax or sort error found by Parse.
type ParseError struct {
	Input  string // the input (truncated to 200 bytes)
	Offset int    // byte offset of the problem in the input
	Msg    string // what was expected / what went wrong
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("sym: parse %q: at offset %d: %s", e.Input, e.Offset, e.Msg)
}

// maxParseDepth bounds the nesting of the input (parentheses, calls,
// unary operators), so that hostile input cannot exhaust the stack.
const maxParseDepth = 2000

type tokKind uint8

const (
	tEOF tokKind = iota
	tNum
	tIdent
	tStr
	tOp
)

type token struct {
	kind tokKind
	s    string
	pos  int
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tStr:
		return "string " + t.s
	}
	s := t.s
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return fmt.Sprintf("%q", s)
}

type parser struct {
	src   string
	pos   int
	tok   token
	depth int
}

type parseAbort struct{ err *ParseError }

// pval is an intermediate parse value: an Expr, a true division num/den
// (only meaningful under CeilToInt/FloorToInt/floor/ceiling), or a string.
type pval struct {
	e     Expr
	den   Expr
	str   string
	isStr bool
	pos   int
}

func (v pval) isDiv() bool { return v.den.n != nil }

// Parse parses an expression in the plain form printed by String (and by
// torch / sympy str()), or a sympy srepr string as written by torch.export,
// e.g. "Add(Mul(Integer(2), Symbol('s0', integer=True, positive=True)), Integer(-1))".
// It never panics; errors are *ParseError values giving the offset and what
// was expected. See the package doc for the accepted syntax.
func Parse(s string) (e Expr, err error) {
	p := &parser{src: s}
	defer func() {
		if r := recover(); r != nil {
			pa, ok := r.(parseAbort)
			if !ok {
				panic(r)
			}
			e, err = Expr{}, pa.err
		}
	}()
	p.next()
	v := p.parseExpr()
	if p.tok.kind != tEOF {
		p.fail(p.tok.pos, "expected an operator or end of input, got "+p.tok.describe())
	}
	return p.value(v), nil
}

// MustParse is like Parse but panics on error. For tests and constants.
func MustParse(s string) Expr {
	e, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return e
}

func (p *parser) fail(pos int, msg string) {
	in := p.src
	if len(in) > 200 {
		in = in[:200] + "..."
	}
	panic(parseAbort{&ParseError{Input: in, Offset: pos, Msg: msg}})
}

// ---- lexer ----

func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (p *parser) next() {
	s := p.src
	i := p.pos
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	if i >= len(s) {
		p.tok = token{kind: tEOF, pos: i}
		p.pos = i
		return
	}
	start := i
	c := s[i]
	switch {
	case isDigit(c):
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i < len(s) && (s[i] == '.' || s[i] == 'e' || s[i] == 'E' || s[i] == 'x' || s[i] == '_' || isIdentStart(s[i])) {
			p.fail(i, "malformed integer literal (only decimal integers are supported)")
		}
		p.tok = token{kind: tNum, s: s[start:i], pos: start}
	case isIdentStart(c):
		for i < len(s) && (isIdentStart(s[i]) || isDigit(s[i])) {
			i++
		}
		p.tok = token{kind: tIdent, s: s[start:i], pos: start}
	case c == '\'' || c == '"':
		i++
		for i < len(s) && s[i] != c {
			if s[i] == '\\' || s[i] == '\n' {
				p.fail(i, "unsupported character in string literal")
			}
			i++
		}
		if i >= len(s) {
			p.fail(start, "unterminated string literal")
		}
		i++
		p.tok = token{kind: tStr, s: s[start+1 : i-1], pos: start}
	default:
		two := ""
		if i+1 < len(s) {
			two = s[i : i+2]
		}
		switch two {
		case "**", "//", "<=", ">=", "==", "!=":
			p.tok = token{kind: tOp, s: two, pos: start}
			i += 2
		default:
			if !strings.ContainsRune("+-*/%<>()[],=&|~", rune(c)) {
				p.fail(start, fmt.Sprintf("unexpected character %q", c))
			}
			p.tok = token{kind: tOp, s: s[i : i+1], pos: start}
			i++
		}
	}
	p.pos = i
}

func (p *parser) isOp(s string) bool { return p.tok.kind == tOp && p.tok.s == s }
func (p *parser) isKw(s string) bool { return p.tok.kind == tIdent && p.tok.s == s }
func (p *parser) expect(s, what string) {
	if !p.isOp(s) {
		p.fail(p.tok.pos, "expected "+what+", got "+p.tok.describe())
	}
	p.next()
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxParseDepth {
		p.fail(p.tok.pos, "expression nested too deeply")
	}
}

func (p *parser) leave() { p.depth-- }

// ---- sort checks ----

func (p *parser) intOf(v pval) Expr {
	switch {
	case v.isStr:
		p.fail(v.pos, "expected an integer expression, got a string")
	case v.isDiv():
		p.fail(v.pos, "true division '/' is only supported inside CeilToInt, FloorToInt, floor or ceiling")
	case !isInt(v.e):
		p.fail(v.pos, "expected an integer expression, got a boolean")
	}
	return v.e
}

func (p *parser) boolOf(v pval) Expr {
	if v.isStr || v.isDiv() || !isBool(v.e) {
		p.fail(v.pos, "expected a boolean expression")
	}
	return v.e
}

func (p *parser) value(v pval) Expr {
	if v.isStr || v.isDiv() || v.e.n == nil {
		p.intOf(v)
		p.fail(v.pos, "invalid expression")
	}
	return v.e
}

func (p *parser) check(e Expr, pos int, what string) pval {
	if e.n == nil {
		p.fail(pos, "invalid "+what)
	}
	return pval{e: e, pos: pos}
}

// ---- grammar (Python precedence) ----

func (p *parser) parseExpr() pval { return p.parseOr() }

func (p *parser) parseOr() pval {
	l := p.parseAnd()
	for p.isKw("or") {
		p.next()
		r := p.parseAnd()
		l = p.check(Or(p.boolOf(l), p.boolOf(r)), l.pos, "or")
	}
	return l
}

func (p *parser) parseAnd() pval {
	l := p.parseNot()
	for p.isKw("and") {
		p.next()
		r := p.parseNot()
		l = p.check(And(p.boolOf(l), p.boolOf(r)), l.pos, "and")
	}
	return l
}

func (p *parser) parseNot() pval {
	if p.isKw("not") {
		pos := p.tok.pos
		p.enter()
		p.next()
		v := p.parseNot()
		p.leave()
		return p.check(Not(p.boolOf(v)), pos, "not")
	}
	return p.parseCmp()
}

func cmpOp(t token) string {
	if t.kind != tOp {
		return ""
	}
	switch t.s {
	case "<", "<=", ">", ">=", "==", "!=":
		return t.s
	}
	return ""
}

func relByOp(op string, a, b Expr) Expr {
	switch op {
	case "<":
		return Lt(a, b)
	case "<=":
		return Le(a, b)
	case ">":
		return Gt(a, b)
	case ">=":
		return Ge(a, b)
	case "==":
		return Eq(a, b)
	}
	return Ne(a, b)
}

func (p *parser) parseCmp() pval {
	l := p.parseBitOr()
	var conds []Expr
	for op := cmpOp(p.tok); op != ""; op = cmpOp(p.tok) {
		p.next()
		r := p.parseBitOr()
		conds = append(conds, relByOp(op, p.intOf(l), p.intOf(r)))
		l = r
	}
	if conds == nil {
		return l
	}
	return p.check(And(conds...), l.pos, "comparison")
}

func (p *parser) parseBitOr() pval {
	l := p.parseBitAnd()
	for p.isOp("|") {
		p.next()
		r := p.parseBitAnd()
		l = p.check(Or(p.boolOf(l), p.boolOf(r)), l.pos, "|")
	}
	return l
}

func (p *parser) parseBitAnd() pval {
	l := p.parseArith()
	for p.isOp("&") {
		p.next()
		r := p.parseArith()
		l = p.check(And(p.boolOf(l), p.boolOf(r)), l.pos, "&")
	}
	return l
}

func (p *parser) parseArith() pval {
	l := p.parseTerm()
	for p.isOp("+") || p.isOp("-") {
		op := p.tok.s
		p.next()
		r := p.parseTerm()
		a, b := p.intOf(l), p.intOf(r)
		if op == "+" {
			l = p.check(Add(a, b), l.pos, "sum")
		} else {
			l = p.check(Sub(a, b), l.pos, "difference")
		}
	}
	return l
}

func (p *parser) parseTerm() pval {
	l := p.parseUnary()
	for p.isOp("*") || p.isOp("/") || p.isOp("//") || p.isOp("%") {
		op := p.tok.s
		opPos := p.tok.pos
		p.next()
		r := p.parseUnary()
		b := p.intOf(r)
		if l.isDiv() {
			switch op {
			case "*":
				l = pval{e: p.check(Mul(l.e, b), l.pos, "product").e, den: l.den, pos: l.pos}
			case "/":
				l = pval{e: l.e, den: p.check(Mul(l.den, b), l.pos, "product").e, pos: l.pos}
			default:
				p.intOf(l)
			}
			continue
		}
		a := p.intOf(l)
		switch op {
		case "*":
			l = p.check(Mul(a, b), l.pos, "product")
		case "/":
			l = pval{e: a, den: b, pos: l.pos}
		case "//":
			l = p.check(FloorDiv(a, b), opPos, "floor division")
		default:
			l = p.check(Mod(a, b), opPos, "modulo")
		}
	}
	return l
}

func (p *parser) parseUnary() pval {
	if p.isOp("-") || p.isOp("+") || p.isOp("~") {
		op, pos := p.tok.s, p.tok.pos
		p.enter()
		p.next()
		v := p.parseUnary()
		p.leave()
		switch op {
		case "+":
			if v.isDiv() {
				return v
			}
			return pval{e: p.intOf(v), pos: pos}
		case "-":
			if v.isDiv() {
				return pval{e: Neg(v.e), den: v.den, pos: pos}
			}
			return p.check(Neg(p.intOf(v)), pos, "negation")
		}
		return p.check(Not(p.boolOf(v)), pos, "~")
	}
	return p.parsePower()
}

func (p *parser) parsePower() pval {
	base := p.parsePrimary()
	if p.isOp("**") {
		opPos := p.tok.pos
		p.enter()
		p.next()
		ev := p.parseUnary()
		p.leave()
		return p.power(base, ev, opPos)
	}
	return base
}

func (p *parser) power(base, ev pval, pos int) pval {
	b := p.intOf(base)
	k, ok := p.intOf(ev).Const()
	if !ok || k < 0 {
		p.fail(ev.pos, "expected a non-negative integer constant exponent")
	}
	return p.check(Pow(b, k), pos, "power")
}

func (p *parser) parsePrimary() pval {
	t := p.tok
	switch t.kind {
	case tNum:
		p.next()
		b, ok := new(big.Int).SetString(t.s, 10)
		if !ok {
			p.fail(t.pos, "malformed integer literal")
		}
		return pval{e: fromBig(b), pos: t.pos}
	case tStr:
		p.next()
		return pval{str: t.s, isStr: true, pos: t.pos}
	case tIdent:
		p.next()
		if p.isOp("(") {
			return p.call(t)
		}
		switch t.s {
		case "True", "true":
			return pval{e: True(), pos: t.pos}
		case "False", "false":
			return pval{e: False(), pos: t.pos}
		case "and", "or", "not":
			p.fail(t.pos, "expected an expression, got keyword "+t.s)
		case "oo", "zoo", "nan", "int_oo":
			p.fail(t.pos, "infinity / nan is not an integer expression")
		}
		return p.check(Sym(t.s), t.pos, "symbol")
	case tOp:
		if t.s == "(" {
			p.enter()
			p.next()
			v := p.parseExpr()
			p.expect(")", "')'")
			p.leave()
			v.pos = t.pos
			return v
		}
	}
	p.fail(t.pos, "expected an expression, got "+t.describe())
	return pval{}
}

// call parses the argument list of a function application and applies it.
func (p *parser) call(name token) pval {
	p.enter()
	p.next() // '('
	var args []pval
	for first := true; !p.isOp(")"); first = false {
		if !first {
			if !p.isOp(",") {
				p.fail(p.tok.pos, "expected ',' or ')', got "+p.tok.describe())
			}
			p.next()
			if p.isOp(")") {
				break
			}
		}
		// keyword argument: ident '=' expr (ignored, e.g. integer=True)
		if p.tok.kind == tIdent && p.peekIsAssign() {
			p.next()
			p.next()
			p.parseExpr()
			continue
		}
		args = append(args, p.parseExpr())
	}
	p.next() // ')'
	p.leave()
	return p.apply(name, args)
}

func (p *parser) peekIsAssign() bool {
	i := p.pos
	for i < len(p.src) && (p.src[i] == ' ' || p.src[i] == '\t' || p.src[i] == '\n' || p.src[i] == '\r') {
		i++
	}
	return i < len(p.src) && p.src[i] == '=' && (i+1 >= len(p.src) || p.src[i+1] != '=')
}

func (p *parser) arity(name token, args []pval, n int) {
	if len(args) != n {
		p.fail(name.pos, fmt.Sprintf("%s expects %d argument(s), got %d", name.s, n, len(args)))
	}
}

func (p *parser) minArity(name token, args []pval, n int) {
	if len(args) < n {
		p.fail(name.pos, fmt.Sprintf("%s expects at least %d argument(s), got %d", name.s, n, len(args)))
	}
}

func (p *parser) ints(args []pval) []Expr {
	out := make([]Expr, len(args))
	for i, a := range args {
		out[i] = p.intOf(a)
	}
	return out
}

func (p *parser) bools(args []pval) []Expr {
	out := make([]Expr, len(args))
	for i, a := range args {
		out[i] = p.boolOf(a)
	}
	return out
}

func (p *parser) apply(name token, args []pval) pval {
	pos := name.pos
	what := name.s
	switch name.s {
	case "Symbol", "Dummy":
		p.arity(name, args, 1)
		if !args[0].isStr {
			p.fail(args[0].pos, "expected a quoted symbol name")
		}
		if !ValidName(args[0].str) {
			p.fail(args[0].pos, fmt.Sprintf("invalid symbol name %q", args[0].str))
		}
		return p.check(Sym(args[0].str), pos, "symbol")
	case "Integer", "Int", "int", "sympify", "Identity":
		p.arity(name, args, 1)
		if name.s == "Integer" && !p.intOf(args[0]).isConst() {
			p.fail(args[0].pos, "expected an integer literal")
		}
		return pval{e: p.intOf(args[0]), pos: pos}
	case "Rational":
		p.arity(name, args, 2)
		a, b := p.intOf(args[0]), p.intOf(args[1])
		if !a.isConst() || !b.isConst() || cIsZero(b) || !cIsZero(cMod(a, b)) {
			p.fail(pos, "expected a Rational with an integer value")
		}
		return pval{e: cFloorDiv(a, b), pos: pos}
	case "Zero", "One", "NegativeOne":
		p.arity(name, args, 0)
		v := map[string]int64{"Zero": 0, "One": 1, "NegativeOne": -1}[name.s]
		return pval{e: Const(v), pos: pos}
	case "BooleanTrue":
		p.arity(name, args, 0)
		return pval{e: True(), pos: pos}
	case "BooleanFalse":
		p.arity(name, args, 0)
		return pval{e: False(), pos: pos}
	case "Add":
		return p.check(Add(p.ints(args)...), pos, what)
	case "Mul":
		return p.check(Mul(p.ints(args)...), pos, what)
	case "Max":
		p.minArity(name, args, 1)
		return p.check(Max(p.ints(args)...), pos, what)
	case "Min":
		p.minArity(name, args, 1)
		return p.check(Min(p.ints(args)...), pos, what)
	case "Pow":
		p.arity(name, args, 2)
		return p.power(args[0], args[1], pos)
	case "FloorDiv":
		p.arity(name, args, 2)
		xs := p.ints(args)
		return p.check(FloorDiv(xs[0], xs[1]), pos, what)
	case "Mod", "PythonMod":
		p.arity(name, args, 2)
		xs := p.ints(args)
		return p.check(Mod(xs[0], xs[1]), pos, what)
	case "CeilDiv":
		p.arity(name, args, 2)
		xs := p.ints(args)
		return p.check(CeilDiv(xs[0], xs[1]), pos, what)
	case "IntTrueDiv", "FloatTrueDiv", "TrueDiv":
		p.arity(name, args, 2)
		xs := p.ints(args)
		return pval{e: xs[0], den: xs[1], pos: pos}
	case "ToFloat", "float":
		p.arity(name, args, 1)
		return args[0]
	case "CeilToInt", "ceiling", "FloorToInt", "floor", "TruncToInt", "trunc", "RoundToInt":
		p.arity(name, args, 1)
		a := args[0]
		if !a.isDiv() {
			return pval{e: p.intOf(a), pos: pos}
		}
		switch name.s {
		case "CeilToInt", "ceiling":
			return p.check(CeilDiv(a.e, a.den), pos, what)
		case "FloorToInt", "floor":
			return p.check(FloorDiv(a.e, a.den), pos, what)
		}
		p.fail(pos, name.s+" of a true division is not supported")
	case "Eq", "Equality":
		return p.rel(name, args, "==")
	case "Ne", "Unequality":
		return p.rel(name, args, "!=")
	case "Lt", "StrictLessThan":
		return p.rel(name, args, "<")
	case "Le", "LessThan":
		return p.rel(name, args, "<=")
	case "Gt", "StrictGreaterThan":
		return p.rel(name, args, ">")
	case "Ge", "GreaterThan":
		return p.rel(name, args, ">=")
	case "And":
		return p.check(And(p.bools(args)...), pos, what)
	case "Or":
		return p.check(Or(p.bools(args)...), pos, what)
	case "Not":
		p.arity(name, args, 1)
		return p.check(Not(p.boolOf(args[0])), pos, what)
	}
	p.fail(pos, fmt.Sprintf("unknown function %q", name.s))
	return pval{}
}

func (p *parser) rel(name token, args []pval, op string) pval {
	p.arity(name, args, 2)
	return p.check(relByOp(op, p.intOf(args[0]), p.intOf(args[1])), name.pos, name.s)
}
