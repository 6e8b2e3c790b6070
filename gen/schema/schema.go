// Package schema parses operator signatures written in torch's schema
// language, the notation of native_functions.yaml and torch.library:
//
//	aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
//	aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
//	aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]
//
// It is used by the op generator (gen/opgen) and deliberately does not
// depend on package ir, so that the generator builds even when the
// generated ir/opgen.go is stale or missing.
package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// BaseTypes are the base type names the parser accepts. They match the
// names of ir.BaseKind.
var BaseTypes = []string{
	"Tensor", "int", "SymInt", "float", "SymFloat", "bool", "SymBool", "str",
	"Scalar", "ScalarType", "Layout", "Device", "MemoryFormat", "Generator",
	"Any", "GraphModule", "NoneType", "Storage", "Dimname", "Token", "Opaque",
}

func isBaseType(s string) bool {
	for _, b := range BaseTypes {
		if b == s {
			return true
		}
	}
	return false
}

// Schema is a parsed signature.
type Schema struct {
	// Namespace is the part before "::" ("aten"); "" when absent.
	Namespace string
	// Name is the base name ("add").
	Name string
	// Overload is the part after the dot ("Tensor"); "" when absent.
	Overload string
	Args     []Arg
	Returns  []Return
	// VarArgs is set when the argument list ends in "...": further
	// positional arguments may follow the declared ones.
	VarArgs bool
	// VarRets is set when the return list is "...".
	VarRets bool
}

// Type is a schema type: a base type with optional list and optional markers.
type Type struct {
	Base         string
	List         bool // Base[] or Base[N]
	ListLen      int  // N for Base[N]
	ElemOptional bool // Base?[]
	Optional     bool // trailing '?'
}

// Arg is one formal argument.
type Arg struct {
	Name string
	Type Type
	// Alias is the alias annotation without parentheses, normalized:
	// "a", "a!", "a -> *", "a|b!"; "" when absent.
	Alias string
	// Default is the default value as written ("1", "None", "[0, 1]",
	// "'none'", "contiguous_format"); "" when the argument is required.
	Default   string
	KwargOnly bool
	// Col is the 1-based column of the argument's type in the source.
	Col int
}

// Mutates reports an alias annotation that writes ("a!").
func (a Arg) Mutates() bool { return aliasWrites(a.Alias) }

// Return is one result.
type Return struct {
	Name  string
	Type  Type
	Alias string
}

func aliasWrites(alias string) bool {
	before, _, _ := strings.Cut(alias, "->")
	return strings.Contains(before, "!")
}

// Error is a parse error at a 1-based column.
type Error struct {
	Col int
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("col %d: %s", e.Col, e.Msg) }

// QualifiedName is "namespace::name.overload" (parts omitted when empty).
func (s *Schema) QualifiedName() string {
	var b strings.Builder
	if s.Namespace != "" {
		b.WriteString(s.Namespace)
		b.WriteString("::")
	}
	b.WriteString(s.Name)
	if s.Overload != "" {
		b.WriteByte('.')
		b.WriteString(s.Overload)
	}
	return b.String()
}

func (t Type) String() string {
	return t.format("")
}

func (t Type) format(alias string) string {
	var b strings.Builder
	b.WriteString(t.Base)
	if alias != "" {
		b.WriteString("(" + alias + ")")
	}
	if t.ElemOptional {
		b.WriteByte('?')
	}
	if t.List {
		if t.ListLen > 0 {
			fmt.Fprintf(&b, "[%d]", t.ListLen)
		} else {
			b.WriteString("[]")
		}
	}
	if t.Optional {
		b.WriteByte('?')
	}
	return b.String()
}

