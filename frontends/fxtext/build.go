package fxtext

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// builder holds what one Parse call shares across graphs.
type builder struct {
	file     string
	opts     Options
	prog     *ir.Program
	nodes    int // nodes built so far
	maxNodes int // the most a dump of this size may build
	// tokenInputs names main-graph inputs the signature says are effect tokens.
	tokenInputs map[string]bool
}

// nodeBudget bounds the work a dump can cause: a subgraph class is built
// once per node that references it, so nesting could otherwise multiply a
// small dump into an enormous program.
func nodeBudget(srcLen int) int { return 4096 + 32*srcLen }

// bindKind says what an FX name stands for.
type bindKind uint8

const (
	bValue  bindKind = iota // an SSA value
	bTuple                  // the results of a multi-result node, selected by getitem
	bModule                 // a submodule (a subgraph), from get_attr / self.x
	bNone                   // a node without results
)

type binding struct {
	kind  bindKind
	value *ir.Value
	elems []binding
	mod   *fxModule
	attr  string // the attribute name a module was read from
}

// values flattens a binding to its SSA values.
func (b binding) values() []*ir.Value {
	switch b.kind {
	case bValue:
		return []*ir.Value{b.value}
	case bTuple:
		var out []*ir.Value
		for _, e := range b.elems {
			out = append(out, e.values()...)
		}
		return out
	}
	return nil
}

// gbuild builds one graph (the main graph or a region) from a forward.
type gbuild struct {
	*builder
	g        *ir.Graph
	ib       *ir.Builder
	mod      *fxModule
	fn       *fxFunc
	isMain   bool
	scope    map[string]binding
	items    map[string]map[int64]*fxStmt // getitem statements by the name they select from
	reserved map[string]bool
	suffix   map[string]int // last suffix fresh handed out per base
	lifted   []liftedAttr
	outNames []string
	// dynamoLevel is set for graphs that call torch functions or tensor
	// methods: there an operator on a value of unknown type is a tensor op.
	dynamoLevel bool
	// opaqueWhy is the note of the opaque call being emitted.
	opaqueWhy string
}

// liftedAttr is a tensor attribute (get_attr of a weight or constant) that
// the main graph reads; it becomes a graph input.
type liftedAttr struct {
	name, target string
	kind         ir.InputKind
}

func newGraphBuilder(b *builder, g *ir.Graph, mod *fxModule, isMain bool) *gbuild {
	return &gbuild{builder: b, g: g, ib: ir.NewBuilder(g), mod: mod, fn: mod.forward, isMain: isMain,
		scope: map[string]binding{}, items: map[string]map[int64]*fxStmt{}, reserved: map[string]bool{}}
}

func (gb *gbuild) errorf(p pos, format string, args ...any) error {
	return errAt(gb.file, p, format, args...)
}

// nodeErr locates an error at a statement and names its node.
func (gb *gbuild) nodeErr(st *fxStmt, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if st.name != "" {
		msg = fmt.Sprintf("node %%%s: %s", st.name, msg)
	}
	return errAt(gb.file, st.pos, "%s", msg)
}

// build makes the graph: inputs (typed from annotations, then from inTypes
// for regions or Options.InputTypes for the main graph), nodes, outputs.
func (gb *gbuild) build(inTypes []ir.Type, what string) error {
	fn := gb.fn
	for _, p := range fn.params {
		gb.reserved[p.name] = true
	}
	for _, st := range fn.stmts {
		if st.name != "" {
			gb.reserved[st.name] = true
		}
		for _, a := range st.alias {
			gb.reserved[a] = true
		}
		if base, idx, ok := getitemOf(st.rhs); ok && st.name != "" {
			if gb.items[base] == nil {
				gb.items[base] = map[int64]*fxStmt{}
			}
			if _, dup := gb.items[base][idx]; !dup {
				gb.items[base][idx] = st
			}
		}
	}
	gb.dynamoLevel = isDynamoLevel(fn)
	if gb.isMain {
		if err := gb.liftAttrs(); err != nil {
			return err
		}
	}
	if inTypes != nil && len(inTypes) != len(fn.params) {
		for _, p := range fn.params {
			if p.annot == nil {
				return gb.errorf(fn.pos, "%s: the subgraph takes %d inputs, the operator passes %d", what, len(fn.params), len(inTypes))
			}
		}
		inTypes = nil
	}
	for i, p := range fn.params {
		var t ir.Type
		if p.annot != nil {
			at, _, ok, err := annotType(p.annot.text)
			if err != nil {
				return gb.errorf(p.annot.pos, "input %s: %v", p.name, err)
			}
			if ok {
				t = at
			}
		}
		if gb.isMain && gb.tokenInputs[p.name] {
			t = ir.Token // torch annotates effect tokens as empty tensors
		}
		if t == nil && inTypes != nil {
			t = inTypes[i]
		}
		if t == nil && gb.isMain {
			t = gb.opts.InputTypes[p.name]
		}
		if t == nil {
			// The dump does not say: the input is unknown until it is given
			// (Options.InputTypes, Retype); inference leaves what depends on it unknown.
			t = ir.Unknown
		}
		v, err := gb.g.AddInput(p.name, t)
		if err != nil {
			return gb.errorf(p.pos, "input %s: %v", p.name, err)
		}
		gb.declareSymbols(t)
		gb.scope[p.name] = binding{kind: bValue, value: v}
	}
	for _, st := range fn.stmts {
		if err := gb.stmt(st); err != nil {
			return err
		}
	}
	outs, err := gb.outputs()
	if err != nil {
		return err
	}
	gb.g.SetOutputs(outs...)
	return nil
}

