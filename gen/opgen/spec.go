package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fxport/fxport/gen/schema"
)

// propNames are the flag names of ir.OpProps (ir.ParseOpProp) with the Go
// constant each maps to. The order is the order flags are printed in.
var propNames = []struct{ name, ident string }{
	{"functional", "PropFunctional"},
	{"inplace", "PropInplace"},
	{"view", "PropView"},
	{"out", "PropOutVariant"},
	{"core", "PropCore"},
	{"side_effects", "PropSideEffects"},
	{"random", "PropRandom"},
	{"symbolic", "PropSymbolic"},
	{"higher_order", "PropHigherOrder"},
	{"commutative", "PropCommutative"},
	{"pointwise", "PropPointwise"},
}

// tagProps are the flags only the tag list (gen/torchtags.spec) sets; the
// spec may not write them by hand.
var tagProps = map[string]bool{"pointwise": true}

func isProp(name string) bool {
	if tagProps[name] {
		return false
	}
	for _, p := range propNames {
		if p.name == name {
			return true
		}
	}
	return false
}

// pythonNamespaces hold Python callables rather than torch library ops: their
// ops have no overload name and take positional arguments only.
var pythonNamespaces = map[string]bool{"operator": true, "math": true, "builtins": true, "torch": true}

// noOverloadNamespaces have no ".default" overload in IR names.
func noOverload(ns string) bool { return pythonNamespaces[ns] || ns == "higher_order" }

// NoRule is the infer= value of ops without a shape/dtype rule.
const NoRule = "none"

// OpSpec is one op line of the spec.
type OpSpec struct {
	Line    int
	Section string
	Src     string // the schema text
	Schema  *schema.Schema
	// IR name parts.
	Name, Namespace, Base, Overload string
	Props                           map[string]bool
	Infer                           string
	// Twins as IR names; filled both ways by completeTwins.
	Functional, Inplace, Out string
	// twinCol remembers where each twin was written, for errors.
	twinLine map[string]int
	VarArgs  bool
	// Kernel is the ExecuTorch kernel library registering the op ("" when
	// none does); set from the kernel list by MergeKernels.
	Kernel string
}

// Spec is a parsed spec file.
type Spec struct {
	File   string
	Ops    []*OpSpec
	byName map[string]*OpSpec
}

// SpecError is an error at a line (and column, when known) of the spec.
type SpecError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *SpecError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// ErrorList collects several spec errors.
type ErrorList []error

func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// IRName converts a schema-style op name to the IR spelling.
func IRName(ns, name, overload string) (base, ovl, full string) {
	if overload == "" && !noOverload(ns) {
		overload = "default"
	}
	full = ns + "." + name
	if overload != "" {
		full += "." + overload
	}
	return name, overload, full
}

// resolveRef turns a twin reference (aten::add_.Tensor, aten::relu_, or the IR
// spelling aten.add_.Tensor) into an IR name.
func resolveRef(ref string) (string, error) {
	if ns, rest, ok := strings.Cut(ref, "::"); ok {
		name, ovl, _ := strings.Cut(rest, ".")
		if ns == "" || name == "" {
			return "", fmt.Errorf("bad op reference %q", ref)
		}
		_, _, full := IRName(ns, name, ovl)
		return full, nil
	}
	if strings.Count(ref, ".") < 1 {
		return "", fmt.Errorf("bad op reference %q: want namespace::name.overload", ref)
	}
	return ref, nil
}

// stripComment removes a '#' comment that is not inside a quoted string.
func stripComment(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			return line[:i]
		}
	}
	return line
}

// splitAttrs finds the '|' that separates the schema from the attributes: the
// first one outside parentheses and quotes.
func splitAttrs(line string) (schemaPart string, attrs string, attrCol int) {
	depth := 0
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			return line[:i], line[i+1:], i + 2
		}
	}
	return line, "", 0
}

type attr struct {
	text string
	col  int
}

func fields(s string, col0 int) []attr {
	var out []attr
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		start := i
		for i < len(s) && s[i] != ' ' && s[i] != '\t' {
			i++
		}
		if i > start {
			out = append(out, attr{s[start:i], col0 + start})
		}
	}
	return out
}

