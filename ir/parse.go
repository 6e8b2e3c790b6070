package ir

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir/sym"
)

// Parse reads a program in IR text form (see Print). filename is used in
// error messages, which have the form "file:line:col: message". Parse never
// panics on malformed input. A program without input/output lines gets the
// trivial signature (every input a user input, every output a user output).
func Parse(src []byte, filename string) (*Program, error) {
	ps := &parser{src: string(src), file: filename, line: 1, col: 1}
	prog, err := ps.program()
	if err != nil {
		return nil, err
	}
	return prog, nil
}

// ParseType reads one type in IR text form ("f32[s0, 4]", "Sym(s0)", "list<i64[]>").
func ParseType(s string) (Type, error) {
	ps := &parser{src: s, file: "type", line: 1, col: 1}
	t, err := ps.typ()
	if err != nil {
		return nil, err
	}
	ps.skipSpace()
	if !ps.eof() {
		return nil, ps.errorf("unexpected %q after type", ps.rest(10))
	}
	return t, nil
}

type parser struct {
	src       string
	pos       int
	file      string
	line, col int
	prog      *Program
}

type parseError struct {
	file      string
	line, col int
	msg       string
}

func (e *parseError) Error() string { return fmt.Sprintf("%s:%d:%d: %s", e.file, e.line, e.col, e.msg) }

func (ps *parser) errorf(format string, args ...any) error {
	return &parseError{ps.file, ps.line, ps.col, fmt.Sprintf(format, args...)}
}

func (ps *parser) eof() bool { return ps.pos >= len(ps.src) }

func (ps *parser) peek() byte {
	if ps.pos >= len(ps.src) {
		return 0
	}
	return ps.src[ps.pos]
}

func (ps *parser) rest(n int) string {
	r := ps.src[ps.pos:]
	if i := strings.IndexByte(r, '\n'); i >= 0 {
		r = r[:i]
	}
	if len(r) > n {
		r = r[:n] + "…"
	}
	return r
}

func (ps *parser) advance(n int) {
	for i := 0; i < n && ps.pos < len(ps.src); i++ {
		if ps.src[ps.pos] == '\n' {
			ps.line++
			ps.col = 1
		} else {
			ps.col++
		}
		ps.pos++
	}
}

// skipSpace skips blanks and comments but not newlines.
func (ps *parser) skipSpace() {
	for !ps.eof() {
		c := ps.peek()
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			ps.advance(1)
		case c == '#':
			for !ps.eof() && ps.peek() != '\n' {
				ps.advance(1)
			}
		default:
			return
		}
	}
}

// skipAll skips blanks, comments and newlines.
func (ps *parser) skipAll() {
	for {
		ps.skipSpace()
		if ps.peek() == '\n' {
			ps.advance(1)
			continue
		}
		return
	}
}

func (ps *parser) accept(s string) bool {
	ps.skipSpace()
	if strings.HasPrefix(ps.src[ps.pos:], s) {
		ps.advance(len(s))
		return true
	}
	return false
}

func (ps *parser) expect(s string) error {
	if !ps.accept(s) {
		if ps.eof() {
			return ps.errorf("expected %q, found end of input", s)
		}
		return ps.errorf("expected %q, found %q", s, ps.rest(20))
	}
	return nil
}

func (ps *parser) endOfLine() error {
	ps.skipSpace()
	if ps.eof() {
		return nil
	}
	if ps.peek() != '\n' {
		return ps.errorf("unexpected %q at end of line", ps.rest(20))
	}
	ps.advance(1)
	return nil
}

func isIdentByte(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && (c >= '0' && c <= '9' || c == '.')
}

// ident reads a (possibly dotted) identifier.
func (ps *parser) ident() (string, error) {
	ps.skipSpace()
	start := ps.pos
	for !ps.eof() && isIdentByte(ps.peek(), ps.pos == start) {
		ps.advance(1)
	}
	if ps.pos == start {
		if ps.eof() {
			return "", ps.errorf("expected a name, found end of input")
		}
		return "", ps.errorf("expected a name, found %q", ps.rest(20))
	}
	return ps.src[start:ps.pos], nil
}

