package pm

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/fxport/fxport/ir"
)

// TargetKind says how a workaround target was spelled.
type TargetKind uint8

// Target kinds.
const (
	// TargetOp is an op overload: "aten.where.self", "aten::where.self",
	// "torch.ops.aten.where.self", "operator.le".
	TargetOp TargetKind = iota + 1
	// TargetAPI is a torch API path from the API table: "torch.where",
	// "torch.Tensor.where", "torch.nn.functional.pad".
	TargetAPI
	// TargetMethod is a model method: "<module>.<Class>.<method>", matched
	// through node metadata.
	TargetMethod
)

func (k TargetKind) String() string {
	switch k {
	case TargetOp:
		return "op"
	case TargetAPI:
		return "api"
	case TargetMethod:
		return "method"
	}
	return fmt.Sprintf("TargetKind(%d)", uint8(k))
}

// ResolvedTarget is a target string resolved against the op and API tables.
type ResolvedTarget struct {
	Spec string
	Kind TargetKind
	// Ops are the overloads the target matches (op and API targets).
	Ops []ir.Op
	// Module, Class and Method split a method target.
	Module, Class, Method string
}

// ResolveTarget resolves a workaround target. Resolution never skips
// silently: an unknown op, an unknown API path and a malformed method path
// are errors.
func ResolveTarget(spec string) (ResolvedTarget, error) {
	if spec == "" {
		return ResolvedTarget{}, fmt.Errorf("empty target")
	}
	if op, ok := ir.LookupOp(spec); ok {
		return ResolvedTarget{Spec: spec, Kind: TargetOp, Ops: []ir.Op{op}}, nil
	}
	if strings.Contains(spec, "::") || strings.HasPrefix(spec, "torch.ops.") {
		return ResolvedTarget{}, fmt.Errorf("unknown op %q", spec)
	}
	if strings.HasPrefix(spec, "torch.") {
		ops, ok := apiOverloads[spec]
		if !ok {
			return ResolvedTarget{}, fmt.Errorf("unknown torch API path %q (not in pm's API table)", spec)
		}
		return ResolvedTarget{Spec: spec, Kind: TargetAPI, Ops: append([]ir.Op(nil), ops...)}, nil
	}
	segs := strings.Split(spec, ".")
	cls := -1
	for i, s := range segs {
		if !isIdent(s) {
			return ResolvedTarget{}, fmt.Errorf("malformed target path %q: segment %d %q is not an identifier", spec, i+1, s)
		}
		if cls < 0 && unicode.IsUpper(rune(s[0])) {
			cls = i
		}
	}
	switch {
	case cls < 0 && len(segs) <= 3 && opNamespaces()[segs[0]]:
		return ResolvedTarget{}, fmt.Errorf("unknown op %q", spec)
	case cls < 0:
		return ResolvedTarget{}, fmt.Errorf("malformed method path %q: no class segment (want <module>.<Class>.<method>)", spec)
	case cls == 0:
		return ResolvedTarget{}, fmt.Errorf("malformed method path %q: no module before class %s", spec, segs[0])
	case cls == len(segs)-1:
		return ResolvedTarget{}, fmt.Errorf("malformed method path %q: no method after class %s", spec, segs[cls])
	}
	return ResolvedTarget{Spec: spec, Kind: TargetMethod,
		Module: strings.Join(segs[:cls], "."), Class: strings.Join(segs[cls:len(segs)-1], "."), Method: segs[len(segs)-1]}, nil
}

// opNamespaces is the set of namespaces of the op table ("aten", "operator", …).
var opNamespaces = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, op := range ir.AllOps() {
		m[op.Info().Namespace] = true
	}
	return m
})

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// matcher decides whether a node is a target of an entry.
type matcher struct {
	ops     map[ir.Op]bool
	methods []ResolvedTarget
}

// newOpMatcher matches the given ops (node fixes and translations name
// their targets by op constant).
func newOpMatcher(ops []ir.Op) (*matcher, error) {
	if len(ops) == 0 {
		return nil, fmt.Errorf("no targets")
	}
	m := &matcher{ops: map[ir.Op]bool{}}
	for _, op := range ops {
		if !op.Valid() {
			return nil, fmt.Errorf("target %d is not an op of the table", int32(op))
		}
		m.ops[op] = true
	}
	return m, nil
}

// opNames are the names of ops, for listings.
func opNames(ops []ir.Op) []string {
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = op.String()
	}
	return out
}

// newMatcher resolves targets; opsOnly rejects API and method targets
// (node fixes and translations see ATen nodes, not torch API calls).
func newMatcher(targets []string, opsOnly bool) (*matcher, error) {
	if len(targets) == 0 {
		return nil, fmt.Errorf("no targets")
	}
	m := &matcher{ops: map[ir.Op]bool{}}
	for _, t := range targets {
		r, err := ResolveTarget(t)
		if err != nil {
			return nil, fmt.Errorf("target %q: %w", t, err)
		}
		if opsOnly && r.Kind != TargetOp {
			return nil, fmt.Errorf("target %q: must be an op overload, not a %s path", t, r.Kind)
		}
		if r.Kind == TargetMethod {
			m.methods = append(m.methods, r)
		}
		for _, op := range r.Ops {
			m.ops[op] = true
		}
	}
	return m, nil
}

// sortedOps lists the matched ops in op order.
func (m *matcher) sortedOps() []ir.Op {
	out := make([]ir.Op, 0, len(m.ops))
	for op := range m.ops {
		out = append(out, op)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (m *matcher) matches(n *ir.Node) bool {
	if m.ops[n.Op] {
		return true
	}
	for _, t := range m.methods {
		if t.matchesMeta(&n.Meta) {
			return true
		}
	}
	return false
}

// matchesMeta reports whether metadata says the node came from the method:
// nn_module_stack mentions the class (as "<module>.<Class>") and the stack
// trace has a frame "in <method>" or source_fn_stack mentions the method.
func (t ResolvedTarget) matchesMeta(m *ir.Meta) bool {
	stack, _ := m.Get(ir.MetaNNModuleStack)
	if !containsToken(stack, t.Module+"."+t.Class) {
		return false
	}
	if trace, ok := m.Get(ir.MetaStackTrace); ok {
		for _, line := range strings.Split(trace, "\n") {
			line = strings.TrimSpace(line)
			if strings.HasSuffix(line, " in "+t.Method) || line == "in "+t.Method {
				return true
			}
		}
	}
	fns, _ := m.Get(ir.MetaSourceFnStack)
	return containsToken(fns, t.Method)
}

// containsToken reports whether tok occurs in s delimited by non-identifier
// characters other than '.' (so "a.B" does not match inside "a.Bc" or "x.a.B").
func containsToken(s, tok string) bool {
	if tok == "" {
		return false
	}
	inTok := func(r byte) bool {
		return r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(s[i:], tok)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(tok)
		if (start == 0 || !inTok(s[start-1])) && (end == len(s) || !inTok(s[end])) {
			return true
		}
		i = start + 1
	}
}
