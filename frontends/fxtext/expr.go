package fxtext

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// exprKind says what an expr is. The code and readable forms produce Python
// expressions; the graph form produces the same tree, plus eRef (%name) and
// eWord (a value torch printed with str(), unquoted: tanh, cpu, torch.float32).
type exprKind uint8

const (
	eName exprKind = iota // a name or a dotted name: x, torch.ops.aten.add.Tensor
	eInt
	eFloat
	eStr
	eTuple
	eList
	eDict
	eCall
	eSubscript
	eBinOp
	eUnary
	eAttr // attribute of something that is not a name: f(x).y
	eRef  // graph form: %name
	eWord // graph form: unquoted printed value
)

// expr is a parsed expression.
type expr struct {
	kind     exprKind
	pos      pos
	off, end int // source span ([off, end) in the text it was parsed from)
	src      string

	name  string  // eName, eRef, eWord, eAttr (the attribute); operator of eBinOp/eUnary
	i     int64   // eInt
	f     float64 // eFloat
	s     string  // eStr
	elems []*expr // eTuple, eList, call positionals, dict values, operands
	keys  []string
	kw    []*expr // call keyword values, parallel to keys
	fn    *expr   // eCall callee, eSubscript/eAttr base
}

// text is the source text of e.
func (e *expr) text() string {
	if e.src == "" || e.off < 0 || e.end > len(e.src) || e.off > e.end {
		return ""
	}
	return e.src[e.off:e.end]
}

// isName reports an undotted name (or a graph-form reference).
func (e *expr) simpleName() (string, bool) {
	switch e.kind {
	case eName:
		if !strings.Contains(e.name, ".") {
			return e.name, true
		}
	case eRef:
		return e.name, true
	}
	return "", false
}

// parser is a recursive-descent parser over one logical line's tokens.
type parser struct {
	file  string
	src   string
	toks  []token
	i     int
	depth int
	endAt pos // position reported for end of line
}

const maxDepth = 200

func (ps *parser) peek() token {
	if ps.i < len(ps.toks) {
		return ps.toks[ps.i]
	}
	return token{kind: tEOF, pos: ps.endAt, off: len(ps.src), end: len(ps.src)}
}

func (ps *parser) next() token {
	t := ps.peek()
	if ps.i < len(ps.toks) {
		ps.i++
	}
	return t
}

func (ps *parser) isOp(s string) bool {
	t := ps.peek()
	return t.kind == tOp && t.text == s
}

func (ps *parser) isName(s string) bool {
	t := ps.peek()
	return t.kind == tName && t.text == s
}

func (ps *parser) accept(s string) bool {
	if ps.isOp(s) {
		ps.i++
		return true
	}
	return false
}

func (ps *parser) errorf(p pos, format string, args ...any) error {
	return errAt(ps.file, p, format, args...)
}

func (ps *parser) expect(s string) (token, error) {
	t := ps.peek()
	if t.kind != tOp || t.text != s {
		return t, ps.errorf(t.pos, "expected %q, found %s", s, t.describe())
	}
	ps.i++
	return t, nil
}

func (ps *parser) atEnd() bool { return ps.i >= len(ps.toks) }

// tooMany refuses a list longer than MaxListElements, at its start.
func (ps *parser) tooMany(start token) error {
	return tooMany(ps.file, start.pos)
}

func (ps *parser) mk(kind exprKind, start token) *expr {
	return &expr{kind: kind, pos: start.pos, off: start.off, end: start.end, src: ps.src}
}

// finish sets e's span end to the last consumed token.
func (ps *parser) finish(e *expr) *expr {
	if ps.i > 0 && ps.i <= len(ps.toks) {
		e.end = ps.toks[ps.i-1].end
	}
	return e
}