// valueName reads a %name or ^name after its sigil.
func (ps *parser) sigilName(sigil byte) (string, error) {
	ps.skipSpace()
	if ps.peek() != sigil {
		return "", ps.errorf("expected %c, found %q", sigil, ps.rest(20))
	}
	ps.advance(1)
	start := ps.pos
	for !ps.eof() && (isIdentByte(ps.peek(), ps.pos == start) && ps.peek() != '.' || ps.pos > start && ps.peek() >= '0' && ps.peek() <= '9') {
		ps.advance(1)
	}
	if ps.pos == start {
		return "", ps.errorf("expected a name after %c", sigil)
	}
	return ps.src[start:ps.pos], nil
}

func (ps *parser) quoted() (string, error) {
	ps.skipSpace()
	if ps.peek() != '"' {
		return "", ps.errorf("expected a quoted string, found %q", ps.rest(20))
	}
	i := ps.pos + 1
	for i < len(ps.src) {
		switch ps.src[i] {
		case '\\':
			i += 2
			continue
		case '"':
			s, err := strconv.Unquote(ps.src[ps.pos : i+1])
			if err != nil {
				return "", ps.errorf("bad string literal: %v", err)
			}
			ps.advance(i + 1 - ps.pos)
			return s, nil
		case '\n':
			return "", ps.errorf("unterminated string")
		}
		i++
	}
	return "", ps.errorf("unterminated string")
}

// balanced returns the raw text up to (not including) the closing byte at depth 0.
func (ps *parser) balanced(close byte) (string, error) {
	start := ps.pos
	depth := 0
	for !ps.eof() {
		c := ps.peek()
		switch c {
		case '(', '[':
			depth++
		case ')', ']':
			if depth == 0 {
				if c != close {
					return "", ps.errorf("unbalanced %q", string(c))
				}
				return ps.src[start:ps.pos], nil
			}
			depth--
		case '\n':
			return "", ps.errorf("unexpected end of line, expected %q", string(close))
		}
		ps.advance(1)
	}
	return "", ps.errorf("unexpected end of input, expected %q", string(close))
}

func splitTopLevel(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" || len(parts) > 0 {
		parts = append(parts, s[start:])
	}
	return parts
}

func (ps *parser) program() (*Program, error) {
	prog := &Program{Env: sym.NewEnv()}
	ps.prog = prog
	sawSig := false
	for {
		ps.skipAll()
		if ps.eof() {
			break
		}
		kw, err := ps.ident()
		if err != nil {
			return nil, err
		}
		switch kw {
		case "meta":
			k, err := ps.quoted()
			if err != nil {
				return nil, err
			}
			if err := ps.expect("="); err != nil {
				return nil, err
			}
			v, err := ps.quoted()
			if err != nil {
				return nil, err
			}
			prog.Meta.Set(k, v)
		case "symbol":
			if err := ps.symbolLine(); err != nil {
				return nil, err
			}
		case "input":
			sawSig = true
			if err := ps.inputLine(); err != nil {
				return nil, err
			}
		case "output":
			sawSig = true
			name, err := ps.ident()
			if err != nil {
				return nil, err
			}
			k, ok := OutputKindFromName(name)
			if !ok {
				return nil, ps.errorf("unknown output kind %q", name)
			}
			spec := OutputSpec{Kind: k}
			ps.skipSpace()
			if ps.peek() == '"' {
				if spec.Target, err = ps.quoted(); err != nil {
					return nil, err
				}
			}
			prog.Signature.Outputs = append(prog.Signature.Outputs, spec)
		case "in_spec", "out_spec":
			sawSig = true
			s, err := ps.quoted()
			if err != nil {
				return nil, err
			}
			if kw == "in_spec" {
				prog.Signature.InSpec = s
			} else {
				prog.Signature.OutSpec = s
			}
		case "weight":
			if err := ps.weightLine(); err != nil {
				return nil, err
			}
		case "module_call":
			if err := ps.moduleCallLine(); err != nil {
				return nil, err
			}
		case "graph":
			if prog.Main != nil {
				return nil, ps.errorf("a second top-level graph; regions belong after their node as ^name(...) blocks")
			}
			name, err := ps.ident()
			if err != nil {
				return nil, err
			}
			g := newGraph(name, prog, nil)
			prog.Main = g
			if err := ps.graphBody(g); err != nil {
				return nil, err
			}
			continue
		default:
			return nil, ps.errorf("unknown top-level keyword %q", kw)
		}
		if err := ps.endOfLine(); err != nil {
			return nil, err
		}
	}
	if prog.Main == nil {
		return nil, ps.errorf("no graph")
	}
	if !sawSig {
		prog.Signature = DefaultSignature(prog.Main)
	}
	return prog, nil
}

