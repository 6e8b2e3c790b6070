package ir

import (
	"sort"
	"strconv"
	"strings"
)

// Print renders p in IR text form. The output parses back with Parse into
// a program that prints identically.
//
// The form, top to bottom (every section but the graph is optional):
//
//	meta "export.format" = "pt2"
//	symbol s0: [2, 1024] hint 8
//	symbol u0: [0, inf] unbacked
//	input p_fc_weight: parameter "fc.weight"
//	input x: user_input
//	output user_output
//	in_spec "…"
//	out_spec "…"
//	weight "fc.weight": f32[8, 4] = file("w.bin", offset=0, size=128)
//	module_call "" inputs ["x"] outputs ["gelu"]
//
//	graph forward(%p_fc_weight: f32[8, 4], %x: f32[s0, 4]) {
//	  %linear: f32[s0, 8] = aten.linear.default(%x, %p_fc_weight)
//	  %gelu: f32[s0, 8] = aten.gelu.default(%linear, approximate="tanh") {stack_trace = "m.py:3"}
//	  return %gelu
//	}
//
// Arguments bound to positional schema arguments print positionally up to
// the last one that differs from its default; keyword-only arguments print
// as name=value when they differ from their default. Higher-order ops print
// their regions right after the node line, as ^name(...) { ... } blocks.
func Print(p *Program) string {
	var b strings.Builder
	pr := printer{b: &b}
	pr.program(p)
	return b.String()
}

// PrintGraph renders one graph (and its regions) without the program header.
func PrintGraph(g *Graph) string {
	var b strings.Builder
	pr := printer{b: &b}
	pr.graph(g, 0, "graph ")
	return b.String()
}

type printer struct {
	b *strings.Builder
}

func (p *printer) w(ss ...string) {
	for _, s := range ss {
		p.b.WriteString(s)
	}
}

func (p *printer) program(prog *Program) {
	header := false
	for _, kv := range prog.Meta.Entries() {
		p.w("meta ", strconv.Quote(kv.Key), " = ", strconv.Quote(kv.Value), "\n")
		header = true
	}
	if prog.Env != nil {
		for _, s := range prog.Env.Symbols() {
			r, _ := prog.Env.Range(s)
			p.w("symbol ", s, ": ", r.String())
			if h, ok := prog.Env.Hint(s); ok {
				p.w(" hint ", strconv.FormatInt(h, 10))
			}
			if prog.Env.IsUnbacked(s) {
				p.w(" unbacked")
			}
			p.w("\n")
			header = true
		}
	}
	sig := &prog.Signature
	if !sig.IsTrivial() {
		for _, in := range sig.Inputs {
			p.w("input ", in.Name, ": ", in.Kind.String())
			if in.Target != "" && !(in.Kind == UserInput && in.Target == in.Name) {
				p.w(" ", strconv.Quote(in.Target))
			}
			if in.Persistent {
				p.w(" persistent")
			}
			if in.Kind == ConstantInput {
				p.w(" = ", in.Value.String())
			}
			p.w("\n")
		}
		for _, out := range sig.Outputs {
			p.w("output ", out.Kind.String())
			if out.Target != "" {
				p.w(" ", strconv.Quote(out.Target))
			}
			p.w("\n")
		}
		if sig.InSpec != "" {
			p.w("in_spec ", strconv.Quote(sig.InSpec), "\n")
		}
		if sig.OutSpec != "" {
			p.w("out_spec ", strconv.Quote(sig.OutSpec), "\n")
		}
		header = true
	}
	for _, wt := range prog.Weights {
		p.w("weight ", strconv.Quote(wt.Name), ": ", wt.Type.String())
		if wt.Strides != nil {
			p.w(" strides [")
			for i, s := range wt.Strides {
				if i > 0 {
					p.w(", ")
				}
				p.w(strconv.FormatInt(s, 10))
			}
			p.w("]")
		}
		if wt.StorageOffset != 0 {
			p.w(" offset ", strconv.FormatInt(wt.StorageOffset, 10))
		}
		if wt.Source != nil {
			p.w(" = ", wt.Source.String())
		}
		p.w("\n")
		header = true
	}
	for _, mc := range prog.ModuleCallGraph {
		p.w("module_call ", strconv.Quote(mc.FQN), " inputs ", quoteList(mc.Inputs), " outputs ", quoteList(mc.Outputs))
		if mc.InSpec != "" {
			p.w(" in_spec ", strconv.Quote(mc.InSpec))
		}
		if mc.OutSpec != "" {
			p.w(" out_spec ", strconv.Quote(mc.OutSpec))
		}
		p.w("\n")
		header = true
	}
	if header {
		p.w("\n")
	}
	p.graph(prog.Main, 0, "graph ")
}

