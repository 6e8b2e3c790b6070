package main

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/gen/schema"
)

// KernelSection is the section title of the ops the kernel list adds.
const KernelSection = "ExecuTorch kernels (gen/etkernels.spec)"

// Kernel is one line of the kernel list (gen/etkernels.spec, written by
// gen/etkernels/etkernels.py from executorch's kernel yaml files): an op
// some ExecuTorch kernel library registers.
type Kernel struct {
	Line   int
	Src    string
	Schema *schema.Schema
	// Name is the IR name (aten.hardtanh.out).
	Name string
	// Lib is the kernel library: "portable", "quantized" or "optimized".
	Lib string
	// Functional is the IR name of the functional op an out variant
	// computes ("" when none is known).
	Functional string
}

// ParseKernels reads the kernel list: `<schema> | lib=L [functional=OP]`.
func ParseKernels(file string, src []byte) ([]*Kernel, error) {
	var out []*Kernel
	var errs ErrorList
	seen := map[string]int{}
	for i, raw := range strings.Split(string(src), "\n") {
		lineNo := i + 1
		line := strings.TrimSpace(stripComment(raw))
		if line == "" {
			continue
		}
		schemaText, attrText, attrCol := splitAttrs(line)
		s, err := schema.Parse(strings.TrimSpace(schemaText))
		if err != nil {
			errs = append(errs, &SpecError{File: file, Line: lineNo, Msg: err.Error()})
			continue
		}
		_, _, name := IRName(s.Namespace, s.Name, s.Overload)
		k := &Kernel{Line: lineNo, Src: strings.TrimSpace(schemaText), Schema: s, Name: name}
		for _, a := range fields(attrText, attrCol) {
			key, val, _ := strings.Cut(a.text, "=")
			switch key {
			case "lib":
				k.Lib = val
			case "functional":
				fn, err := resolveRef(val)
				if err != nil {
					errs = append(errs, &SpecError{File: file, Line: lineNo, Col: a.col, Msg: err.Error()})
				}
				k.Functional = fn
			default:
				errs = append(errs, &SpecError{File: file, Line: lineNo, Col: a.col, Msg: fmt.Sprintf("unknown attribute %q", a.text)})
			}
		}
		if k.Lib == "" {
			errs = append(errs, &SpecError{File: file, Line: lineNo, Msg: name + " has no lib="})
		}
		if prev, dup := seen[name]; dup {
			errs = append(errs, &SpecError{File: file, Line: lineNo, Msg: fmt.Sprintf("%s listed twice (first at line %d)", name, prev)})
			continue
		}
		seen[name] = lineNo
		out = append(out, k)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// kernelNamespaces are the namespaces whose out variants must all be
// registered kernels: an out twin the kernel list lacks would be emitted
// as an operator the runtime cannot load.
var kernelNamespaces = map[string]bool{"aten": true, "quantized_decomposed": true, "dim_order_ops": true, "et_copy": true}

// MergeKernels marks the spec's ops that a kernel library registers, adds
// the out variants the spec lacks (linked to their functional op when the
// spec has it and names no other out twin), checks that an op written in
// both agrees with the kernel list, and that every out variant of the
// kernel namespaces is a registered kernel.
func (spec *Spec) MergeKernels(file string, ks []*Kernel) error {
	var errs ErrorList
	errAt := func(line int, format string, args ...any) {
		errs = append(errs, &SpecError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	claimed := map[string]bool{}
	for _, op := range spec.Ops {
		if op.Out != "" {
			claimed[op.Name] = true
		}
		if op.Functional != "" && op.Props["out"] {
			claimed[op.Functional] = true
		}
	}
	for _, k := range ks {
		if op, ok := spec.byName[k.Name]; ok {
			if why := schemaDiff(op.Schema, k.Schema); why != "" {
				errAt(k.Line, "%s: gen/ops.spec line %d disagrees with the kernel list: %s", k.Name, op.Line, why)
			}
			op.Kernel = k.Lib
			continue
		}
		nOut, inPlace := 0, false
		for _, a := range k.Schema.Args {
			switch {
			case a.Mutates() && a.KwargOnly:
				nOut++
			case a.Mutates():
				inPlace = true
			}
		}
		if nOut == 0 || inPlace {
			// A functional or in-place kernel the IR does not know, or one that
			// also updates an input (training batch norm's running statistics).
			continue
		}
		op := &OpSpec{Line: k.Line, Section: KernelSection, Src: k.Src, Schema: k.Schema,
			Namespace: k.Schema.Namespace, Props: map[string]bool{"out": true}, Infer: "out",
			twinLine: map[string]int{}, Kernel: k.Lib}
		op.Base, op.Overload, op.Name = IRName(k.Schema.Namespace, k.Schema.Name, k.Schema.Overload)
		if fn, ok := spec.byName[k.Functional]; ok && k.Functional != "" && !claimed[fn.Name] && fn.Props["functional"] {
			op.Functional = fn.Name
			op.twinLine["functional"] = k.Line
			claimed[fn.Name] = true
		}
		spec.byName[op.Name] = op
		spec.Ops = append(spec.Ops, op)
	}
	for _, op := range spec.Ops {
		if op.Props["out"] && op.Kernel == "" && kernelNamespaces[op.Namespace] {
			errs = append(errs, &SpecError{File: spec.File, Line: op.Line, Msg: fmt.Sprintf(
				"%s is an out variant that no ExecuTorch kernel library registers (not in %s): remove it and decompose its functional op", op.Name, file)})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// schemaDiff describes how two schemas of one op differ ("" when they agree
// on arguments and results).
func schemaDiff(a, b *schema.Schema) string {
	if len(a.Args) != len(b.Args) {
		return fmt.Sprintf("%d arguments vs %d", len(a.Args), len(b.Args))
	}
	for i := range a.Args {
		x, y := a.Args[i], b.Args[i]
		if x.Name != y.Name || x.Type != y.Type || x.KwargOnly != y.KwargOnly || x.Mutates() != y.Mutates() || unquote(x.Default) != unquote(y.Default) {
			return fmt.Sprintf("argument %d is %s %s=%q, the kernel list has %s %s=%q", i, x.Type, x.Name, x.Default, y.Type, y.Name, y.Default)
		}
	}
	if len(a.Returns) != len(b.Returns) {
		return fmt.Sprintf("%d results vs %d", len(a.Returns), len(b.Returns))
	}
	return ""
}

// unquote reads 'x' and "x" alike.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}