// getitemOf recognizes "x[i]" and "operator.getitem(x, i)" with a literal index.
func getitemOf(e *expr) (string, int64, bool) {
	if e == nil {
		return "", 0, false
	}
	var base, idx *expr
	switch {
	case e.kind == eSubscript && len(e.elems) == 1:
		base, idx = e.fn, e.elems[0]
	case e.kind == eCall && e.fn.kind == eName && isGetitemTarget(e.fn.name) && len(e.elems) == 2 && len(e.keys) == 0:
		base, idx = e.elems[0], e.elems[1]
	default:
		return "", 0, false
	}
	name, ok := base.simpleName()
	if !ok {
		return "", 0, false
	}
	switch idx.kind {
	case eInt:
		return name, idx.i, true
	case eWord:
		var v int64
		if _, err := fmt.Sscan(idx.name, &v); err == nil && fmt.Sprint(v) == idx.name {
			return name, v, true
		}
	}
	return "", 0, false
}

func isGetitemTarget(t string) bool {
	return t == "operator.getitem" || t == "_operator.getitem" || t == "getitem"
}

// declareSymbols registers size symbols a type mentions that the program
// does not know yet, with the range of a size ([0, inf]).
func (gb *gbuild) declareSymbols(t ir.Type) {
	for _, s := range typeSymbols(t) {
		if _, known := gb.prog.Env.Range(s); !known {
			gb.prog.Env.Declare(s, sym.Range{Lo: sym.Finite(0), Hi: sym.PosInf()}, nil, isUnbackedName(s))
		}
	}
}

// fresh returns an unused value name built from base.
func (gb *gbuild) fresh(base string) string {
	if base == "" || !isNameStart(base[0]) {
		base = "v" + base
	}
	if gb.suffix == nil {
		gb.suffix = map[string]int{}
	}
	for i := gb.suffix[base]; ; i++ {
		n := base
		if i > 0 {
			n = fmt.Sprintf("%s_%d", base, i)
		}
		if !gb.reserved[n] && gb.g.Value(n) == nil {
			gb.reserved[n] = true
			gb.suffix[base] = i + 1
			return n
		}
	}
}

// lookup resolves a name or %ref.
func (gb *gbuild) lookup(e *expr) (binding, bool) {
	name, ok := e.simpleName()
	if !ok {
		return binding{}, false
	}
	b, ok := gb.scope[name]
	return b, ok
}

func (gb *gbuild) bind(st *fxStmt, b binding) {
	if st.name != "" {
		gb.scope[st.name] = b
	}
	for _, a := range st.alias {
		gb.scope[a] = b
	}
}

var infixOps = map[string]string{
	"+": "operator.add", "-": "operator.sub", "*": "operator.mul", "/": "operator.truediv",
	"//": "operator.floordiv", "%": "operator.mod", "**": "operator.pow",
	"==": "operator.eq", "!=": "operator.ne", "<": "operator.lt", "<=": "operator.le",
	">": "operator.gt", ">=": "operator.ge", "&": "operator.and_", "|": "operator.or_",
	"^": "operator.xor", "<<": "operator.lshift", ">>": "operator.rshift", "@": "operator.matmul",
}