// String prints the schema in canonical form; Parse(s.String()) yields s again
// (columns aside).
func (s *Schema) String() string {
	var b strings.Builder
	b.WriteString(s.QualifiedName())
	b.WriteByte('(')
	kw := false
	for i, a := range s.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		if a.KwargOnly && !kw {
			b.WriteString("*, ")
			kw = true
		}
		b.WriteString(a.Type.format(a.Alias))
		b.WriteByte(' ')
		b.WriteString(a.Name)
		if a.Default != "" {
			b.WriteByte('=')
			b.WriteString(a.Default)
		}
	}
	if s.VarArgs {
		if len(s.Args) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("...")
	}
	b.WriteString(") -> ")
	switch {
	case s.VarRets:
		b.WriteString("...")
	case len(s.Returns) == 1 && s.Returns[0].Name == "":
		b.WriteString(s.Returns[0].Type.format(s.Returns[0].Alias))
	default:
		b.WriteByte('(')
		for i, r := range s.Returns {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(r.Type.format(r.Alias))
			if r.Name != "" {
				b.WriteByte(' ')
				b.WriteString(r.Name)
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// Parse parses one schema. Errors are *Error values with a column.
func Parse(src string) (*Schema, error) {
	p := &parser{src: src}
	s, err := p.schema()
	if err != nil {
		return nil, err
	}
	return s, nil
}

type parser struct {
	src string
	pos int
}

func (p *parser) errf(pos int, format string, args ...any) error {
	return &Error{Col: pos + 1, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

func (p *parser) peek() byte {
	p.skipSpace()
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) accept(tok string) bool {
	p.skipSpace()
	if strings.HasPrefix(p.src[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *parser) expect(tok string) error {
	if !p.accept(tok) {
		return p.errf(p.pos, "expected %q, found %s", tok, p.found())
	}
	return nil
}

func (p *parser) found() string {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return "end of schema"
	}
	r := p.src[p.pos:]
	if len(r) > 12 {
		r = r[:12] + "…"
	}
	return strconv.Quote(r)
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func (p *parser) ident(what string) (string, int, error) {
	p.skipSpace()
	start := p.pos
	if p.pos >= len(p.src) || !isIdentStart(p.src[p.pos]) {
		return "", start, p.errf(start, "expected %s, found %s", what, p.found())
	}
	for p.pos < len(p.src) && isIdentChar(p.src[p.pos]) {
		p.pos++
	}
	return p.src[start:p.pos], start, nil
}

func (p *parser) schema() (*Schema, error) {
	s := &Schema{}
	name, _, err := p.ident("operator name")
	if err != nil {
		return nil, err
	}
	if p.accept("::") {
		s.Namespace = name
		if name, _, err = p.ident("operator name after '::'"); err != nil {
			return nil, err
		}
	}
	s.Name = name
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		if s.Overload, _, err = p.ident("overload name"); err != nil {
			return nil, err
		}
	}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	if err := p.args(s); err != nil {
		return nil, err
	}
	if err := p.expect("->"); err != nil {
		return nil, err
	}
	if err := p.returns(s); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.src) {
		return nil, p.errf(p.pos, "unexpected %s after the return list", p.found())
	}
	return s, nil
}

func (p *parser) args(s *Schema) error {
	if p.accept(")") {
		return nil
	}
	kwOnly := false
	seen := map[string]bool{}
	for {
		switch {
		case p.accept("..."):
			s.VarArgs = true
			if err := p.expect(")"); err != nil {
				return err
			}
			return nil
		case p.peek() == '*':
			star := p.pos
			p.pos++
			if kwOnly {
				return p.errf(star, "second '*' marker")
			}
			kwOnly = true
		default:
			a, err := p.arg()
			if err != nil {
				return err
			}
			if seen[a.Name] {
				return p.errf(a.Col-1, "argument %q declared twice", a.Name)
			}
			seen[a.Name] = true
			a.KwargOnly = kwOnly
			s.Args = append(s.Args, a)
		}
		if p.accept(")") {
			if kwOnly && len(s.Args) > 0 && !s.Args[len(s.Args)-1].KwargOnly {
				return p.errf(p.pos-1, "'*' must be followed by an argument")
			}
			return nil
		}
		if err := p.expect(","); err != nil {
			return err
		}
	}
}

func (p *parser) arg() (Arg, error) {
	p.skipSpace()
	col := p.pos + 1
	t, alias, err := p.typ()
	if err != nil {
		return Arg{}, err
	}
	name, _, err := p.ident("argument name")
	if err != nil {
		return Arg{}, err
	}
	a := Arg{Name: name, Type: t, Alias: alias, Col: col}
	if p.accept("=") {
		p.skipSpace()
		start := p.pos
		if err := p.defaultValue(0); err != nil {
			return Arg{}, err
		}
		a.Default = strings.TrimSpace(p.src[start:p.pos])
		if err := checkDefault(t, a.Default); err != nil {
			return Arg{}, p.errf(start, "default of %q: %v", name, err)
		}
	}
	return a, nil
}

// checkDefault rejects defaults that cannot belong to the type.
func checkDefault(t Type, d string) error {
	if d == "None" {
		if !t.Optional && t.Base != "Any" && t.Base != "NoneType" {
			return fmt.Errorf("None for non-optional type %s", t)
		}
		return nil
	}
	if strings.HasPrefix(d, "[") && !t.List && t.Base != "Any" {
		return fmt.Errorf("list %s for non-list type %s", d, t)
	}
	return nil
}

// typ parses a type with an optional alias annotation after the base name.
func (p *parser) typ() (Type, string, error) {
	name, start, err := p.ident("type")
	if err != nil {
		return Type{}, "", err
	}
	if !isBaseType(name) {
		return Type{}, "", p.errf(start, "unknown type %q", name)
	}
	t := Type{Base: name}
	alias := ""
	if p.pos < len(p.src) && p.src[p.pos] == '(' {
		if alias, err = p.aliasAnnotation(); err != nil {
			return Type{}, "", err
		}
	}
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '?':
			if t.Optional {
				return Type{}, "", p.errf(p.pos, "repeated '?'")
			}
			t.Optional = true
			p.pos++
		case c == '[':
			if t.List {
				return Type{}, "", p.errf(p.pos, "nested lists are not supported")
			}
			if t.Optional {
				t.ElemOptional, t.Optional = true, false
			}
			p.pos++
			numStart := p.pos
			for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
				p.pos++
			}
			if p.pos > numStart {
				n, err := strconv.Atoi(p.src[numStart:p.pos])
				if err != nil || n <= 0 || n > 64 {
					return Type{}, "", p.errf(numStart, "bad list length %q", p.src[numStart:p.pos])
				}
				t.ListLen = n
			}
			if p.pos >= len(p.src) || p.src[p.pos] != ']' {
				return Type{}, "", p.errf(p.pos, "expected ']', found %s", p.found())
			}
			p.pos++
			t.List = true
		case c == '(' && alias == "" && t.List:
			return Type{}, "", p.errf(p.pos, "alias annotation must follow the base type")
		default:
			return t, alias, nil
		}
	}
	return t, alias, nil
}

// aliasAnnotation parses "(a)", "(a!)", "(a -> *)", "(a|b!)", "(*)".
func (p *parser) aliasAnnotation() (string, error) {
	open := p.pos
	p.pos++ // '('
	before, err := p.aliasSet()
	if err != nil {
		return "", err
	}
	out := before
	if p.accept("!") {
		out += "!"
	}
	if p.accept("->") {
		after, err := p.aliasSet()
		if err != nil {
			return "", err
		}
		out += " -> " + after
	}
	if !p.accept(")") {
		return "", p.errf(p.pos, "expected ')' closing the alias annotation opened at col %d, found %s", open+1, p.found())
	}
	return out, nil
}

func (p *parser) aliasSet() (string, error) {
	var parts []string
	for {
		p.skipSpace()
		if p.accept("*") {
			parts = append(parts, "*")
		} else {
			id, _, err := p.ident("alias set name")
			if err != nil {
				return "", err
			}
			parts = append(parts, id)
		}
		if !p.accept("|") {
			return strings.Join(parts, "|"), nil
		}
	}
}

const maxDefaultDepth = 8

// defaultValue skips over one default value: a number, a name, a quoted
// string, or a bracketed list of those.
func (p *parser) defaultValue(depth int) error {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return p.errf(p.pos, "expected a default value, found end of schema")
	}
	c := p.src[p.pos]
	switch {
	case c == '[':
		if depth >= maxDefaultDepth {
			return p.errf(p.pos, "default list nested too deeply")
		}
		p.pos++
		if p.accept("]") {
			return nil
		}
		for {
			if err := p.defaultValue(depth + 1); err != nil {
				return err
			}
			if p.accept("]") {
				return nil
			}
			if err := p.expect(","); err != nil {
				return err
			}
		}
	case c == '"' || c == '\'':
		start := p.pos
		p.pos++
		for p.pos < len(p.src) && p.src[p.pos] != c {
			if p.src[p.pos] == '\\' {
				p.pos++
			}
			p.pos++
		}
		if p.pos >= len(p.src) {
			return p.errf(start, "unterminated string")
		}
		p.pos++
		return nil
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		start := p.pos
		p.pos++
		if (c == '-' || c == '+') && strings.HasPrefix(p.src[p.pos:], "inf") {
			p.pos += 3
			return nil
		}
		for p.pos < len(p.src) {
			d := p.src[p.pos]
			if d >= '0' && d <= '9' || d == '.' || d == 'e' || d == 'E' ||
				((d == '-' || d == '+') && (p.src[p.pos-1] == 'e' || p.src[p.pos-1] == 'E')) {
				p.pos++
				continue
			}
			break
		}
		lit := p.src[start:p.pos]
		if _, err := strconv.ParseInt(lit, 10, 64); err == nil {
			return nil
		}
		if _, err := strconv.ParseFloat(lit, 64); err == nil {
			return nil
		}
		return p.errf(start, "bad number %q", lit)
	case isIdentStart(c):
		for p.pos < len(p.src) && (isIdentChar(p.src[p.pos]) || p.src[p.pos] == '.') {
			p.pos++
		}
		return nil
	}
	return p.errf(p.pos, "expected a default value, found %s", p.found())
}

func (p *parser) returns(s *Schema) error {
	if p.accept("...") {
		s.VarRets = true
		return nil
	}
	if p.peek() != '(' {
		r, err := p.ret()
		if err != nil {
			return err
		}
		if r.Name != "" {
			return p.errf(p.pos, "a single return must not be named; use (%s %s)", r.Type, r.Name)
		}
		s.Returns = []Return{r}
		return nil
	}
	p.pos++
	if p.accept(")") {
		return nil
	}
	for {
		r, err := p.ret()
		if err != nil {
			return err
		}
		s.Returns = append(s.Returns, r)
		if p.accept(")") {
			return nil
		}
		if err := p.expect(","); err != nil {
			return err
		}
	}
}

func (p *parser) ret() (Return, error) {
	t, alias, err := p.typ()
	if err != nil {
		return Return{}, err
	}
	r := Return{Type: t, Alias: alias}
	if c := p.peek(); isIdentStart(c) {
		if r.Name, _, err = p.ident("return name"); err != nil {
			return Return{}, err
		}
	}
	return r, nil
}
