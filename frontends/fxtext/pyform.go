package fxtext

import (
	"strings"
)

// parsePython reads the code form (gm.code) and the readable form
// (print_readable, the body of an ExportedProgram print) into a module.
// firstLine is the line number of src's first line.
func parsePython(src, file string, firstLine int) (*fxModule, error) {
	lines, err := lexLines(src, file, firstLine)
	if err != nil {
		return nil, err
	}
	pp := &pyParser{file: file, src: src, lines: lines}
	return pp.top()
}

type pyParser struct {
	file  string
	src   string
	lines []logicalLine
	i     int
}

func (pp *pyParser) errorf(p pos, format string, args ...any) error {
	return errAt(pp.file, p, format, args...)
}

func (pp *pyParser) lineParser(ll *logicalLine) *parser {
	end := ll.pos
	if n := len(ll.toks); n > 0 {
		last := ll.toks[n-1]
		end = pos{last.pos.line, last.pos.col + (last.end - last.off)}
	}
	return &parser{file: pp.file, src: pp.src, toks: ll.toks, endAt: end}
}

// top parses the module level: import lines, one top-level class (the main
// GraphModule) or one top-level "def forward".
func (pp *pyParser) top() (*fxModule, error) {
	var main *fxModule
	for pp.i < len(pp.lines) {
		ll := &pp.lines[pp.i]
		if ll.isComment {
			pp.i++
			continue
		}
		first := ll.toks[0]
		switch {
		case first.kind == tName && (first.text == "import" || first.text == "from"):
			pp.i++
			continue
		case first.kind == tName && first.text == "class":
			if main != nil {
				return nil, pp.errorf(first.pos, "a second top-level class; subgraph classes are nested inside the main GraphModule class")
			}
			m, err := pp.class()
			if err != nil {
				return nil, err
			}
			if m.forward == nil {
				return nil, pp.errorf(m.pos, "class %s has no forward method", m.name)
			}
			main = m
		case first.kind == tName && first.text == "def":
			if main != nil {
				return nil, pp.errorf(first.pos, "a second top-level function; a dump holds one forward")
			}
			f, err := pp.function()
			if err != nil {
				return nil, err
			}
			main = &fxModule{name: "GraphModule", pos: f.pos, forward: f}
		default:
			return nil, pp.errorf(first.pos, "expected a class or a def at the top level, found %s", first.describe())
		}
	}
	if main == nil {
		return nil, errAt(pp.file, pos{1, 1}, "no forward function found")
	}
	return main, nil
}

// class parses "class NAME(...):" and its body: a forward and nested classes.
func (pp *pyParser) class() (*fxModule, error) {
	ll := &pp.lines[pp.i]
	ps := pp.lineParser(ll)
	ps.next() // class
	m := &fxModule{pos: ll.pos}
	switch t := ps.next(); {
	case t.kind == tName:
		m.name = t.text
	case t.kind == tOp && t.text == "<":
		// "class <lambda>(torch.nn.Module):" in older dumps.
		n := ps.next()
		if n.kind != tName || !ps.accept(">") {
			return nil, pp.errorf(t.pos, "expected a class name")
		}
		m.name = "<" + n.text + ">"
	default:
		return nil, pp.errorf(t.pos, "expected a class name, found %s", t.describe())
	}
	if ps.accept("(") {
		for !ps.atEnd() && !ps.isOp(")") {
			ps.next()
		}
		if _, err := ps.expect(")"); err != nil {
			return nil, err
		}
	}
	if _, err := ps.expect(":"); err != nil {
		return nil, err
	}
	if !ps.atEnd() {
		return nil, pp.errorf(ps.peek().pos, "unexpected %s after the class header", ps.peek().describe())
	}
	indent := ll.indent
	pp.i++
	for pp.i < len(pp.lines) {
		ll := &pp.lines[pp.i]
		if ll.isComment {
			pp.i++
			continue
		}
		if ll.indent <= indent {
			break
		}
		first := ll.toks[0]
		switch {
		case first.kind == tName && first.text == "def":
			f, err := pp.function()
			if err != nil {
				return nil, err
			}
			if f.name != "forward" {
				return nil, pp.errorf(f.pos, "method %s: only forward is FX code", f.name)
			}
			if m.forward != nil {
				return nil, pp.errorf(f.pos, "class %s defines forward twice", m.name)
			}
			m.forward = f
		case first.kind == tName && first.text == "class":
			c, err := pp.class()
			if err != nil {
				return nil, err
			}
			if c.forward == nil {
				return nil, pp.errorf(c.pos, "class %s has no forward method", c.name)
			}
			if c.name != "<lambda>" && m.child(c.name) != nil {
				return nil, pp.errorf(c.pos, "class %s is defined twice in %s", c.name, m.name)
			}
			m.children = append(m.children, c)
		default:
			return nil, pp.errorf(first.pos, "expected a def or a nested class in class %s, found %s", m.name, first.describe())
		}
	}
	return m, nil
}

