package fxtext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The Python-subset lexer for the code and readable forms (and the repr
// form of graph signatures). It groups tokens into logical lines the way
// Python does: newlines inside brackets continue the line, a backslash at
// the end of a line continues it, and a line holding only a comment is kept
// as a comment line (its text matters: "# File: ..." carries stack traces).

type tokKind uint8

const (
	tEOF tokKind = iota
	tName
	tNumber
	tString
	tOp
)

type token struct {
	kind tokKind
	// text is the name, the number's spelling, the operator, or the
	// string's decoded value.
	text     string
	pos      pos
	off, end int // byte span in the source
}

// logicalLine is one Python logical line, or one comment-only line.
type logicalLine struct {
	indent    int
	pos       pos
	toks      []token
	comment   string // for comment-only lines: the text after '#', trimmed
	isComment bool
}

// lexer splits src into logical lines.
type lexer struct {
	src  string
	file string
	off  int
	line int
	col  int
}

func (lx *lexer) errorf(p pos, format string, args ...any) error {
	return errAt(lx.file, p, format, args...)
}

func (lx *lexer) here() pos { return pos{lx.line, lx.col} }

func (lx *lexer) peekAt(i int) byte {
	if lx.off+i < len(lx.src) {
		return lx.src[lx.off+i]
	}
	return 0
}

func (lx *lexer) adv(n int) {
	for i := 0; i < n && lx.off < len(lx.src); i++ {
		if lx.src[lx.off] == '\n' {
			lx.line++
			lx.col = 1
		} else {
			lx.col++
		}
		lx.off++
	}
}

// lexLines tokenizes src (starting at line firstLine) into logical lines.
func lexLines(src, file string, firstLine int) ([]logicalLine, error) {
	lx := &lexer{src: src, file: file, line: firstLine, col: 1}
	var lines []logicalLine
	for lx.off < len(lx.src) {
		// Start of a physical line at depth 0: measure the indentation.
		indent := 0
		for lx.off < len(lx.src) {
			c := lx.src[lx.off]
			if c == ' ' {
				indent++
			} else if c == '\t' {
				indent = (indent/8 + 1) * 8
			} else if c == '\r' || c == '\f' {
			} else {
				break
			}
			lx.adv(1)
		}
		if lx.off >= len(lx.src) {
			break
		}
		switch lx.src[lx.off] {
		case '\n':
			lx.adv(1)
			continue
		case '#':
			p := lx.here()
			start := lx.off
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' {
				lx.adv(1)
			}
			text := strings.TrimSpace(lx.src[start+1 : lx.off])
			lines = append(lines, logicalLine{indent: indent, pos: p, comment: text, isComment: true})
			continue
		}
		ll := logicalLine{indent: indent, pos: lx.here()}
		if err := lx.lineTokens(&ll); err != nil {
			return nil, err
		}
		lines = append(lines, ll)
	}
	return lines, nil
}

var multiOps = []string{"**", "//", "==", "!=", "<=", ">=", "->", "<<", ">>"}

const singleOps = "()[]{},:;.=+-*/%<>&|^~@"

// lineTokens reads the tokens of one logical line, through the newline that ends it.
func (lx *lexer) lineTokens(ll *logicalLine) error {
	var brackets []token
	for {
		if lx.off >= len(lx.src) {
			if len(brackets) > 0 {
				b := brackets[len(brackets)-1]
				return lx.errorf(b.pos, "%q is never closed", b.text)
			}
			return nil
		}
		c := lx.src[lx.off]
		switch {
		case c == '\n':
			lx.adv(1)
			if len(brackets) == 0 {
				return nil
			}
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			lx.adv(1)
			continue
		case c == '#':
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' {
				lx.adv(1)
			}
			continue
		case c == '\\' && (lx.peekAt(1) == '\n' || lx.peekAt(1) == '\r' && lx.peekAt(2) == '\n'):
			lx.adv(1)
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' {
				lx.adv(1)
			}
			lx.adv(1)
			continue
		}
		t, err := lx.token()
		if err != nil {
			return err
		}
		if t.kind == tOp {
			switch t.text {
			case "(", "[", "{":
				brackets = append(brackets, t)
			case ")", "]", "}":
				if len(brackets) == 0 {
					return lx.errorf(t.pos, "unmatched %q", t.text)
				}
				open := brackets[len(brackets)-1]
				if closing(open.text) != t.text {
					return lx.errorf(t.pos, "%q does not close %q opened at line %d", t.text, open.text, open.pos.line)
				}
				brackets = brackets[:len(brackets)-1]
			}
		}
		ll.toks = append(ll.toks, t)
	}
}