type sectionDefaults struct {
	title string
	props map[string]bool
	infer string
}

// ParseSpec reads the spec text.
func ParseSpec(file string, src []byte) (*Spec, error) {
	spec := &Spec{File: file, byName: map[string]*OpSpec{}}
	var errs ErrorList
	errAt := func(line, col int, format string, args ...any) {
		errs = append(errs, &SpecError{File: file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)})
	}
	sec := sectionDefaults{props: map[string]bool{}}
	for i, raw := range strings.Split(string(src), "\n") {
		lineNo := i + 1
		line := strings.TrimRight(stripComment(raw), " \t\r")
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" {
			continue
		}
		indent := len(line) - len(trimmed)
		if trimmed[0] == '[' {
			end := strings.IndexByte(trimmed, ']')
			if end < 0 {
				errAt(lineNo, indent+1, "section header without ']'")
				continue
			}
			sec = sectionDefaults{title: strings.TrimSpace(trimmed[1:end]), props: map[string]bool{}}
			for _, a := range fields(trimmed[end+1:], indent+end+2) {
				switch {
				case isProp(a.text):
					sec.props[a.text] = true
				case strings.HasPrefix(a.text, "infer="):
					sec.infer = strings.TrimPrefix(a.text, "infer=")
				default:
					errAt(lineNo, a.col, "section attribute %q: only flags and infer= are allowed", a.text)
				}
			}
			continue
		}
		schemaText, attrText, attrCol := splitAttrs(line)
		schemaText = strings.TrimRight(schemaText, " \t")
		s, err := schema.Parse(strings.TrimLeft(schemaText, " \t"))
		if err != nil {
			col := 0
			if se, ok := err.(*schema.Error); ok {
				col = se.Col + indent
				err = fmt.Errorf("%s", se.Msg)
			}
			errAt(lineNo, col, "%v", err)
			continue
		}
		if s.Namespace == "" {
			errAt(lineNo, indent+1, "op %s has no namespace (write ns::%s)", s.Name, s.Name)
			continue
		}
		op := &OpSpec{Line: lineNo, Section: sec.title, Src: strings.TrimSpace(schemaText), Schema: s,
			Namespace: s.Namespace, Props: map[string]bool{}, Infer: sec.infer, twinLine: map[string]int{}}
		op.Base, op.Overload, op.Name = IRName(s.Namespace, s.Name, s.Overload)
		if noOverload(s.Namespace) && s.Overload != "" {
			errAt(lineNo, indent+1, "%s ops have no overloads: %s", s.Namespace, s.QualifiedName())
			continue
		}
		op.VarArgs = s.VarArgs || pythonNamespaces[s.Namespace]
		for p := range sec.props {
			op.Props[p] = true
		}
		for _, a := range fields(attrText, attrCol) {
			key, val, hasVal := strings.Cut(a.text, "=")
			switch {
			case !hasVal && isProp(key):
				op.Props[key] = true
			case !hasVal && strings.HasPrefix(key, "-") && isProp(key[1:]):
				if !op.Props[key[1:]] {
					errAt(lineNo, a.col, "%q drops flag %s, which the section does not set", a.text, key[1:])
				}
				delete(op.Props, key[1:])
			case hasVal && key == "infer":
				if val == "" {
					errAt(lineNo, a.col, "empty infer=")
				}
				op.Infer = val
			case hasVal && (key == "inplace" || key == "out" || key == "functional"):
				name, err := resolveRef(val)
				if err != nil {
					errAt(lineNo, a.col, "%s=: %v", key, err)
					continue
				}
				switch key {
				case "inplace":
					op.Inplace = name
				case "out":
					op.Out = name
				case "functional":
					op.Functional = name
				}
				op.twinLine[key] = a.col
			default:
				errAt(lineNo, a.col, "unknown attribute %q", a.text)
			}
		}
		if op.Infer == "" {
			errAt(lineNo, indent+1, "%s has no infer= rule (use infer=%s if it has none yet)", op.Name, NoRule)
		}
		if prev, dup := spec.byName[op.Name]; dup {
			errAt(lineNo, indent+1, "%s declared twice (first at line %d)", op.Name, prev.Line)
			continue
		}
		spec.byName[op.Name] = op
		spec.Ops = append(spec.Ops, op)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return spec, nil
}