// function parses "def NAME(self, params):" and its body.
func (pp *pyParser) function() (*fxFunc, error) {
	ll := &pp.lines[pp.i]
	ps := pp.lineParser(ll)
	ps.next() // def
	nt := ps.next()
	if nt.kind != tName {
		return nil, pp.errorf(nt.pos, "expected a function name, found %s", nt.describe())
	}
	f := &fxFunc{name: nt.text, pos: ll.pos}
	if _, err := ps.expect("("); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for !ps.isOp(")") {
		t := ps.next()
		if t.kind == tOp && (t.text == "*" || t.text == "**" || t.text == "/") {
			return nil, pp.errorf(t.pos, "variadic parameters are not FX code")
		}
		if t.kind != tName {
			return nil, pp.errorf(t.pos, "expected a parameter name, found %s", t.describe())
		}
		p := &fxParam{name: t.text, pos: t.pos}
		if ps.accept(":") {
			a, err := ps.annotation()
			if err != nil {
				return nil, err
			}
			p.annot = a
		}
		if ps.accept("=") {
			if _, err := ps.test(); err != nil {
				return nil, err
			}
		}
		if len(f.params) == 0 && p.name == "self" && !seen["self"] {
			seen["self"] = true
		} else {
			if seen[p.name] {
				return nil, pp.errorf(t.pos, "parameter %s appears twice", p.name)
			}
			seen[p.name] = true
			f.params = append(f.params, p)
		}
		if !ps.accept(",") {
			break
		}
	}
	if _, err := ps.expect(")"); err != nil {
		return nil, err
	}
	if ps.accept("->") {
		if _, err := ps.test(); err != nil {
			return nil, err
		}
	}
	if _, err := ps.expect(":"); err != nil {
		return nil, err
	}
	if !ps.atEnd() {
		return nil, pp.errorf(ps.peek().pos, "a function body starts on the next line")
	}
	indent := ll.indent
	pp.i++
	stack := ""
	for pp.i < len(pp.lines) {
		ll := &pp.lines[pp.i]
		if ll.isComment {
			// Stack-trace comments: "# File: model.py:12 in forward, code: ..."
			// applies to the following nodes; "# No stacktrace found ..." ends it.
			switch c := ll.comment; {
			case strings.HasPrefix(c, "File:"):
				stack = strings.TrimSpace(strings.TrimPrefix(c, "File:"))
			case strings.HasPrefix(c, "code:"):
				stack = c
			case strings.HasPrefix(c, "No stacktrace found"):
				stack = ""
			}
			pp.i++
			continue
		}
		if ll.indent <= indent {
			break
		}
		if f.hasReturn {
			return nil, pp.errorf(ll.pos, "statement after return")
		}
		if err := pp.statementLine(f, ll, stack); err != nil {
			return nil, err
		}
		pp.i++
	}
	if !f.hasReturn {
		return nil, pp.errorf(f.pos, "function %s has no return statement", f.name)
	}
	if err := pp.unusedLeafAnnots(f); err != nil {
		return nil, err
	}
	return f, nil
}

// annotation parses a type annotation expression and records its text.
func (ps *parser) annotation() (*annot, error) {
	e, err := ps.test()
	if err != nil {
		return nil, err
	}
	if e.kind == eStr {
		return &annot{text: e.s, pos: e.pos}, nil
	}
	return &annot{text: e.text(), pos: e.pos}, nil
}