var unaryOps = map[string]string{"-": "operator.neg", "+": "operator.pos", "~": "operator.invert", "not": "operator.not_"}

// stmt builds one node.
func (gb *gbuild) stmt(st *fxStmt) error {
	gb.nodes++
	if gb.nodes > gb.maxNodes {
		return gb.errorf(st.pos, "the dump expands to more than %d nodes (subgraphs are built once per reference)", gb.maxNodes)
	}
	if st.name != "" && !st.rebind {
		if _, dup := gb.scope[st.name]; dup {
			if path, ok := selfAttr(st.rhs); ok && gb.isMain && gb.liftedName(st.name, path) {
				return nil
			}
			return gb.nodeErr(st, "%s is defined twice", st.name)
		}
	}
	rhs := st.rhs
	if path, ok := selfAttr(rhs); ok {
		m := gb.resolveModule(path)
		if m == nil && !gb.isMain && !gb.usedAsSubgraph(st.name, path) {
			// A constant read inside a subgraph (edge-dialect while_loop bodies):
			// regions take only their inputs, so it is kept as an opaque read.
			return gb.opaque(st, "get_attr", []*expr{{kind: eStr, s: path, pos: st.pos}}, nil, nil, "a tensor attribute read inside a subgraph")
		}
		// m is nil for a subgraph the dump does not print.
		gb.bind(st, binding{kind: bModule, mod: m, attr: path[strings.LastIndex(path, ".")+1:]})
		return nil
	}
	if base, idx, ok := getitemOf(rhs); ok && !gb.isTensorValue(base) {
		return gb.getitem(st, base, idx)
	}
	if b, ix, ok := subscriptOf(rhs); ok {
		if name, _ := b.simpleName(); gb.isTensorValue(name) {
			if done, err := gb.tensorIndex(st, b, ix); done {
				return err
			}
			return gb.opaque(st, "Tensor.__getitem__", []*expr{b, ix}, nil, nil, "an index expression fxtext does not map to ATen")
		}
	}
	switch rhs.kind {
	case eSubscript:
		return gb.nodeErr(st, "subscript %s: the index must be an int literal", clip(rhs.text()))
	case eBinOp:
		target, ok := infixOps[rhs.name]
		if !ok {
			return gb.nodeErr(st, "operator %q is not FX code", rhs.name)
		}
		return gb.callTarget(st, target, rhs.elems, nil, nil)
	case eUnary:
		target := unaryOps[rhs.name]
		return gb.callTarget(st, target, rhs.elems, nil, nil)
	case eCall:
		if rhs.fn.kind == eAttr {
			// f(x).y(...) does not occur in FX code; keep it opaque.
			return gb.opaque(st, rhs.fn.text(), rhs.elems, rhs.keys, rhs.kw, "a call on an expression")
		}
		if rhs.fn.kind != eName {
			return gb.nodeErr(st, "call of %s: the callee must be an operator name", clip(rhs.fn.text()))
		}
		return gb.callTarget(st, rhs.fn.name, rhs.elems, rhs.keys, rhs.kw)
	case eName, eRef:
		if b, ok := gb.lookup(rhs); ok {
			gb.bind(st, b) // "l_x_ = L_x_"
			return nil
		}
		return gb.nodeErr(st, "undefined name %s", rhs.name)
	}
	return gb.nodeErr(st, "%s is not an operator call", clip(rhs.text()))
}

// lookupTarget finds the op a printed target names.
func lookupTarget(target string) (ir.Op, bool) {
	if op, ok := ir.LookupOp(target); ok {
		return op, true
	}
	if !strings.Contains(target, ".") {
		// FX code prints Python builtins bare: round(x).
		for _, ns := range []string{"builtins.", "operator.", "math."} {
			if op, ok := ir.LookupOp(ns + target); ok {
				return op, true
			}
		}
	}
	return ir.OpInvalid, false
}

func (gb *gbuild) callTarget(st *fxStmt, target string, posE []*expr, keys []string, kwE []*expr) error {
	target = normalizeTarget(target)
	if done, err := gb.tensorOperator(st, target, posE); done {
		return err
	}
	if plain, ok := inplaceOperators[target]; ok {
		target = plain // x += 1 on a SymInt is x + 1
	}
	if op, ok := lookupTarget(target); ok {
		if wrapped, unknown := unknownWrappedOp(op, posE); unknown {
			return gb.opaque(st, target, posE, keys, kwE, fmt.Sprintf("it wraps %s, which is not in the op table (gen/ops.spec)", wrapped))
		}
		if gb.unresolvedSubgraph(posE) {
			return gb.opaque(st, target, posE, keys, kwE, "the dump does not print the subgraphs this call runs (print_readable() does)")
		}
		return gb.call(st, op, posE, keys, kwE)
	}
	if done, err := gb.pythonLevel(st, target, posE, keys, kwE); done {
		return err
	}
	if strings.HasPrefix(target, "module:") {
		return gb.opaque(st, target, posE, keys, kwE, "a call_module node; the dump does not print the module")
	}
	return gb.opaque(st, target, posE, keys, kwE, "not in the op table (gen/ops.spec)")
}