func closing(open string) string {
	switch open {
	case "(":
		return ")"
	case "[":
		return "]"
	}
	return "}"
}

func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNameByte(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' }
func isDigit(c byte) bool     { return c >= '0' && c <= '9' }

// token reads one token at the current offset.
func (lx *lexer) token() (token, error) {
	p := lx.here()
	start := lx.off
	c := lx.src[lx.off]
	switch {
	case (c == 'r' || c == 'b' || c == 'u' || c == 'R' || c == 'B' || c == 'U') && (lx.peekAt(1) == '\'' || lx.peekAt(1) == '"'):
		lx.adv(1)
		s, err := lx.stringLit(c == 'r' || c == 'R')
		if err != nil {
			return token{}, err
		}
		return token{kind: tString, text: s, pos: p, off: start, end: lx.off}, nil
	case isNameStart(c):
		for lx.off < len(lx.src) && isNameByte(lx.src[lx.off]) {
			lx.adv(1)
		}
		return token{kind: tName, text: lx.src[start:lx.off], pos: p, off: start, end: lx.off}, nil
	case isDigit(c) || c == '.' && isDigit(lx.peekAt(1)):
		for lx.off < len(lx.src) {
			d := lx.src[lx.off]
			if isDigit(d) || d == '.' || d == '_' || isNameStart(d) {
				if (d == 'e' || d == 'E') && (lx.peekAt(1) == '-' || lx.peekAt(1) == '+') {
					lx.adv(1)
				}
				lx.adv(1)
				continue
			}
			break
		}
		return token{kind: tNumber, text: lx.src[start:lx.off], pos: p, off: start, end: lx.off}, nil
	case c == '\'' || c == '"':
		s, err := lx.stringLit(false)
		if err != nil {
			return token{}, err
		}
		return token{kind: tString, text: s, pos: p, off: start, end: lx.off}, nil
	}
	for _, op := range multiOps {
		if strings.HasPrefix(lx.src[lx.off:], op) {
			lx.adv(len(op))
			return token{kind: tOp, text: op, pos: p, off: start, end: lx.off}, nil
		}
	}
	if strings.IndexByte(singleOps, c) >= 0 {
		lx.adv(1)
		return token{kind: tOp, text: string(c), pos: p, off: start, end: lx.off}, nil
	}
	if c >= utf8.RuneSelf {
		r, _ := utf8.DecodeRuneInString(lx.src[lx.off:])
		return token{}, lx.errorf(p, "unexpected character %q (FX text is ASCII outside string literals)", r)
	}
	return token{}, lx.errorf(p, "unexpected character %q", c)
}

// stringLit reads a Python string literal ('...', "...", or triple-quoted)
// and decodes its escapes.
func (lx *lexer) stringLit(raw bool) (string, error) {
	p := lx.here()
	q := lx.src[lx.off]
	triple := lx.peekAt(1) == q && lx.peekAt(2) == q
	delim := string(q)
	if triple {
		delim = strings.Repeat(string(q), 3)
	}
	lx.adv(len(delim))
	var b strings.Builder
	for {
		if lx.off >= len(lx.src) {
			return "", lx.errorf(p, "unterminated string")
		}
		if strings.HasPrefix(lx.src[lx.off:], delim) {
			lx.adv(len(delim))
			return b.String(), nil
		}
		c := lx.src[lx.off]
		if c == '\n' && !triple {
			return "", lx.errorf(p, "unterminated string")
		}
		if c != '\\' || raw {
			if raw && c == '\\' && lx.off+1 < len(lx.src) {
				b.WriteString(lx.src[lx.off : lx.off+2])
				lx.adv(2)
				continue
			}
			b.WriteByte(c)
			lx.adv(1)
			continue
		}
		ep := lx.here()
		lx.adv(1)
		if lx.off >= len(lx.src) {
			return "", lx.errorf(p, "unterminated string")
		}
		e := lx.src[lx.off]
		lx.adv(1)
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'f':
			b.WriteByte(12)
		case 'v':
			b.WriteByte(11)
		case '\\', '\'', '"':
			b.WriteByte(e)
		case '\n':
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if lx.off+n > len(lx.src) {
				return "", lx.errorf(ep, "bad \\%c escape", e)
			}
			v, err := strconv.ParseUint(lx.src[lx.off:lx.off+n], 16, 32)
			if err != nil || v > utf8.MaxRune {
				return "", lx.errorf(ep, "bad \\%c escape", e)
			}
			lx.adv(n)
			if e == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
}

// describe names a token for error messages.
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of line"
	case tString:
		return fmt.Sprintf("string %q", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}