// statementLine parses one logical line: simple statements separated by ';'.
func (pp *pyParser) statementLine(f *fxFunc, ll *logicalLine, stack string) error {
	// Split at top-level semicolons.
	var parts [][]token
	depth, start := 0, 0
	for i, t := range ll.toks {
		if t.kind != tOp {
			continue
		}
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case ";":
			if depth == 0 {
				parts = append(parts, ll.toks[start:i])
				start = i + 1
			}
		}
	}
	parts = append(parts, ll.toks[start:])
	for _, toks := range parts {
		if len(toks) == 0 {
			continue
		}
		sub := *ll
		sub.toks = toks
		if err := pp.statement(f, &sub, stack); err != nil {
			return err
		}
	}
	return nil
}

// statement parses one simple statement.
func (pp *pyParser) statement(f *fxFunc, ll *logicalLine, stack string) error {
	ps := pp.lineParser(ll)
	first := ps.peek()
	if first.kind == tName && first.text == "return" {
		if f.hasReturn {
			return pp.errorf(first.pos, "second return statement")
		}
		ps.next()
		f.hasReturn, f.retPos = true, first.pos
		if !ps.atEnd() {
			e, err := ps.exprList()
			if err != nil {
				return err
			}
			f.ret = e
		}
		return pp.endOfStatement(ps)
	}
	if first.kind == tName && first.text == "pass" {
		ps.next()
		return pp.endOfStatement(ps)
	}
	if t := ll.toks; len(t) > 3 && t[0].kind == tName && t[1].kind == tOp && t[2].kind == tOp && t[2].text == "=" {
		if target, aug := augmentedOps[t[1].text]; aug {
			// "out_4 += x_3" (Dynamo prints in-place operators so): a node
			// that rebinds the name.
			e := &expr{kind: eName, name: t[0].text, pos: t[0].pos, src: pp.src, off: t[0].off, end: t[0].end}
			ps.i += 3
			v, err := ps.exprList()
			if err != nil {
				return err
			}
			if err := pp.endOfStatement(ps); err != nil {
				return err
			}
			call := &expr{kind: eCall, pos: e.pos, src: e.src, off: e.off, end: v.end, fn: &expr{kind: eName, name: target, pos: e.pos}, elems: []*expr{e, v}}
			f.stmts = append(f.stmts, &fxStmt{name: e.name, rhs: call, pos: e.pos, stack: stack, rebind: true})
			return nil
		}
	}
	var targets []*expr
	var an *annot
	e, err := ps.exprList()
	if err != nil {
		return err
	}
	if ps.isOp(":") {
		name, ok := e.simpleName()
		if !ok {
			return pp.errorf(e.pos, "only a name can be annotated")
		}
		ps.next()
		if an, err = ps.annotation(); err != nil {
			return err
		}
		if ps.atEnd() {
			// "x: \"f32[4]\"" declares the type of an input (unflattened modules print these).
			return pp.declare(f, name, an, e.pos)
		}
	}
	for ps.accept("=") {
		targets = append(targets, e)
		if e, err = ps.exprList(); err != nil {
			return err
		}
	}
	if err := pp.endOfStatement(ps); err != nil {
		return err
	}
	if len(targets) == 0 {
		if an != nil {
			return pp.errorf(first.pos, "annotation without a value")
		}
		f.stmts = append(f.stmts, &fxStmt{rhs: e, pos: e.pos, stack: stack})
		return nil
	}
	// "a = b = None" frees values; it defines nothing.
	if e.kind == eName && e.name == "None" {
		for _, t := range targets {
			if _, ok := t.simpleName(); !ok {
				return pp.errorf(t.pos, "cannot assign to %s", t.text())
			}
		}
		return nil
	}
	if len(targets) == 1 && targets[0].kind == eTuple {
		// "x, y, = fx_pytree.tree_flatten_spec(([x, y], {}), self._in_spec)" in
		// unflattened modules rebinds the inputs to themselves.
		if e.kind == eCall && e.fn.kind == eName && strings.HasSuffix(e.fn.name, "tree_flatten_spec") {
			return pp.flattenedInputs(f, targets[0], e)
		}
		return pp.errorf(targets[0].pos, "tuple assignment is not FX code (each node assigns one name)")
	}
	st := &fxStmt{annot: an, rhs: e, pos: targets[0].pos, stack: stack}
	for i, t := range targets {
		name, ok := t.simpleName()
		if !ok {
			return pp.errorf(t.pos, "cannot assign to %s", t.text())
		}
		if i == 0 {
			st.name = name
		} else {
			st.alias = append(st.alias, name)
		}
	}
	f.stmts = append(f.stmts, st)
	return nil
}

