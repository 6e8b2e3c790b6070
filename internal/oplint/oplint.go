// Package oplint finds op-name string literals in Go source. Outside
// frontends/ (which read torch's spellings), generated files and tests, ops
// are named by the generated constants of package ir (ir/opgen.go:
// ir.OpAtenAddTensor), never by strings; the test of this package holds the
// module to that, and tools/opconst rewrites literals into constants.
package oplint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir"
)

// NamespaceRE matches strings in the op namespaces whose names are
// checked even when they name no op of the table ("aten.relu",
// "aten::relu", "aten.nosuch.default").
var NamespaceRE = regexp.MustCompile(`^(aten|prims|quantized_decomposed|executorch_prim|dim_order_ops|higher_order|torchao|xnnpack)(\.|::)[A-Za-z0-9_.]+$`)

// Finding is one op-name literal.
type Finding struct {
	Pos token.Position
	Lit string // the literal's value
	// Const is the constant to use ("ir.OpAtenAddTensor"); "" when the op
	// is not in the op table.
	Const string
}

func (f Finding) String() string {
	if f.Const == "" {
		return fmt.Sprintf("%s: op-name literal %q names no op of the table: add the op to gen/ops.spec (go generate ./ir) and use its constant", f.Pos, f.Lit)
	}
	return fmt.Sprintf("%s: op-name literal %q: use %s (ir/opgen.go; op.String() gives the name)", f.Pos, f.Lit, f.Const)
}

// Consts maps each op name to its constant, read from the comments of the
// generated const block of opgen ("OpAtenAbs … // aten.abs.default").
func Consts(opgen string) (map[string]string, error) {
	src, err := os.ReadFile(opgen)
	if err != nil {
		return nil, err
	}
	re := regexp.MustCompile(`(?m)^\t(Op[A-Za-z0-9_]+)\b[^\n]*// (\S+)$`)
	m := map[string]string{}
	for _, s := range re.FindAllStringSubmatch(string(src), -1) {
		m[s[2]] = s[1]
	}
	if len(m) != len(ir.AllOps()) {
		return nil, fmt.Errorf("%s: %d op constants for %d ops (regenerate: go generate ./ir)", opgen, len(m), len(ir.AllOps()))
	}
	return m, nil
}

// Classify reports whether s is an op name a literal must not spell and
// the constant to use instead ("" when the op is not in the table).
func Classify(s string, consts map[string]string) (isOp bool, constant string) {
	if c, ok := consts[s]; ok {
		return true, "ir." + c
	}
	if !NamespaceRE.MatchString(s) {
		return false, ""
	}
	if op, ok := ir.LookupOp(s); ok {
		return true, "ir." + consts[op.String()]
	}
	// A full overload name ("ns.base.overload", "ns::base.overload") of an
	// op the table lacks; a file name such as "xnnpack.fbs" is not one.
	if strings.Contains(s, "::") || strings.Count(s, ".") >= 2 {
		return true, ""
	}
	return false, ""
}

// File lists the op-name literals of one parsed file (import paths are not
// looked at).
func File(fset *token.FileSet, f *ast.File, consts map[string]string) []Finding {
	var out []Finding
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec:
			return false
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(n.Value)
			if err != nil {
				return true
			}
			if isOp, c := Classify(s, consts); isOp {
				out = append(out, Finding{Pos: fset.Position(n.Pos()), Lit: s, Const: c})
			}
		}
		return true
	})
	return out
}

// Generated reports whether f carries the "Code generated … DO NOT EDIT."
// header.
func Generated(f *ast.File) bool { return ast.IsGenerated(f) }

// Module checks the non-test, non-generated Go files of the module at
// root, outside frontends/, testdata directories and third_party.
func Module(root string) ([]Finding, error) {
	consts, err := Consts(filepath.Join(root, "ir", "opgen.go"))
	if err != nil {
		return nil, err
	}
	var out []Finding
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			name := d.Name()
			if rel == "frontends" || rel == "third_party" || name == "testdata" || (strings.HasPrefix(name, ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if Generated(f) {
			return nil
		}
		for _, fd := range File(fset, f, consts) {
			fd.Pos.Filename = rel
			out = append(out, fd)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pos.Filename != out[j].Pos.Filename {
			return out[i].Pos.Filename < out[j].Pos.Filename
		}
		return out[i].Pos.Offset < out[j].Pos.Offset
	})
	return out, err
}