// unwrapNodeError drops the node prefix InferTypes adds (fxtext names the node itself).
func unwrapNodeError(err error) error {
	var ne *ir.NodeError
	if errors.As(err, &ne) {
		return ne.Err
	}
	return err
}

// isDynamoLevel reports a forward that calls torch functions or methods
// (Dynamo, symbolic_trace) rather than only torch.ops.
func isDynamoLevel(fn *fxFunc) bool {
	for _, p := range fn.params {
		if strings.HasPrefix(p.name, "L_") || strings.HasPrefix(p.name, "l_") && strings.HasSuffix(p.name, "_") {
			return true
		}
	}
	for _, st := range fn.stmts {
		if st.rhs == nil || st.rhs.kind != eCall || st.rhs.fn.kind != eName {
			continue
		}
		t := st.rhs.fn.name
		if b, _, ok := strings.Cut(t, "."); ok && fnHasParam(fn, b) {
			return true // a method call on an input
		}
		if strings.HasPrefix(t, "Tensor.") || strings.HasPrefix(t, "torch.") && !strings.HasPrefix(t, "torch.ops.") && !strings.HasPrefix(t, "torch.sym_") && !strings.HasPrefix(t, "torch._check") {
			return true
		}
	}
	return false
}

// unresolvedSubgraph reports an argument bound to a subgraph attribute the
// dump has no class for.
func (gb *gbuild) unresolvedSubgraph(posE []*expr) bool {
	for _, e := range posE {
		if b, ok := gb.lookup(e); ok && b.kind == bModule && b.mod == nil {
			return true
		}
	}
	return false
}

// unknownWrappedOp reports a with_effects or auto_functionalized call whose
// wrapped op the table lacks.
func unknownWrappedOp(op ir.Op, posE []*expr) (string, bool) {
	i := -1
	switch op.Info().Name {
	case "higher_order.with_effects":
		i = 1
	case "higher_order.auto_functionalized", "higher_order.auto_functionalized_v2":
		i = 0
	}
	if i < 0 || i >= len(posE) {
		return "", false
	}
	e := posE[i]
	if e.kind != eName && e.kind != eWord {
		return "", false
	}
	if _, ok := opLiteral(normalizeTarget(e.name)); ok {
		return "", false
	}
	return e.name, true
}

// subscriptOf recognizes "x[idx]" and "operator.getitem(x, idx)".
func subscriptOf(e *expr) (base, idx *expr, ok bool) {
	switch {
	case e == nil:
	case e.kind == eSubscript && len(e.elems) == 1:
		return e.fn, e.elems[0], true
	case e.kind == eCall && e.fn.kind == eName && isGetitemTarget(normalizeTarget(e.fn.name)) && len(e.elems) == 2 && len(e.keys) == 0:
		return e.elems[0], e.elems[1], true
	}
	return nil, nil, false
}

// isTensorValue reports a name bound to a tensor value, or to a value of
// unknown type in a Dynamo-level graph (where getitem indexes tensors).
func (gb *gbuild) isTensorValue(name string) bool {
	b, ok := gb.scope[name]
	if !ok || b.kind != bValue {
		return false
	}
	if ir.AsTensor(b.value.Type) != nil {
		return true
	}
	d := b.value.Def
	// A value of a multi-result node is one element, not the tuple.
	return ir.IsUnknown(b.value.Type) && gb.dynamoLevel && (d == nil || !isTupleLike(d.Op) || len(d.Results) > 1)
}

func fnHasParam(fn *fxFunc, name string) bool {
	for _, p := range fn.params {
		if p.name == name {
			return true
		}
	}
	return false
}

var inplaceOperators = map[string]string{
	"operator.iadd": "operator.add", "operator.isub": "operator.sub", "operator.imul": "operator.mul", "operator.itruediv": "operator.truediv",
}
