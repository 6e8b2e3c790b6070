package oplint

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/fxport/fxport/internal/testenv"
)

// TestNoOpNameLiterals: outside frontends/, generated files and tests, no
// string literal names an op; code uses the constants of ir/opgen.go.
// Rewrite offenders with `go run ./tools/opconst ./the/package`.
func TestNoOpNameLiterals(t *testing.T) {
	found, err := Module(testenv.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
	if len(found) > 0 {
		t.Logf("%d op-name literals; `go run ./tools/opconst <packages>` converts most of them", len(found))
	}
}

// The checker flags exact names, torch's spellings and unknown overloads,
// with the constant to use, and leaves other strings alone.
func TestFindsLiterals(t *testing.T) {
	const src = `package p

import "github.com/fxport/fxport/ir"

var (
	a = ir.MustLookupOp("aten.add.Tensor")
	b = "aten::relu"
	c = "aten.nosuch.default"
	d = "xnnpack.fbs"
	e = "operator.add"
	f = "torch.where"
	g = "%s is not an op"
)
`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts, err := Consts(testenv.Root(t) + "/ir/opgen.go")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range File(fset, file, consts) {
		got = append(got, f.String())
	}
	want := []string{
		`p.go:6:22: op-name literal "aten.add.Tensor": use ir.OpAtenAddTensor (ir/opgen.go; op.String() gives the name)`,
		`p.go:7:6: op-name literal "aten::relu": use ir.OpAtenRelu (ir/opgen.go; op.String() gives the name)`,
		`p.go:8:6: op-name literal "aten.nosuch.default" names no op of the table: add the op to gen/ops.spec (go generate ./ir) and use its constant`,
		`p.go:10:6: op-name literal "operator.add": use ir.OpOperatorAdd (ir/opgen.go; op.String() gives the name)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
