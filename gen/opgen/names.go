package main

import (
	"fmt"
	"strings"
)

// camel converts one snake_case name segment to CamelCase. Leading and
// trailing underscores are kept ("_softmax" → "_Softmax", "add_" → "Add_"),
// so private and in-place ops stay distinguishable.
func camel(s string) string {
	lead := len(s) - len(strings.TrimLeft(s, "_"))
	trail := len(s) - len(strings.TrimRight(s, "_"))
	if lead == len(s) {
		return s
	}
	core := s[lead : len(s)-trail]
	var b strings.Builder
	b.WriteString(s[:lead])
	for _, part := range strings.Split(core, "_") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]))
		b.WriteString(part[1:])
	}
	b.WriteString(s[len(s)-trail:])
	return b.String()
}

// opIdent is the first-choice suffix of an op's Go constant (after "Op"):
// namespace, base and overload in CamelCase, the "default" overload omitted.
func opIdent(op *OpSpec) string {
	ovl := op.Overload
	if ovl == "default" {
		ovl = ""
	}
	return camel(op.Namespace) + camel(op.Base) + camel(ovl)
}

// opIdentExplicit is the fallback used when first choices collide: the three
// parts separated by underscores, "Default" spelled out.
func opIdentExplicit(op *OpSpec) string {
	s := camel(op.Namespace) + "_" + camel(op.Base)
	if op.Overload != "" {
		s += "_" + camel(op.Overload)
	}
	return s
}

// RuleFunc is the Go function implementing rule name r: infer + CamelCase.
func RuleFunc(r string) string { return "infer" + camel(r) }

// assignIdents gives every op a unique Go identifier suffix, in spec order.
func assignIdents(ops []*OpSpec) (map[*OpSpec]string, error) {
	first := map[string][]*OpSpec{}
	for _, op := range ops {
		id := opIdent(op)
		first[id] = append(first[id], op)
	}
	out := make(map[*OpSpec]string, len(ops))
	taken := map[string]*OpSpec{}
	for _, op := range ops {
		id := opIdent(op)
		if len(first[id]) > 1 {
			id = opIdentExplicit(op)
		}
		if prev, dup := taken[id]; dup {
			return nil, fmt.Errorf("ops %s and %s both map to the Go name Op%s", prev.Name, op.Name, id)
		}
		taken[id] = op
		out[op] = id
	}
	return out, nil
}

// argIdents gives the argument-position constants of every op: Arg + op
// suffix + argument name in CamelCase, with "_" between the two parts for the
// names that would otherwise collide.
func argIdents(ops []*OpSpec, ids map[*OpSpec]string) (map[*OpSpec][]string, error) {
	count := map[string]int{}
	for _, op := range ops {
		for _, a := range op.Schema.Args {
			count["Arg"+ids[op]+camel(a.Name)]++
		}
	}
	out := make(map[*OpSpec][]string, len(ops))
	taken := map[string]bool{}
	for _, op := range ops {
		names := make([]string, len(op.Schema.Args))
		for i, a := range op.Schema.Args {
			id := "Arg" + ids[op] + camel(a.Name)
			if count[id] > 1 {
				id = "Arg" + ids[op] + "_" + camel(a.Name)
			}
			if taken[id] {
				return nil, fmt.Errorf("argument constant %s is ambiguous (%s)", id, op.Name)
			}
			taken[id] = true
			names[i] = id
		}
		out[op] = names
	}
	return out, nil
}