// DefaultSignature is the trivial signature of g: every input a user input,
// every output a user output.
func DefaultSignature(g *Graph) Signature {
	var s Signature
	for _, in := range g.Inputs {
		s.Inputs = append(s.Inputs, InputSpec{Kind: UserInput, Name: in.Name})
	}
	for range g.Outputs() {
		s.Outputs = append(s.Outputs, OutputSpec{Kind: UserOutput})
	}
	return s
}

func (ps *parser) symbolLine() error {
	name, err := ps.ident()
	if err != nil {
		return err
	}
	if err := ps.expect(":"); err != nil {
		return err
	}
	r, err := ps.rangeLit()
	if err != nil {
		return err
	}
	var hint *int64
	unbacked := false
	for {
		ps.skipSpace()
		if ps.eof() || ps.peek() == '\n' {
			break
		}
		word, err := ps.ident()
		if err != nil {
			return err
		}
		switch word {
		case "hint":
			a, err := ps.literal(nil)
			if err != nil {
				return err
			}
			if a.Kind != ArgInt {
				return ps.errorf("hint must be an int")
			}
			h := a.Int
			hint = &h
		case "unbacked":
			unbacked = true
		default:
			return ps.errorf("unknown symbol attribute %q", word)
		}
	}
	ps.prog.Env.Declare(name, r, hint, unbacked)
	return nil
}

func (ps *parser) rangeLit() (sym.Range, error) {
	if err := ps.expect("["); err != nil {
		return sym.Range{}, err
	}
	raw, err := ps.balanced(']')
	if err != nil {
		return sym.Range{}, err
	}
	ps.advance(1)
	parts := splitTopLevel(raw)
	if len(parts) != 2 {
		return sym.Range{}, ps.errorf("a range has two bounds, got %q", raw)
	}
	lo, err := sym.ParseBound(strings.TrimSpace(parts[0]))
	if err != nil {
		return sym.Range{}, ps.errorf("range: %v", err)
	}
	hi, err := sym.ParseBound(strings.TrimSpace(parts[1]))
	if err != nil {
		return sym.Range{}, ps.errorf("range: %v", err)
	}
	return sym.Range{Lo: lo, Hi: hi}, nil
}

func (ps *parser) inputLine() error {
	name, err := ps.ident()
	if err != nil {
		return err
	}
	if err := ps.expect(":"); err != nil {
		return err
	}
	kname, err := ps.ident()
	if err != nil {
		return err
	}
	k, ok := InputKindFromName(kname)
	if !ok {
		return ps.errorf("unknown input kind %q", kname)
	}
	spec := InputSpec{Kind: k, Name: name}
	ps.skipSpace()
	if ps.peek() == '"' {
		if spec.Target, err = ps.quoted(); err != nil {
			return err
		}
	}
	if ps.accept("persistent") {
		spec.Persistent = true
	}
	if ps.accept("=") {
		if spec.Value, err = ps.literal(nil); err != nil {
			return err
		}
	}
	ps.prog.Signature.Inputs = append(ps.prog.Signature.Inputs, spec)
	return nil
}

