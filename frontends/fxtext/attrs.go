package fxtext

// Attributes: "x = self.name" (get_attr) reads a subgraph class, or in older
// graphs a tensor (a weight or constant) that becomes a graph input.

import (
	"regexp"
	"strings"

	"github.com/fxport/fxport/ir"
)

// liftAttrs turns the main graph's tensor attributes into leading inputs.
func (gb *gbuild) liftAttrs() error {
	for _, st := range gb.fn.stmts {
		path, ok := selfAttr(st.rhs)
		if !ok {
			continue
		}
		if st.annot == nil && gb.resolveModule(path) != nil {
			continue
		}
		var t ir.Type
		if st.annot != nil {
			at, _, ok, err := annotType(st.annot.text)
			if err != nil {
				return gb.errorf(st.annot.pos, "attribute %s: %v", path, err)
			}
			if ok {
				t = at
			}
		}
		if t == nil {
			t = gb.opts.InputTypes[st.name]
		}
		if t == nil {
			t = gb.opts.InputTypes[path]
		}
		if t == nil {
			if gb.usedAsSubgraph(st.name, path) {
				continue // a subgraph the dump does not print: its calls stay opaque
			}
			t = ir.Unknown // a tensor attribute the dump does not type
		}
		if _, dup := gb.scope[st.name]; dup {
			return gb.errorf(st.pos, "%s is defined twice", st.name)
		}
		v, err := gb.g.AddInput(st.name, t)
		if err != nil {
			return gb.errorf(st.pos, "attribute %s: %v", path, err)
		}
		gb.declareSymbols(t)
		gb.scope[st.name] = binding{kind: bValue, value: v}
		gb.lifted = append(gb.lifted, liftedAttr{name: st.name, target: path, kind: attrKind(path)})
	}
	return nil
}

// attrKind guesses the role of a lifted attribute from torch's naming: FX
// names constants _tensor_constant0 / _lifted_tensor_constant0, and AOT
// graphs of torch 2.0 named parameters _param_constant0; a dotted module
// path (conv1.weight) is a module's parameter.
func attrKind(path string) ir.InputKind {
	last := path[strings.LastIndex(path, ".")+1:]
	switch {
	case strings.HasPrefix(last, "_param_constant"):
		return ir.Parameter
	case strings.Contains(path, ".") && !strings.Contains(last, "constant"):
		return ir.Parameter
	}
	return ir.ConstantTensor
}

// selfAttr recognizes "self.path" (get_attr), also where gm.code spells a
// numeric module name with getattr: getattr(self.experts, "0").w1.weight.
func selfAttr(e *expr) (string, bool) {
	if e == nil {
		return "", false
	}
	switch e.kind {
	case eName:
		if strings.HasPrefix(e.name, "self.") && len(e.name) > 5 {
			return e.name[5:], true
		}
	case eAttr:
		if base, ok := selfAttr(e.fn); ok {
			return base + "." + e.name, true
		}
	case eCall:
		if e.fn.kind == eName && e.fn.name == "getattr" && len(e.elems) == 2 && len(e.keys) == 0 && e.elems[1].kind == eStr {
			if e.elems[0].kind == eName && e.elems[0].name == "self" {
				return e.elems[1].s, true
			}
			if base, ok := selfAttr(e.elems[0]); ok {
				return base + "." + e.elems[1].s, true
			}
		}
	}
	return "", false
}

// resolveModule follows a dotted attribute path through nested classes.
func (gb *gbuild) resolveModule(path string) *fxModule {
	m := gb.mod
	for _, part := range strings.Split(path, ".") {
		if m = m.child(part); m == nil {
			return nil
		}
	}
	return m
}

func (gb *gbuild) liftedName(name, path string) bool {
	for _, l := range gb.lifted {
		if l.name == name && l.target == path {
			return true
		}
	}
	return false
}

// subgraphAttr matches the attribute names torch gives subgraphs and
// lowered modules.
var subgraphAttr = regexp.MustCompile(`(^|_)(graph|body|subgraph|lowered_module|fn|mod)(_\d+)?$|graph_\d+$|^lowered_module_\d+$|^repeated_subgraph\d+$`)

// usedAsSubgraph reports an attribute passed to a higher-order op or named
// like a subgraph.
func (gb *gbuild) usedAsSubgraph(name, path string) bool {
	last := path[strings.LastIndex(path, ".")+1:]
	if subgraphAttr.MatchString(last) {
		return true
	}
	for _, st := range gb.fn.stmts {
		if st.rhs == nil || st.rhs.kind != eCall || st.rhs.fn.kind != eName || !strings.Contains(st.rhs.fn.name, "higher_order") {
			continue
		}
		switch fn := st.rhs.fn.name; {
		case strings.Contains(fn, "call_torchbind"), strings.Contains(fn, "with_effects"), strings.Contains(fn, "auto_functionalized"):
			continue // these take objects and tensors, not subgraphs
		}
		for _, a := range st.rhs.elems {
			if n, ok := a.simpleName(); ok && n == name {
				return true
			}
		}
	}
	return false
}
