package fxtext

import (
	"strings"
)

// parseGraphForm reads the graph form, print(gm.graph):
//
//	graph():
//	    %x : [num_users=1] = placeholder[target=x]
//	    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%x, 1), kwargs = {})
//	    return (add,)
//
// Values are printed with str(): strings, dtypes and devices are unquoted
// words, restored later from the op schema. The slot before "[num_users=N]"
// holds torch's type name; fxtext also reads an annotation there
// ("%x : \"f32[2, 3]\" [num_users=1] = ..."), which is how hand-written graph
// form gives input types.
func parseGraphForm(src, file string) (*fxModule, error) {
	f := &fxFunc{name: "forward", graphForm: true}
	sawHeader := false
	for i, raw := range strings.Split(src, "\n") {
		lineNo := i + 1
		line := strings.TrimRight(raw, " \t\r")
		trimmed := strings.TrimLeft(line, " \t")
		col := len(line) - len(trimmed) + 1
		p := pos{lineNo, col}
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
			continue
		case strings.HasPrefix(trimmed, "graph(") && strings.HasSuffix(trimmed, ":"):
			if sawHeader {
				return nil, errAt(file, p, "a second graph; the graph form holds one graph (subgraphs are not printed in this form)")
			}
			sawHeader = true
			f.pos = p
		case strings.HasPrefix(trimmed, "%"):
			if f.hasReturn {
				return nil, errAt(file, p, "node after return")
			}
			if err := graphNodeLine(f, file, trimmed, p); err != nil {
				return nil, err
			}
		case trimmed == "return" || strings.HasPrefix(trimmed, "return "):
			if f.hasReturn {
				return nil, errAt(file, p, "second return")
			}
			f.hasReturn, f.retPos = true, p
			rest := strings.TrimSpace(strings.TrimPrefix(trimmed, "return"))
			if rest != "" {
				sc := &gscan{file: file, s: rest, line: lineNo, col0: col + len(trimmed) - len(rest)}
				e, err := sc.value(false)
				if err != nil {
					return nil, err
				}
				if err := sc.end(); err != nil {
					return nil, err
				}
				f.ret = e
			}
		default:
			return nil, errAt(file, p, "expected a %%node line or return in the graph form, found %q", clip(trimmed))
		}
	}
	if !f.hasReturn {
		return nil, errAt(file, pos{1, 1}, "graph has no return line")
	}
	return &fxModule{name: "GraphModule", pos: f.pos, forward: f}, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

var graphOps = []string{"placeholder", "get_attr", "call_function", "call_method", "call_module"}

// graphNodeLine parses "%name : [typename ][num_users=N] = op[target=T](...)".
func graphNodeLine(f *fxFunc, file, line string, p pos) error {
	at := func(off int) pos { return pos{p.line, p.col + off} }
	i := 1
	for i < len(line) && isNameByte(line[i]) {
		i++
	}
	name := line[1:i]
	if name == "" || !isNameStart(name[0]) {
		return errAt(file, p, "expected a node name after %%")
	}
	rest := line[i:]
	colon := strings.IndexByte(rest, ':')
	if colon < 0 || strings.TrimSpace(rest[:colon]) != "" {
		return errAt(file, at(i), "node %%%s: expected ':' after the name", name)
	}
	metaStart := i + colon + 1
	// Find "= op[target=" that starts the node's operation.
	opAt, op := -1, ""
	for j := metaStart; j < len(line) && opAt < 0; j++ {
		if line[j] != '=' {
			continue
		}
		k := j + 1
		for k < len(line) && line[k] == ' ' {
			k++
		}
		for _, o := range graphOps {
			if strings.HasPrefix(line[k:], o+"[") {
				opAt, op = k, o
				break
			}
		}
		if opAt >= 0 {
			st := graphMeta(name, strings.TrimSpace(line[metaStart:j]), at(metaStart))
			st.pos = p
			return graphOp(f, file, st, line, opAt, op, p)
		}
	}
	return errAt(file, at(metaStart), "node %%%s: expected \"= <op>[target=...]\" with op one of %s", name, strings.Join(graphOps, ", "))
}

// graphMeta reads the slot between ':' and '=': an optional type name or
// annotation, and the users count.
func graphMeta(name, meta string, p pos) *fxStmt {
	st := &fxStmt{name: name}
	for _, marker := range []string{"[num_users=", "[#users="} {
		if k := strings.LastIndex(meta, marker); k >= 0 && strings.HasSuffix(meta, "]") {
			meta = strings.TrimSpace(meta[:k])
			break
		}
	}
	if meta != "" {
		text := meta
		if len(text) >= 2 && (text[0] == '"' && text[len(text)-1] == '"' || text[0] == '\'' && text[len(text)-1] == '\'') {
			text = text[1 : len(text)-1]
		}
		st.annot = &annot{text: text, pos: p}
	}
	return st
}