func quoteList(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// maxIndentLevels caps the indentation of nested regions: deeper regions
// print at this indentation, so that the text of a program with regions
// nested n deep stays linear in n (the parser reads braces, not
// indentation).
const maxIndentLevels = 32

var indentSpaces = strings.Repeat("  ", maxIndentLevels+1)

// indentOf is the indentation of nesting level depth.
func indentOf(depth int) string {
	return indentSpaces[:2*min(depth, maxIndentLevels)]
}

func (p *printer) graph(g *Graph, depth int, keyword string) {
	indent := indentOf(depth)
	p.w(indent, keyword, g.Name, "(")
	for i, in := range g.Inputs {
		if i > 0 {
			p.w(", ")
		}
		p.w("%", in.Name, ": ", typeString(in.Type))
	}
	p.w(") {\n")
	inner := indentOf(depth + 1)
	for n := g.first; n != nil; n = n.next {
		p.node(n, depth+1)
	}
	p.w(inner, "return")
	for i, o := range g.ret.Args {
		if i > 0 {
			p.w(",")
		}
		p.w(" ", o.String())
	}
	p.w("\n", indent, "}\n")
}

func typeString(t Type) string {
	if t == nil {
		return "?"
	}
	return t.String()
}

func (p *printer) node(n *Node, depth int) {
	p.w(indentOf(depth))
	for i, r := range n.Results {
		if i > 0 {
			p.w(", ")
		}
		p.w("%", r.Name, ": ", typeString(r.Type))
	}
	if len(n.Results) > 0 {
		p.w(" = ")
	}
	p.w(n.Op.String(), "(")
	p.args(n)
	p.w(")")
	if n.Meta.Len() > 0 {
		p.w(" {")
		for i, kv := range n.Meta.Entries() {
			if i > 0 {
				p.w(", ")
			}
			p.w(metaKey(kv.Key), " = ", strconv.Quote(kv.Value))
		}
		p.w("}")
	}
	p.w("\n")
	for _, r := range n.Regions() {
		p.graph(r, depth, "^")
	}
}

func metaKey(k string) string {
	if isIdent(k) {
		return k
	}
	return strconv.Quote(k)
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// args prints a node's arguments: positional ones up to the last
// non-default, keyword-only ones when not default.
func (p *printer) args(n *Node) {
	s := &n.Op.Info().Schema
	if s.VarArgs {
		for i, a := range n.Args {
			if i > 0 {
				p.w(", ")
			}
			p.w(a.String())
		}
		return
	}
	lastPos := -1
	for i, as := range s.Args {
		if as.KwargOnly || i >= len(n.Args) {
			break
		}
		if !n.IsDefault(i) {
			lastPos = i
		}
	}
	first := true
	for i := 0; i <= lastPos; i++ {
		if !first {
			p.w(", ")
		}
		first = false
		p.w(n.Args[i].String())
	}
	for i, as := range s.Args {
		if !as.KwargOnly || i >= len(n.Args) || n.IsDefault(i) {
			continue
		}
		if !first {
			p.w(", ")
		}
		first = false
		p.w(as.Name, "=", n.Args[i].String())
	}
	// Arguments beyond the schema (never produced by BindArgs; kept visible for debugging).
	for i := len(s.Args); i < len(n.Args); i++ {
		if !first {
			p.w(", ")
		}
		first = false
		p.w(n.Args[i].String())
	}
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