// exprList parses "a, b, c" (a bare tuple when there is a comma).
func (ps *parser) exprList() (*expr, error) {
	start := ps.peek()
	first, err := ps.test()
	if err != nil {
		return nil, err
	}
	if !ps.isOp(",") {
		return first, nil
	}
	tup := ps.mk(eTuple, start)
	tup.elems = []*expr{first}
	for ps.accept(",") {
		if ps.endsList() {
			break
		}
		e, err := ps.test()
		if err != nil {
			return nil, err
		}
		tup.elems = append(tup.elems, e)
		if len(tup.elems) > MaxListElements {
			return nil, ps.tooMany(start)
		}
	}
	return ps.finish(tup), nil
}

// endsList reports a token that cannot start an expression (after a trailing comma).
func (ps *parser) endsList() bool {
	t := ps.peek()
	if t.kind == tEOF {
		return true
	}
	if t.kind == tOp {
		switch t.text {
		case "=", ")", "]", "}", ";", ":":
			return true
		}
	}
	return false
}

// test parses a conditional-free Python test: or/and/not, comparisons, arithmetic.
func (ps *parser) test() (*expr, error) {
	ps.depth++
	defer func() { ps.depth-- }()
	if ps.depth > maxDepth {
		return nil, ps.errorf(ps.peek().pos, "expression nested too deeply")
	}
	return ps.orTest()
}

func (ps *parser) orTest() (*expr, error) {
	l, err := ps.andTest()
	if err != nil {
		return nil, err
	}
	for ps.isName("or") {
		t := ps.next()
		r, err := ps.andTest()
		if err != nil {
			return nil, err
		}
		l = ps.binop(t, "or", l, r)
	}
	return l, nil
}

func (ps *parser) andTest() (*expr, error) {
	l, err := ps.notTest()
	if err != nil {
		return nil, err
	}
	for ps.isName("and") {
		t := ps.next()
		r, err := ps.notTest()
		if err != nil {
			return nil, err
		}
		l = ps.binop(t, "and", l, r)
	}
	return l, nil
}

func (ps *parser) notTest() (*expr, error) {
	if ps.isName("not") {
		t := ps.next()
		x, err := ps.notTest()
		if err != nil {
			return nil, err
		}
		u := ps.mk(eUnary, t)
		u.name = "not"
		u.elems = []*expr{x}
		return ps.finish(u), nil
	}
	return ps.comparison()
}

var compareOps = map[string]bool{"==": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true}

func (ps *parser) comparison() (*expr, error) {
	l, err := ps.binary(0)
	if err != nil {
		return nil, err
	}
	if t := ps.peek(); t.kind == tOp && compareOps[t.text] {
		ps.i++
		r, err := ps.binary(0)
		if err != nil {
			return nil, err
		}
		l = ps.binop(t, t.text, l, r)
		if t2 := ps.peek(); t2.kind == tOp && compareOps[t2.text] {
			return nil, ps.errorf(t2.pos, "chained comparisons are not FX code")
		}
	}
	return l, nil
}

// binary levels, loosest first.
var binLevels = [][]string{
	{"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%", "@"},
}