func (ps *parser) weightLine() error {
	name, err := ps.quoted()
	if err != nil {
		return err
	}
	if err := ps.expect(":"); err != nil {
		return err
	}
	t, err := ps.typ()
	if err != nil {
		return err
	}
	tt, ok := t.(*TensorType)
	if !ok {
		return ps.errorf("weight %q must have a tensor type, got %s", name, t)
	}
	w := &Weight{Name: name, Type: tt}
	if ps.accept("strides") {
		a, err := ps.literal(nil)
		if err != nil {
			return err
		}
		if a.Kind != ArgList {
			return ps.errorf("strides must be a list of ints")
		}
		w.Strides = []int64{}
		for _, e := range a.List {
			if e.Kind != ArgInt {
				return ps.errorf("strides must be a list of ints")
			}
			w.Strides = append(w.Strides, e.Int)
		}
	}
	if ps.accept("offset") {
		a, err := ps.literal(nil)
		if err != nil {
			return err
		}
		if a.Kind != ArgInt {
			return ps.errorf("offset must be an int")
		}
		w.StorageOffset = a.Int
	}
	if ps.accept("=") {
		src, err := ps.weightSource()
		if err != nil {
			return fmt.Errorf("weight %q: %w", name, err)
		}
		w.Source = src
	}
	if ps.prog.Weight(name) != nil {
		return ps.errorf("weight %q declared twice", name)
	}
	ps.prog.AddWeight(w)
	return nil
}

// weightSource parses a source spelling such as file("w.bin", offset=0,
// size=64) through the registered source parsers.
func (ps *parser) weightSource() (WeightSource, error) {
	kind, err := ps.ident()
	if err != nil {
		return nil, err
	}
	parse, ok := lookupSourceParser(kind)
	if !ok {
		return nil, ps.errorf("unknown weight source %q", kind)
	}
	if err := ps.expect("("); err != nil {
		return nil, err
	}
	pos, kw, err := ps.argList(nil)
	if err != nil {
		return nil, err
	}
	src, err := parse(pos, kw)
	if err != nil {
		return nil, ps.errorf("%v", err)
	}
	return src, nil
}

func (ps *parser) stringList() ([]string, error) {
	a, err := ps.literal(nil)
	if err != nil {
		return nil, err
	}
	if a.Kind != ArgList {
		return nil, ps.errorf("expected a list of strings")
	}
	out := []string{}
	for _, e := range a.List {
		if e.Kind != ArgString {
			return nil, ps.errorf("expected a list of strings")
		}
		out = append(out, e.Str)
	}
	return out, nil
}

func (ps *parser) moduleCallLine() error {
	fqn, err := ps.quoted()
	if err != nil {
		return err
	}
	mc := ModuleCall{FQN: fqn}
	for {
		ps.skipSpace()
		if ps.eof() || ps.peek() == '\n' {
			break
		}
		word, err := ps.ident()
		if err != nil {
			return err
		}
		switch word {
		case "inputs":
			mc.Inputs, err = ps.stringList()
		case "outputs":
			mc.Outputs, err = ps.stringList()
		case "in_spec":
			mc.InSpec, err = ps.quoted()
		case "out_spec":
			mc.OutSpec, err = ps.quoted()
		default:
			return ps.errorf("unknown module_call field %q", word)
		}
		if err != nil {
			return err
		}
	}
	ps.prog.ModuleCallGraph = append(ps.prog.ModuleCallGraph, mc)
	return nil
}