// graphOp parses "op[target=T]" and its arguments.
func graphOp(f *fxFunc, file string, st *fxStmt, line string, opAt int, op string, p pos) error {
	at := func(off int) pos { return pos{p.line, p.col + off} }
	k := opAt + len(op) + 1
	if !strings.HasPrefix(line[k:], "target=") {
		return errAt(file, at(k), "node %%%s: expected target=", st.name)
	}
	k += len("target=")
	// The target ends at the ']' that closes "op[" (targets such as
	// "<built-in function getitem>" hold no brackets).
	depth, end := 0, -1
	for j := k; j < len(line) && end < 0; j++ {
		switch line[j] {
		case '[':
			depth++
		case ']':
			if depth == 0 {
				end = j
			}
			depth--
		}
	}
	if end < 0 {
		return errAt(file, at(k), "node %%%s: target is not closed by ']'", st.name)
	}
	target := strings.TrimSpace(line[k:end])
	target = builtinTarget(target)
	rest := line[end+1:]
	restAt := end + 1
	switch op {
	case "placeholder":
		// Optional "(default=...)" is ignored: a default does not change the input.
		if strings.TrimSpace(rest) != "" && !(strings.HasPrefix(rest, "(default=") && strings.HasSuffix(rest, ")")) {
			return errAt(file, at(restAt), "placeholder %%%s: unexpected %q", st.name, clip(rest))
		}
		for _, prm := range f.params {
			if prm.name == st.name {
				return errAt(file, p, "placeholder %%%s defined twice", st.name)
			}
		}
		for _, prev := range f.stmts {
			// torch prints a get_attr before a placeholder when the attribute was
			// created first (lifted constants of make_fx graphs).
			if _, ok := selfAttr(prev.rhs); !ok {
				return errAt(file, p, "placeholder %%%s after other nodes; inputs come first", st.name)
			}
		}
		f.params = append(f.params, &fxParam{name: st.name, annot: st.annot, pos: p})
		return nil
	case "get_attr":
		if t := strings.TrimSpace(rest); t != "" && t != "()" && t != "(args = (), kwargs = {})" {
			return errAt(file, at(restAt), "get_attr %%%s: unexpected %q", st.name, clip(rest))
		}
		st.rhs = &expr{kind: eName, name: "self." + target, pos: at(opAt), src: line, off: opAt, end: end + 1}
		f.stmts = append(f.stmts, st)
		return nil
	case "call_method":
		target = "Tensor." + target // the object is the first argument
	case "call_module":
		target = "module:" + target // kept opaque: the dump does not print the module
	}
	// call_function: "(args = (...), kwargs = {...})"
	const argsHead = "(args = "
	if !strings.HasPrefix(rest, argsHead) || !strings.HasSuffix(rest, ")") {
		return errAt(file, at(restAt), "node %%%s: expected \"(args = (...), kwargs = {...})\"", st.name)
	}
	body := rest[len(argsHead) : len(rest)-1]
	bodyAt := restAt + len(argsHead)
	kwAt := strings.LastIndex(body, ", kwargs = ")
	if kwAt < 0 {
		return errAt(file, at(bodyAt), "node %%%s: expected \", kwargs = {...}\"", st.name)
	}
	sc := &gscan{file: file, s: body[:kwAt], line: p.line, col0: p.col + bodyAt}
	args, err := sc.value(true)
	if err != nil {
		return err
	}
	if err := sc.end(); err != nil {
		return err
	}
	if args.kind != eTuple {
		return errAt(file, args.pos, "node %%%s: args must be a tuple", st.name)
	}
	kwText := body[kwAt+len(", kwargs = "):]
	ksc := &gscan{file: file, s: kwText, line: p.line, col0: p.col + bodyAt + kwAt + len(", kwargs = ")}
	kwargs, err := ksc.value(true)
	if err != nil {
		return err
	}
	if err := ksc.end(); err != nil {
		return err
	}
	if kwargs.kind != eDict {
		return errAt(file, kwargs.pos, "node %%%s: kwargs must be a dict", st.name)
	}
	call := &expr{kind: eCall, pos: at(opAt), src: line, off: opAt, end: len(line),
		fn:    &expr{kind: eName, name: target, pos: at(k), src: line, off: k, end: end},
		elems: args.elems, keys: kwargs.keys, kw: kwargs.elems}
	st.rhs = call
	f.stmts = append(f.stmts, st)
	return nil
}

// builtinTarget maps older spellings of builtin targets to their module names:
// "<built-in function getitem>" becomes "operator.getitem".
func builtinTarget(t string) string {
	if strings.HasPrefix(t, "<built-in function ") && strings.HasSuffix(t, ">") {
		return "operator." + strings.TrimSuffix(strings.TrimPrefix(t, "<built-in function "), ">")
	}
	return t
}

// gscan scans one graph-form value: %refs, (tuples), [lists], {k: v} dicts
// and words (everything else, as torch printed it with str()).
type gscan struct {
	file string
	s    string
	i    int
	line int
	col0 int
	// depth guards against pathological nesting.
	depth int
}