func (ps *parser) binary(level int) (*expr, error) {
	if level == len(binLevels) {
		return ps.factor()
	}
	l, err := ps.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := ps.peek()
		if t.kind != tOp || !contains(binLevels[level], t.text) {
			return l, nil
		}
		ps.i++
		r, err := ps.binary(level + 1)
		if err != nil {
			return nil, err
		}
		l = ps.binop(t, t.text, l, r)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (ps *parser) binop(t token, op string, l, r *expr) *expr {
	e := &expr{kind: eBinOp, pos: l.pos, off: l.off, end: r.end, src: ps.src, name: op, elems: []*expr{l, r}}
	_ = t
	return e
}

func (ps *parser) factor() (*expr, error) {
	t := ps.peek()
	if t.kind == tOp && (t.text == "-" || t.text == "+" || t.text == "~") {
		ps.i++
		ps.depth++
		defer func() { ps.depth-- }()
		if ps.depth > maxDepth {
			return nil, ps.errorf(t.pos, "expression nested too deeply")
		}
		x, err := ps.factor()
		if err != nil {
			return nil, err
		}
		// Fold signs into number literals: -1, -0.5.
		if t.text == "-" && x.kind == eInt {
			x.i = -x.i
			x.pos, x.off = t.pos, t.off
			return x, nil
		}
		if t.text == "-" && x.kind == eFloat {
			x.f = -x.f
			x.pos, x.off = t.pos, t.off
			return x, nil
		}
		if t.text == "+" && (x.kind == eInt || x.kind == eFloat) {
			return x, nil
		}
		u := ps.mk(eUnary, t)
		u.name = t.text
		u.elems = []*expr{x}
		u.end = x.end
		return u, nil
	}
	return ps.power()
}

func (ps *parser) power() (*expr, error) {
	base, err := ps.primary()
	if err != nil {
		return nil, err
	}
	if ps.isOp("**") {
		t := ps.next()
		exp, err := ps.factor()
		if err != nil {
			return nil, err
		}
		return ps.binop(t, "**", base, exp), nil
	}
	return base, nil
}

// primary parses an atom and its trailers: calls, subscripts, attributes.
func (ps *parser) primary() (*expr, error) {
	e, err := ps.atom()
	if err != nil {
		return nil, err
	}
	for {
		t := ps.peek()
		if t.kind != tOp {
			return e, nil
		}
		switch t.text {
		case ".":
			ps.i++
			nt := ps.next()
			if nt.kind != tName {
				return nil, ps.errorf(nt.pos, "expected an attribute name after '.', found %s", nt.describe())
			}
			if e.kind == eName {
				e.name += "." + nt.text
				e.end = nt.end
				continue
			}
			a := &expr{kind: eAttr, pos: e.pos, off: e.off, end: nt.end, src: ps.src, name: nt.text, fn: e}
			e = a
		case "(":
			ps.i++
			c := &expr{kind: eCall, pos: e.pos, off: e.off, src: ps.src, fn: e}
			if err := ps.callArgs(c); err != nil {
				return nil, err
			}
			e = ps.finish(c)
		case "[":
			ps.i++
			s := &expr{kind: eSubscript, pos: e.pos, off: e.off, src: ps.src, fn: e}
			if ps.isOp("]") {
				// "i64[]" in unquoted annotations of older dumps.
				s.elems = []*expr{{kind: eTuple, pos: ps.peek().pos, src: ps.src}}
			} else {
				idx, err := ps.exprList()
				if err != nil {
					return nil, err
				}
				s.elems = []*expr{idx}
			}
			if _, err := ps.expect("]"); err != nil {
				return nil, err
			}
			e = ps.finish(s)
		default:
			return e, nil
		}
	}
}

// callArgs parses "a, b, k = v)" after "(".
func (ps *parser) callArgs(c *expr) error {
	for !ps.isOp(")") {
		t := ps.peek()
		if t.kind == tName && ps.i+1 < len(ps.toks) && ps.toks[ps.i+1].kind == tOp && ps.toks[ps.i+1].text == "=" {
			ps.i += 2
			v, err := ps.test()
			if err != nil {
				return err
			}
			for _, k := range c.keys {
				if k == t.text {
					return ps.errorf(t.pos, "keyword argument %q given twice", k)
				}
			}
			c.keys = append(c.keys, t.text)
			c.kw = append(c.kw, v)
		} else {
			if len(c.keys) > 0 {
				return ps.errorf(t.pos, "positional argument after keyword arguments")
			}
			if t.kind == tOp && (t.text == "*" || t.text == "**") {
				return ps.errorf(t.pos, "starred arguments are not FX code")
			}
			v, err := ps.test()
			if err != nil {
				return err
			}
			c.elems = append(c.elems, v)
			if len(c.elems) > MaxListElements {
				return ps.tooMany(t)
			}
		}
		if !ps.accept(",") {
			break
		}
	}
	_, err := ps.expect(")")
	return err
}

func (ps *parser) atom() (*expr, error) {
	t := ps.next()
	switch t.kind {
	case tEOF:
		return nil, ps.errorf(t.pos, "expected an expression, found end of line")
	case tName:
		switch t.text {
		case "lambda", "yield", "await", "if", "for", "import", "def", "class", "return":
			return nil, ps.errorf(t.pos, "%q is not FX code", t.text)
		}
		e := ps.mk(eName, t)
		e.name = t.text
		return e, nil
	case tNumber:
		return ps.number(t)
	case tString:
		e := ps.mk(eStr, t)
		e.s = t.text
		// Adjacent literals concatenate.
		for ps.peek().kind == tString {
			n := ps.next()
			e.s += n.text
			e.end = n.end
		}
		return e, nil
	}
	switch t.text {
	case "(":
		if ps.accept(")") {
			return ps.finish(ps.mk(eTuple, t)), nil
		}
		inner, err := ps.test()
		if err != nil {
			return nil, err
		}
		if ps.accept(")") {
			return inner, nil
		}
		tup := ps.mk(eTuple, t)
		tup.elems = []*expr{inner}
		for ps.accept(",") {
			if ps.isOp(")") {
				break
			}
			e, err := ps.test()
			if err != nil {
				return nil, err
			}
			tup.elems = append(tup.elems, e)
			if len(tup.elems) > MaxListElements {
				return nil, ps.tooMany(t)
			}
		}
		if _, err := ps.expect(")"); err != nil {
			return nil, err
		}
		return ps.finish(tup), nil
	case "[":
		l := ps.mk(eList, t)
		for !ps.isOp("]") {
			e, err := ps.test()
			if err != nil {
				return nil, err
			}
			l.elems = append(l.elems, e)
			if len(l.elems) > MaxListElements {
				return nil, ps.tooMany(t)
			}
			if !ps.accept(",") {
				break
			}
		}
		if _, err := ps.expect("]"); err != nil {
			return nil, err
		}
		return ps.finish(l), nil
	case "{":
		d := ps.mk(eDict, t)
		for !ps.isOp("}") {
			k, err := ps.test()
			if err != nil {
				return nil, err
			}
			if _, err := ps.expect(":"); err != nil {
				return nil, err
			}
			v, err := ps.test()
			if err != nil {
				return nil, err
			}
			d.keys = append(d.keys, dictKey(k))
			d.elems = append(d.elems, v)
			if len(d.elems) > MaxListElements {
				return nil, ps.tooMany(t)
			}
			if !ps.accept(",") {
				break
			}
		}
		if _, err := ps.expect("}"); err != nil {
			return nil, err
		}
		return ps.finish(d), nil
	}
	return nil, ps.errorf(t.pos, "expected an expression, found %s", t.describe())
}

// dictKey spells a dict key: a string's value, otherwise its source text.
func dictKey(k *expr) string {
	if k.kind == eStr {
		return k.s
	}
	return k.text()
}

func (ps *parser) number(t token) (*expr, error) {
	s := strings.ReplaceAll(t.text, "_", "")
	if strings.ContainsAny(s, "jJ") {
		return nil, ps.errorf(t.pos, "complex literal %s is not supported", t.text)
	}
	if !strings.ContainsAny(s, ".eE") || strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			if bi, ok := new(big.Int).SetString(s, 0); ok && bi.Sign() > 0 {
				return nil, ps.errorf(t.pos, "integer %s does not fit in 64 bits", t.text)
			}
			return nil, ps.errorf(t.pos, "bad number %q", t.text)
		}
		e := ps.mk(eInt, t)
		e.i = v
		return e, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !(math.IsInf(f, 0)) {
		return nil, ps.errorf(t.pos, "bad number %q", t.text)
	}
	e := ps.mk(eFloat, t)
	e.f = f
	return e, nil
}