// graphBody parses "(%a: T, ...) { nodes; return ... }" into g.
func (ps *parser) graphBody(g *Graph) error {
	if err := ps.expect("("); err != nil {
		return err
	}
	ps.skipSpace()
	if !ps.accept(")") {
		for {
			name, err := ps.sigilName('%')
			if err != nil {
				return err
			}
			if err := ps.expect(":"); err != nil {
				return err
			}
			t, err := ps.typ()
			if err != nil {
				return err
			}
			if _, err := g.AddInput(name, t); err != nil {
				return ps.errorf("%v", err)
			}
			if ps.accept(")") {
				break
			}
			if err := ps.expect(","); err != nil {
				return err
			}
		}
	}
	if err := ps.expect("{"); err != nil {
		return err
	}
	if err := ps.endOfLine(); err != nil {
		return err
	}
	b := NewBuilder(g)
	for {
		ps.skipAll()
		if ps.eof() {
			return ps.errorf("graph %s: missing return and closing brace", g.Name)
		}
		if strings.HasPrefix(ps.src[ps.pos:], "return") && (ps.pos+6 >= len(ps.src) || !isIdentByte(ps.src[ps.pos+6], false)) {
			ps.advance(6)
			var outs []Arg
			ps.skipSpace()
			if ps.peek() != '\n' && !ps.eof() {
				for {
					a, err := ps.literal(g)
					if err != nil {
						return err
					}
					if name, ok := a.region(); ok {
						return ps.errorf("return: a region (^%s) is not a value a graph can return", name)
					}
					outs = append(outs, a)
					if !ps.accept(",") {
						break
					}
				}
			}
			g.SetOutputs(outs...)
			if err := ps.endOfLine(); err != nil {
				return err
			}
			ps.skipAll()
			if err := ps.expect("}"); err != nil {
				return err
			}
			return ps.endOfLine()
		}
		if err := ps.nodeLine(g, b); err != nil {
			return err
		}
	}
}

func (ps *parser) nodeLine(g *Graph, b *Builder) error {
	var names []string
	var types []Type
	ps.skipSpace()
	if ps.peek() == '%' {
		for {
			name, err := ps.sigilName('%')
			if err != nil {
				return err
			}
			if err := ps.expect(":"); err != nil {
				return err
			}
			t, err := ps.typ()
			if err != nil {
				return err
			}
			names = append(names, name)
			types = append(types, t)
			if ps.accept("=") {
				break
			}
			if err := ps.expect(","); err != nil {
				return err
			}
		}
	}
	line, col := ps.line, ps.col
	opName, err := ps.ident()
	if err != nil {
		return err
	}
	op, ok := LookupOp(opName)
	if !ok {
		return ps.errorf("unknown op %q", opName)
	}
	if err := ps.expect("("); err != nil {
		return err
	}
	pos, kw, err := ps.argList(g)
	if err != nil {
		return err
	}
	args, err := BindArgs(op, pos, kw)
	if err != nil {
		return &parseError{ps.file, line, col, err.Error()}
	}
	for _, nm := range names {
		if g.names[nm] != nil {
			return &parseError{ps.file, line, col, fmt.Sprintf("value %%%s defined twice", nm)}
		}
	}
	n, err := b.Raw(op, args, types, names)
	if err != nil {
		return &parseError{ps.file, line, col, err.Error()}
	}
	ps.skipSpace()
	if ps.peek() == '{' {
		ps.advance(1)
		for !ps.accept("}") {
			ps.skipSpace()
			var key string
			if ps.peek() == '"' {
				key, err = ps.quoted()
			} else {
				key, err = ps.ident()
			}
			if err != nil {
				return err
			}
			if err := ps.expect("="); err != nil {
				return err
			}
			val, err := ps.quoted()
			if err != nil {
				return err
			}
			n.Meta.Set(key, val)
			if !ps.accept(",") {
				if err := ps.expect("}"); err != nil {
					return err
				}
				break
			}
		}
	}
	if err := ps.endOfLine(); err != nil {
		return err
	}
	// Regions follow as ^name(...) { ... } blocks.
	pending := pendingGraphs(n)
	for {
		ps.skipAll()
		if ps.peek() != '^' {
			break
		}
		name, err := ps.sigilName('^')
		if err != nil {
			return err
		}
		slot, ok := pending[name]
		if !ok {
			return ps.errorf("region ^%s is not an argument of the node before it", name)
		}
		delete(pending, name)
		r := newGraph(name, g.Program, n)
		slot.Graph = r
		if err := ps.graphBody(r); err != nil {
			return err
		}
	}
	for name := range pending {
		return &parseError{ps.file, line, col, fmt.Sprintf("region ^%s has no body", name)}
	}
	return nil
}