// Validate checks the spec's consistency and completes the twin maps. rules
// is the set of rule names that have an implementation.
func (spec *Spec) Validate(rules map[string]bool) error {
	var errs ErrorList
	errAt := func(op *OpSpec, format string, args ...any) {
		errs = append(errs, &SpecError{File: spec.File, Line: op.Line, Msg: fmt.Sprintf(format, args...)})
	}
	used := map[string]bool{}
	for _, op := range spec.Ops {
		s := op.Schema
		if op.Infer != NoRule {
			used[op.Infer] = true
			if rules != nil && !rules[op.Infer] {
				errAt(op, "%s: unknown infer rule %q (no func %s in the rule files)", op.Name, op.Infer, RuleFunc(op.Infer))
			}
		}
		if op.Props["inplace"] {
			if len(s.Args) == 0 || !s.Args[0].Mutates() {
				errAt(op, "%s is inplace but its first argument is not mutated (write Tensor(a!) self)", op.Name)
			}
		}
		if op.Props["out"] {
			n := 0
			for _, a := range s.Args {
				if a.Mutates() {
					n++
					if !a.KwargOnly {
						errAt(op, "%s: out argument %q must be keyword-only", op.Name, a.Name)
					}
				}
			}
			if n == 0 {
				errAt(op, "%s is an out variant but has no mutated (a!) argument", op.Name)
			}
		}
		if op.Props["functional"] {
			for _, a := range s.Args {
				if a.Mutates() {
					errAt(op, "%s is functional but mutates argument %q", op.Name, a.Name)
				}
			}
			if op.Props["view"] {
				errAt(op, "%s cannot be both functional and a view", op.Name)
			}
		}
		if op.Props["commutative"] {
			if op.Props["side_effects"] {
				errAt(op, "%s: commutative ops cannot have side effects", op.Name)
			}
			if len(s.Args) < 2 {
				errAt(op, "%s: commutative needs two operands", op.Name)
			} else if s.Args[0].Type != s.Args[1].Type {
				errAt(op, "%s: commutative operands %q and %q have different types", op.Name, s.Args[0].Name, s.Args[1].Name)
			}
		}
		if op.Props["view"] {
			aliasedRet := false
			for _, r := range s.Returns {
				if r.Alias != "" && !strings.Contains(r.Alias, "!") {
					aliasedRet = true
				}
			}
			aliasedArg := false
			for _, a := range s.Args {
				if a.Alias != "" && !a.Mutates() {
					aliasedArg = true
				}
			}
			if !aliasedRet || !aliasedArg {
				errAt(op, "%s is a view but its schema has no alias annotation (write Tensor(a) self -> Tensor(a))", op.Name)
			}
		}
		if op.Props["higher_order"] && op.Namespace != "higher_order" {
			errAt(op, "%s: higher_order ops live in the higher_order namespace", op.Name)
		}
	}
	if rules != nil {
		var unused []string
		for r := range rules {
			if !used[r] {
				unused = append(unused, r)
			}
		}
		sort.Strings(unused)
		for _, r := range unused {
			errs = append(errs, &SpecError{File: spec.File, Line: 1, Msg: fmt.Sprintf("rule %q (func %s) is used by no op", r, RuleFunc(r))})
		}
	}
	if len(errs) == 0 {
		errs = append(errs, spec.completeTwins()...)
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// completeTwins fills each twin relation in on the other side and checks that
// both ends exist and agree.
func (spec *Spec) completeTwins() ErrorList {
	var errs ErrorList
	errAt := func(op *OpSpec, format string, args ...any) {
		errs = append(errs, &SpecError{File: spec.File, Line: op.Line, Msg: fmt.Sprintf(format, args...)})
	}
	link := func(from *OpSpec, kind string, target string) {
		to, ok := spec.byName[target]
		if !ok {
			errAt(from, "%s: %s twin %s is not in the spec", from.Name, kind, target)
			return
		}
		switch kind {
		case "inplace", "out":
			// from is the functional op.
			if !to.Props[kind] {
				errAt(to, "%s is the %s twin of %s but lacks the %s flag", to.Name, kind, from.Name, kind)
			}
			if to.Functional != "" && to.Functional != from.Name {
				errAt(to, "%s names functional twin %s, but %s claims it as its %s twin", to.Name, to.Functional, from.Name, kind)
				return
			}
			to.Functional = from.Name
			if kind == "inplace" {
				checkInplaceSchema(from, to, errAt)
			} else {
				checkOutSchema(from, to, errAt)
			}
		case "functional":
			var kindOfFrom string
			switch {
			case from.Props["inplace"]:
				kindOfFrom = "inplace"
			case from.Props["out"]:
				kindOfFrom = "out"
			default:
				errAt(from, "%s names a functional twin but is neither inplace nor out", from.Name)
				return
			}
			cur := &to.Inplace
			if kindOfFrom == "out" {
				cur = &to.Out
			}
			if *cur != "" && *cur != from.Name {
				errAt(from, "%s names functional twin %s, whose %s twin is %s", from.Name, to.Name, kindOfFrom, *cur)
				return
			}
			*cur = from.Name
			if kindOfFrom == "inplace" {
				checkInplaceSchema(to, from, errAt)
			} else {
				checkOutSchema(to, from, errAt)
			}
		}
	}
	for _, op := range spec.Ops {
		if op.Inplace != "" {
			link(op, "inplace", op.Inplace)
		}
		if op.Out != "" {
			link(op, "out", op.Out)
		}
	}
	for _, op := range spec.Ops {
		if op.Functional != "" {
			if _, ok := spec.byName[op.Functional]; !ok {
				errAt(op, "%s: functional twin %s is not in the spec", op.Name, op.Functional)
				continue
			}
			// Twins declared only on this side are linked here.
			if op.twinLine["functional"] > 0 {
				link(op, "functional", op.Functional)
			}
		}
	}
	return errs
}

func sameArg(a, b schema.Arg) bool {
	return a.Name == b.Name && a.Type == b.Type && a.KwargOnly == b.KwargOnly
}

// checkInplaceSchema: the in-place op has the functional op's arguments, with
// the first one mutated.
func checkInplaceSchema(fn, ip *OpSpec, errAt func(*OpSpec, string, ...any)) {
	fa, ia := fn.Schema.Args, ip.Schema.Args
	if len(fa) != len(ia) {
		errAt(ip, "%s and its functional twin %s have different argument counts (%d vs %d)", ip.Name, fn.Name, len(ia), len(fa))
		return
	}
	for i := range fa {
		if !sameArg(fa[i], ia[i]) {
			errAt(ip, "%s and its functional twin %s disagree on argument %d (%s %s vs %s %s)", ip.Name, fn.Name, i, ia[i].Type, ia[i].Name, fa[i].Type, fa[i].Name)
			return
		}
	}
	if len(ip.Schema.Returns) != 1 {
		errAt(ip, "%s: an in-place op returns its first argument", ip.Name)
	}
}

// checkOutSchema: each non-out argument of the out variant is an argument of
// the functional op with the same type, and there is one out argument per
// result of the functional op.
func checkOutSchema(fn, out *OpSpec, errAt func(*OpSpec, string, ...any)) {
	nOut := 0
	for _, a := range out.Schema.Args {
		if a.Mutates() {
			nOut++
			continue
		}
		found := false
		for _, b := range fn.Schema.Args {
			if b.Name == a.Name {
				found = true
				if a.Type != b.Type {
					errAt(out, "%s and its functional twin %s disagree on the type of %q (%s vs %s)", out.Name, fn.Name, a.Name, a.Type, b.Type)
				}
			}
		}
		if !found {
			errAt(out, "%s has argument %q that its functional twin %s lacks", out.Name, a.Name, fn.Name)
		}
	}
	want := len(fn.Schema.Returns)
	if want == 1 && fn.Schema.Returns[0].Type.List {
		want = 1 // Tensor[] results are written to one Tensor(a!)[] out argument.
	}
	if nOut != want {
		errAt(out, "%s has %d out arguments for the %d results of %s", out.Name, nOut, want, fn.Name)
	}
}
