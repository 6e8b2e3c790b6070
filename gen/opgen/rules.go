package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
)

// FindRules parses the Go files matching pattern (ir/infer_*.go; tests
// excluded) and returns the names of the rules they implement. A rule is a
// top-level function named infer<Rule> with the signature of ir.InferFunc,
// func(c *InferCtx) ([]Type, error); its spec name is <Rule> in snake_case
// (the spec's infer=binary_alpha is func inferBinaryAlpha). Other functions
// must not use both that prefix and that signature.
func FindRules(pattern string) (map[string]bool, error) {
	files, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	funcs := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("reading rules: %w", err)
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "infer") || !isInferFunc(fd.Type) {
				continue
			}
			funcs[fd.Name.Name] = true
		}
	}
	return funcs, nil
}

func isInferFunc(t *ast.FuncType) bool {
	if t.Params == nil || len(t.Params.List) != 1 || len(t.Params.List[0].Names) > 1 {
		return false
	}
	star, ok := t.Params.List[0].Type.(*ast.StarExpr)
	if !ok || !isIdent(star.X, "InferCtx") {
		return false
	}
	if t.Results == nil || len(t.Results.List) != 2 {
		return false
	}
	arr, ok := t.Results.List[0].Type.(*ast.ArrayType)
	if !ok || arr.Len != nil || !isIdent(arr.Elt, "Type") {
		return false
	}
	return isIdent(t.Results.List[1].Type, "error")
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// ruleNames maps the rule functions found back to spec rule names, given the
// rule names the spec uses: a function is a known rule when some spec name
// maps to it; functions no spec name maps to are reported as unused rules
// under a snake_case guess of their name.
func ruleNames(funcs map[string]bool, specRules []string) map[string]bool {
	out := map[string]bool{}
	claimed := map[string]bool{}
	for _, r := range specRules {
		if funcs[RuleFunc(r)] {
			out[r] = true
			claimed[RuleFunc(r)] = true
		}
	}
	for f := range funcs {
		if !claimed[f] {
			out[snake(strings.TrimPrefix(f, "infer"))] = true
		}
	}
	return out
}

// snake converts CamelCase to snake_case ("BinaryAlpha" → "binary_alpha").
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r - 'A' + 'a')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