// pendingGraphs maps the ^names in n's arguments to their slots.
func pendingGraphs(n *Node) map[string]*Arg {
	m := map[string]*Arg{}
	for i := range n.Args {
		a := &n.Args[i]
		if a.Kind == ArgGraph && a.Graph == nil {
			m[a.Str] = a
		}
		if a.Kind == ArgList {
			for j := range a.List {
				if a.List[j].Kind == ArgGraph && a.List[j].Graph == nil {
					m[a.List[j].Str] = &a.List[j]
				}
			}
		}
	}
	return m
}

// argList parses "a, b, k=v)" after the opening parenthesis.
func (ps *parser) argList(g *Graph) ([]Arg, map[string]Arg, error) {
	var pos []Arg
	var kw map[string]Arg
	if ps.accept(")") {
		return pos, kw, nil
	}
	for {
		ps.skipSpace()
		// name=value?
		save := *ps
		if isIdentByte(ps.peek(), true) {
			name, err := ps.ident()
			if err == nil && !strings.Contains(name, ".") {
				ps.skipSpace()
				if ps.peek() == '=' && !strings.HasPrefix(ps.src[ps.pos:], "==") {
					ps.advance(1)
					a, err := ps.literal(g)
					if err != nil {
						return nil, nil, err
					}
					if kw == nil {
						kw = map[string]Arg{}
					}
					if _, dup := kw[name]; dup {
						return nil, nil, ps.errorf("argument %q given twice", name)
					}
					kw[name] = a
					goto next
				}
			}
			*ps = save
		}
		if kw != nil {
			return nil, nil, ps.errorf("positional argument after keyword arguments")
		}
		{
			a, err := ps.literal(g)
			if err != nil {
				return nil, nil, err
			}
			pos = append(pos, a)
		}
	next:
		if ps.accept(")") {
			return pos, kw, nil
		}
		if err := ps.expect(","); err != nil {
			return nil, nil, err
		}
	}
}

// literal parses one argument: a value reference (%x), a region (^g), a list, or a literal.
func (ps *parser) literal(g *Graph) (Arg, error) {
	ps.skipSpace()
	if ps.eof() {
		return Arg{}, ps.errorf("expected an argument, found end of input")
	}
	switch c := ps.peek(); {
	case c == '%':
		name, err := ps.sigilName('%')
		if err != nil {
			return Arg{}, err
		}
		if g == nil {
			return Arg{}, ps.errorf("value %%%s outside a graph", name)
		}
		v := g.names[name]
		if v == nil {
			return Arg{}, ps.errorf("undefined value %%%s", name)
		}
		return ValueArg(v), nil
	case c == '^':
		name, err := ps.sigilName('^')
		if err != nil {
			return Arg{}, err
		}
		return Arg{Kind: ArgGraph, Str: name}, nil
	case c == '[':
		ps.advance(1)
		var elems []Arg
		if ps.accept("]") {
			return ListArg(), nil
		}
		for {
			a, err := ps.literal(g)
			if err != nil {
				return Arg{}, err
			}
			elems = append(elems, a)
			if ps.accept("]") {
				return ListArg(elems...), nil
			}
			if err := ps.expect(","); err != nil {
				return Arg{}, err
			}
		}
	case c == '"':
		s, err := ps.quoted()
		if err != nil {
			return Arg{}, err
		}
		return StringArg(s), nil
	case c == '-' || c == '+' || c >= '0' && c <= '9':
		return ps.number()
	case isIdentByte(c, true):
		word, err := ps.ident()
		if err != nil {
			return Arg{}, err
		}
		switch word {
		case "None":
			return NoneArg(), nil
		case "True":
			return BoolArg(true), nil
		case "False":
			return BoolArg(false), nil
		case "inf":
			return FloatArg(posInf), nil
		case "nan":
			return FloatArg(nan()), nil
		case "device":
			if err := ps.expect("("); err != nil {
				return Arg{}, err
			}
			s, err := ps.quoted()
			if err != nil {
				return Arg{}, err
			}
			if err := ps.expect(")"); err != nil {
				return Arg{}, err
			}
			return DeviceArg(s), nil
		case "op":
			if err := ps.expect("("); err != nil {
				return Arg{}, err
			}
			name, err := ps.ident()
			if err != nil {
				return Arg{}, err
			}
			op, ok := LookupOp(name)
			if !ok {
				return Arg{}, ps.errorf("unknown op %q", name)
			}
			if err := ps.expect(")"); err != nil {
				return Arg{}, err
			}
			return OpArg(op), nil
		}
		if strings.HasPrefix(word, "torch.") {
			if d, ok := DTypeFromName(word); ok {
				return DTypeArg(d), nil
			}
			if l, ok := LayoutFromName(word); ok {
				return LayoutArg(l), nil
			}
			if m, ok := MemoryFormatFromName(word); ok {
				return MemoryFormatArg(m), nil
			}
		}
		return Arg{}, ps.errorf("unknown literal %q", word)
	}
	return Arg{}, ps.errorf("expected an argument, found %q", ps.rest(20))
}