func (pp *pyParser) endOfStatement(ps *parser) error {
	if !ps.atEnd() {
		return pp.errorf(ps.peek().pos, "unexpected %s", ps.peek().describe())
	}
	return nil
}

// declare records "name: annot" for an input of f.
func (pp *pyParser) declare(f *fxFunc, name string, an *annot, p pos) error {
	for _, prm := range f.params {
		if prm.name == name {
			prm.annot = an
			return nil
		}
	}
	if f.leafAnnots == nil {
		f.leafAnnots = map[string]*annot{}
	}
	an.pos = p
	f.leafAnnots[name] = an
	return nil
}

// unusedLeafAnnots refuses declarations that named neither an input nor a
// leaf of tree_flatten_spec.
func (pp *pyParser) unusedLeafAnnots(f *fxFunc) error {
	var first *annot
	name := ""
	for n, an := range f.leafAnnots {
		if first == nil || an.pos.line < first.pos.line || an.pos.line == first.pos.line && an.pos.col < first.pos.col {
			first, name = an, n
		}
	}
	if first == nil {
		return nil
	}
	return pp.errorf(first.pos, "annotation of %s, which is not an input of %s", name, f.name)
}

// flattenedInputs reads "a, b, = fx_pytree.tree_flatten_spec([x, y], self._in_spec)".
// When the leaves are the inputs themselves (unflattened modules) it changes
// nothing; otherwise (torch 1.13's lifted code form, whose forward takes
// pytree containers orig_arg_0, ...) the leaves become the graph's inputs.
func (pp *pyParser) flattenedInputs(f *fxFunc, lhs, call *expr) error {
	var leaves []string
	var collect func(e *expr)
	collect = func(e *expr) {
		switch e.kind {
		case eTuple, eList:
			for _, x := range e.elems {
				collect(x)
			}
		case eDict:
			// keyword inputs: ({'k': k}) flattens to its values in key order.
			for _, x := range e.elems {
				collect(x)
			}
		case eName:
			leaves = append(leaves, e.name)
		}
	}
	if len(call.elems) > 0 {
		collect(call.elems[0])
	}
	var names []string
	for _, t := range lhs.elems {
		n, ok := t.simpleName()
		if !ok {
			return pp.errorf(t.pos, "cannot assign to %s", t.text())
		}
		names = append(names, n)
	}
	if strings.Join(names, ",") == strings.Join(leaves, ",") {
		return nil
	}
	params := map[string]bool{}
	for _, p := range f.params {
		params[p.name] = true
	}
	for _, l := range leaves {
		if !params[l] {
			return pp.errorf(call.pos, "tree_flatten_spec of %s, which is not an input of %s", l, f.name)
		}
	}
	if len(f.stmts) > 0 {
		return pp.errorf(lhs.pos, "tree_flatten_spec after other statements; it flattens the inputs first")
	}
	old := map[string]*annot{}
	for _, p := range f.params {
		old[p.name] = p.annot
	}
	f.params = nil
	for i, n := range names {
		prm := &fxParam{name: n, pos: lhs.elems[i].pos, annot: old[n]}
		if an, ok := f.leafAnnots[n]; ok {
			prm.annot = an
			delete(f.leafAnnots, n)
		}
		f.params = append(f.params, prm)
	}
	return nil
}

// augmentedOps are the in-place operators of augmented assignments.
var augmentedOps = map[string]string{
	"+": "operator.iadd", "-": "operator.isub", "*": "operator.imul", "/": "operator.itruediv",
}
