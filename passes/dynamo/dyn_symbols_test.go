package dynamo

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

func symbolProgram(t *testing.T) *ir.Program {
	t.Helper()
	p := ir.NewProgram()
	h := int64(8)
	p.Env.Declare("s0", sym.Range{Lo: sym.Finite(2), Hi: sym.Finite(64)}, &h, false)
	p.Env.Declare("u0", sym.Range{Lo: sym.Finite(0), Hi: sym.PosInf()}, nil, true)
	s0, u0 := sym.Sym("s0"), sym.Sym("u0")
	types := []ir.Type{
		&ir.TensorType{DType: ir.Float32, Shape: []sym.Expr{s0, sym.Const(4), sym.Const(2)}, DimOrder: []int{0, 2, 1}},
		&ir.SymIntType{Expr: sym.Add(s0, u0)},
		&ir.SymBoolType{Expr: sym.Le(u0, s0)},
		&ir.TupleType{Elems: []ir.Type{ir.IntType, &ir.OptionalType{Elem: &ir.ListType{Elem: ir.TensorOf(ir.Int64, []sym.Expr{u0})}}}},
	}
	for i, ty := range types {
		if _, err := p.Main.AddInput(string(rune('a'+i)), ty); err != nil {
			t.Fatal(err)
		}
	}
	p.Signature = ir.DefaultSignature(p.Main)
	p.AddWeight(&ir.Weight{Name: "w", Type: ir.TensorOf(ir.Float32, []sym.Expr{sym.Const(3)})})
	return p
}

func TestRenameSymbolsEverywhere(t *testing.T) {
	p := symbolProgram(t)
	changed, err := RenameSymbols(p, map[string]string{"s0": "batch", "u0": "nnz"})
	if err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	var got []string
	for _, in := range p.Main.Inputs {
		got = append(got, in.Type.String())
	}
	want := "f32[batch, 4, 2]{0,2,1} | Sym(batch + nnz) | SymBool(nnz <= batch) | tuple<int, optional<list<i64[nnz]>>>"
	if s := strings.Join(got, " | "); s != want {
		t.Errorf("types:\n got %s\nwant %s", s, want)
	}
	if syms := strings.Join(p.Env.Symbols(), ","); syms != "batch,nnz" {
		t.Errorf("symbols %s", syms)
	}
	if h, ok := p.Env.Hint("batch"); !ok || h != 8 {
		t.Errorf("hint of batch: %d %v", h, ok)
	}
	if r, _ := p.Env.Range("batch"); r.String() != "[2, 64]" {
		t.Errorf("range of batch %s", r)
	}
	if !p.Env.IsUnbacked("nnz") || p.Env.IsUnbacked("batch") {
		t.Error("unbacked flag did not follow the name")
	}
	if err := ir.Verify(p); err != nil {
		t.Error(err)
	}
	// Nothing to do: no change.
	if changed, err := RenameSymbols(p, map[string]string{"batch": "batch"}); changed || err != nil {
		t.Errorf("identity rename: %v %v", changed, err)
	}
}

func TestRenameSymbolsErrors(t *testing.T) {
	cases := []struct {
		renames map[string]string
		msg     string
	}{
		{map[string]string{"s0": "u0"}, "u0 is already a symbol of the program"},
		{map[string]string{"s0": "n", "u0": "n"}, "cannot rename both s0 and u0 to n"},
		{map[string]string{"s0": "1x"}, `"1x" is not a valid symbol name`},
	}
	for _, c := range cases {
		p := symbolProgram(t)
		before := ir.Print(p)
		_, err := RenameSymbols(p, c.renames)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: got %v, want …%s…", c.renames, err, c.msg)
		}
		if ir.Print(p) != before {
			t.Errorf("%v: a failed rename changed the program", c.renames)
		}
	}
	// A swap is fine.
	p := symbolProgram(t)
	if _, err := RenameSymbols(p, map[string]string{"s0": "u0", "u0": "s0"}); err != nil {
		t.Fatal(err)
	}
	if got := p.Main.Inputs[1].Type.String(); got != "Sym(s0 + u0)" {
		t.Errorf("swap: %s", got)
	}
	if !p.Env.IsUnbacked("s0") {
		t.Error("swap: unbacked flag")
	}
}

func TestSubstSymbolsRejectsInvalidResults(t *testing.T) {
	p := symbolProgram(t)
	_, err := SubstSymbols(p, map[string]sym.Expr{"s0": sym.True()})
	if err == nil || !strings.Contains(err.Error(), "value %a") || !strings.Contains(err.Error(), "dim 0") {
		t.Errorf("got %v", err)
	}
}