func (ps *parser) number() (Arg, error) {
	start := ps.pos
	if c := ps.peek(); c == '-' || c == '+' {
		ps.advance(1)
	}
	if strings.HasPrefix(ps.src[ps.pos:], "inf") {
		ps.advance(3)
		if ps.src[start] == '-' {
			return FloatArg(-posInf), nil
		}
		return FloatArg(posInf), nil
	}
	if strings.HasPrefix(ps.src[ps.pos:], "nan") {
		ps.advance(3)
		return FloatArg(nan()), nil
	}
	isFloat := false
	for !ps.eof() {
		c := ps.peek()
		if c >= '0' && c <= '9' {
			ps.advance(1)
			continue
		}
		if c == '.' || c == 'e' || c == 'E' {
			isFloat = true
			ps.advance(1)
			if (c == 'e' || c == 'E') && (ps.peek() == '-' || ps.peek() == '+') {
				ps.advance(1)
			}
			continue
		}
		break
	}
	text := ps.src[start:ps.pos]
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return Arg{}, ps.errorf("bad float %q", text)
		}
		return FloatArg(f), nil
	}
	i, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return Arg{}, ps.errorf("bad int %q", text)
	}
	return IntArg(i), nil
}

// typ parses a type.
func (ps *parser) typ() (Type, error) {
	word, err := ps.ident()
	if err != nil {
		return nil, err
	}
	if ps.peek() == '[' {
		dt, ok := DTypeFromAbbr(word)
		if !ok {
			return nil, ps.errorf("unknown dtype %q", word)
		}
		return ps.tensorType(dt)
	}
	switch word {
	case "Sym", "SymBool":
		if ps.peek() != '(' {
			if word == "SymBool" {
				return &SymBoolType{}, nil
			}
			return nil, ps.errorf("Sym needs an expression: Sym(s0)")
		}
		ps.advance(1)
		raw, err := ps.balanced(')')
		if err != nil {
			return nil, err
		}
		ps.advance(1)
		e, err := sym.Parse(raw)
		if err != nil {
			return nil, ps.errorf("symbolic expression %q: %v", raw, err)
		}
		if word == "SymBool" {
			return &SymBoolType{Expr: e}, nil
		}
		return &SymIntType{Expr: e}, nil
	case "SymInt":
		return &SymIntType{}, nil
	case "SymFloat":
		return SymFloat, nil
	case "none":
		return None, nil
	case "token":
		return Token, nil
	case "unknown":
		return Unknown, nil
	case "list", "optional", "tuple", "opaque":
		if ps.peek() != '<' {
			return nil, ps.errorf("%s needs <...>", word)
		}
		ps.advance(1)
		if word == "opaque" {
			start := ps.pos
			for !ps.eof() && ps.peek() != '>' && ps.peek() != '\n' {
				ps.advance(1)
			}
			cls := ps.src[start:ps.pos]
			if err := ps.expect(">"); err != nil {
				return nil, err
			}
			return &OpaqueType{Class: cls}, nil
		}
		var elems []Type
		if !(word == "tuple" && ps.accept(">")) {
			for {
				t, err := ps.typ()
				if err != nil {
					return nil, err
				}
				elems = append(elems, t)
				if ps.accept(">") {
					break
				}
				if err := ps.expect(","); err != nil {
					return nil, err
				}
			}
		}
		switch word {
		case "list", "optional":
			if len(elems) != 1 {
				return nil, ps.errorf("%s takes one type", word)
			}
			if word == "list" {
				return &ListType{Elem: elems[0]}, nil
			}
			return &OptionalType{Elem: elems[0]}, nil
		}
		return &TupleType{Elems: elems}, nil
	}
	for i, n := range scalarKindNames {
		if n == word {
			return &ScalarType{Kind: ScalarKind(i)}, nil
		}
	}
	return nil, ps.errorf("unknown type %q", word)
}