func (sc *gscan) at(i int) pos { return pos{sc.line, sc.col0 + i} }

func (sc *gscan) skipSpace() {
	for sc.i < len(sc.s) && sc.s[sc.i] == ' ' {
		sc.i++
	}
}

func (sc *gscan) end() error {
	sc.skipSpace()
	if sc.i < len(sc.s) {
		return errAt(sc.file, sc.at(sc.i), "unexpected %q", clip(sc.s[sc.i:]))
	}
	return nil
}

func (sc *gscan) mk(kind exprKind, start int) *expr {
	return &expr{kind: kind, pos: sc.at(start), src: sc.s, off: start, end: sc.i}
}

// value scans one value. refsOnly says names need a % to be references
// (true inside args; in "return" lines nodes are printed without it).
func (sc *gscan) value(refsOnly bool) (*expr, error) {
	sc.skipSpace()
	if sc.i >= len(sc.s) {
		return nil, errAt(sc.file, sc.at(sc.i), "expected a value, found end of line")
	}
	sc.depth++
	defer func() { sc.depth-- }()
	if sc.depth > maxDepth {
		return nil, errAt(sc.file, sc.at(sc.i), "value nested too deeply")
	}
	start := sc.i
	switch c := sc.s[sc.i]; c {
	case '%':
		sc.i++
		for sc.i < len(sc.s) && isNameByte(sc.s[sc.i]) {
			sc.i++
		}
		if sc.i == start+1 {
			return nil, errAt(sc.file, sc.at(start), "expected a node name after %%")
		}
		e := sc.mk(eRef, start)
		e.name = sc.s[start+1 : sc.i]
		return e, nil
	case '(', '[':
		closeBy := byte(')')
		kind := eTuple
		if c == '[' {
			closeBy, kind = ']', eList
		}
		sc.i++
		e := sc.mk(kind, start)
		for {
			sc.skipSpace()
			if sc.i < len(sc.s) && sc.s[sc.i] == closeBy {
				sc.i++
				break
			}
			v, err := sc.value(refsOnly)
			if err != nil {
				return nil, err
			}
			e.elems = append(e.elems, v)
			if len(e.elems) > MaxListElements {
				return nil, tooMany(sc.file, sc.at(start))
			}
			sc.skipSpace()
			if sc.i < len(sc.s) && sc.s[sc.i] == ',' {
				sc.i++
				continue
			}
			if sc.i < len(sc.s) && sc.s[sc.i] == closeBy {
				sc.i++
				break
			}
			return nil, errAt(sc.file, sc.at(sc.i), "expected ',' or %q", string(closeBy))
		}
		e.end = sc.i
		return e, nil
	case '{':
		sc.i++
		e := sc.mk(eDict, start)
		for {
			sc.skipSpace()
			if sc.i < len(sc.s) && sc.s[sc.i] == '}' {
				sc.i++
				break
			}
			k := strings.Index(sc.s[sc.i:], ": ")
			if k <= 0 {
				return nil, errAt(sc.file, sc.at(sc.i), "expected \"key: value\" in kwargs")
			}
			key := strings.TrimSpace(sc.s[sc.i : sc.i+k])
			key = strings.Trim(key, "'\"")
			sc.i += k + 2
			v, err := sc.value(refsOnly)
			if err != nil {
				return nil, err
			}
			e.keys = append(e.keys, key)
			e.elems = append(e.elems, v)
			if len(e.elems) > MaxListElements {
				return nil, tooMany(sc.file, sc.at(start))
			}
			sc.skipSpace()
			if sc.i < len(sc.s) && sc.s[sc.i] == ',' {
				sc.i++
				continue
			}
			if sc.i < len(sc.s) && sc.s[sc.i] == '}' {
				sc.i++
				break
			}
			return nil, errAt(sc.file, sc.at(sc.i), "expected ',' or '}'")
		}
		e.end = sc.i
		return e, nil
	}
	// A word: up to a separator at depth 0. Brackets inside a word nest
	// ("Eq(s0, 4)" in an assertion message stays one word); a comma ends the
	// word only when followed by a blank or a closing bracket, so
	// "bij,bjk->bik" stays one word too.
	depth := 0
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		if depth == 0 {
			if c == ')' || c == ']' || c == '}' {
				break
			}
			if c == ',' && (sc.i+1 == len(sc.s) || strings.IndexByte(" )]}", sc.s[sc.i+1]) >= 0) {
				break
			}
		}
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		}
		sc.i++
	}
	text := strings.TrimRight(sc.s[start:sc.i], " ")
	if text == "" {
		return nil, errAt(sc.file, sc.at(start), "expected a value")
	}
	e := sc.mk(eWord, start)
	e.name = text
	if !refsOnly && isIdentifier(text) && text != "None" && text != "True" && text != "False" {
		// In "return (add,)" a bare name is a node.
		e.kind = eRef
	}
	return e, nil
}

func isIdentifier(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}