func (ps *parser) tensorType(dt DType) (Type, error) {
	ps.advance(1) // '['
	raw, err := ps.balanced(']')
	if err != nil {
		return nil, err
	}
	ps.advance(1)
	t := &TensorType{DType: dt, Shape: []sym.Expr{}}
	for _, part := range splitTopLevel(raw) {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, ps.errorf("empty dim in %q", raw)
		}
		if v, err := strconv.ParseInt(part, 10, 64); err == nil {
			t.Shape = append(t.Shape, sym.Const(v))
			continue
		}
		e, err := sym.Parse(part)
		if err != nil {
			return nil, ps.errorf("dim %q: %v", part, err)
		}
		t.Shape = append(t.Shape, e)
	}
	if ps.peek() == '{' {
		ps.advance(1)
		raw, err := ps.balancedBrace()
		if err != nil {
			return nil, err
		}
		for _, part := range strings.Split(raw, ",") {
			d, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil {
				return nil, ps.errorf("dim order %q: %v", raw, err)
			}
			t.DimOrder = append(t.DimOrder, d)
		}
		if len(t.DimOrder) != len(t.Shape) {
			return nil, ps.errorf("dim order %v has %d entries for rank %d", t.DimOrder, len(t.DimOrder), len(t.Shape))
		}
	}
	if ps.peek() == '@' {
		ps.advance(1)
		start := ps.pos
		for !ps.eof() {
			c := ps.peek()
			if c == ':' || isIdentByte(c, false) {
				ps.advance(1)
				continue
			}
			break
		}
		t.Device = ps.src[start:ps.pos]
		if t.Device == "" {
			return nil, ps.errorf("expected a device after @")
		}
	}
	return t, nil
}

func (ps *parser) balancedBrace() (string, error) {
	start := ps.pos
	for !ps.eof() && ps.peek() != '}' && ps.peek() != '\n' {
		ps.advance(1)
	}
	if ps.peek() != '}' {
		return "", ps.errorf("expected '}'")
	}
	raw := ps.src[start:ps.pos]
	ps.advance(1)
	return raw, nil
}

// region returns the name of the first region a refers to (itself or in
// its list items), and whether there is one.
func (a Arg) region() (string, bool) {
	if a.Kind == ArgGraph {
		if a.Graph != nil {
			return a.Graph.Name, true
		}
		return a.Str, true
	}
	for _, x := range a.List {
		if name, ok := x.region(); ok {
			return name, true
		}
	}
	return "", false
}
