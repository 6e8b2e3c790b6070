package schema

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseFull(t *testing.T) {
	s, err := Parse("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
	if err != nil {
		t.Fatal(err)
	}
	want := &Schema{
		Namespace: "aten", Name: "add", Overload: "Tensor",
		Args: []Arg{
			{Name: "self", Type: Type{Base: "Tensor"}, Col: 18},
			{Name: "other", Type: Type{Base: "Tensor"}, Col: 31},
			{Name: "alpha", Type: Type{Base: "Scalar"}, Default: "1", KwargOnly: true, Col: 48},
		},
		Returns: []Return{{Type: Type{Base: "Tensor"}}},
	}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("got  %#v\nwant %#v", s, want)
	}
}

func TestParseTypes(t *testing.T) {
	cases := []struct {
		src   string
		typ   Type
		alias string
		def   string
	}{
		{"Tensor(a!) self", Type{Base: "Tensor"}, "a!", ""},
		{"Tensor(a -> *) self", Type{Base: "Tensor"}, "a -> *", ""},
		{"Tensor(a!)[] out", Type{Base: "Tensor", List: true}, "a!", ""},
		{"Tensor(a!)? out", Type{Base: "Tensor", Optional: true}, "a!", ""},
		{"int[2] stride=1", Type{Base: "int", List: true, ListLen: 2}, "", "1"},
		{"int[1]? dim=None", Type{Base: "int", List: true, ListLen: 1, Optional: true}, "", "None"},
		{"Tensor?[] indices", Type{Base: "Tensor", List: true, ElemOptional: true}, "", ""},
		{"SymInt[] size", Type{Base: "SymInt", List: true}, "", ""},
		{"Scalar? min=None", Type{Base: "Scalar", Optional: true}, "", "None"},
		{"ScalarType? dtype=long", Type{Base: "ScalarType", Optional: true}, "", "long"},
		{"Layout? layout=None", Type{Base: "Layout", Optional: true}, "", "None"},
		{"Device? device=None", Type{Base: "Device", Optional: true}, "", "None"},
		{"bool? pin_memory=None", Type{Base: "bool", Optional: true}, "", "None"},
		{"MemoryFormat? memory_format=contiguous_format", Type{Base: "MemoryFormat", Optional: true}, "", "contiguous_format"},
		{"Generator? generator=None", Type{Base: "Generator", Optional: true}, "", "None"},
		{"str reduce", Type{Base: "str"}, "", ""},
		{"str? side=None", Type{Base: "str", Optional: true}, "", "None"},
		{`str approximate="none"`, Type{Base: "str"}, "", `"none"`},
		{`str approximate='none'`, Type{Base: "str"}, "", `'none'`},
		{"Any a", Type{Base: "Any"}, "", ""},
		{"GraphModule true_fn", Type{Base: "GraphModule"}, "", ""},
		{"float eps=1e-05", Type{Base: "float"}, "", "1e-05"},
		{"int dim=-1", Type{Base: "int"}, "", "-1"},
		{"int[] dims=[]", Type{Base: "int", List: true}, "", "[]"},
		{"int[] dims=[0,1]", Type{Base: "int", List: true}, "", "[0,1]"},
		{"int[] dims=[0, -1]", Type{Base: "int", List: true}, "", "[0, -1]"},
		{"bool keepdim=True", Type{Base: "bool"}, "", "True"},
		{"float max=inf", Type{Base: "float"}, "", "inf"},
		{"float min=-inf", Type{Base: "float"}, "", "-inf"},
		{"Tensor?[]? x=None", Type{Base: "Tensor", List: true, ElemOptional: true, Optional: true}, "", "None"},
		{"float[]? scale_factors", Type{Base: "float", List: true, Optional: true}, "", ""},
		{"Tensor(a|b!) x", Type{Base: "Tensor"}, "a|b!", ""},
	}
	for _, c := range cases {
		s, err := Parse("f(" + c.src + ") -> ()")
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		a := s.Args[0]
		if a.Type != c.typ || a.Alias != c.alias || a.Default != c.def {
			t.Errorf("%s: got type %+v alias %q default %q", c.src, a.Type, a.Alias, a.Default)
		}
		// Printing and reparsing gives the same argument.
		again, err := Parse(s.String())
		if err != nil {
			t.Errorf("%s: reparse of %q: %v", c.src, s.String(), err)
			continue
		}
		if b := again.Args[0]; b.Type != a.Type || b.Alias != a.Alias || b.Default != a.Default {
			t.Errorf("%s: round trip changed the argument: %+v", c.src, b)
		}
	}
}

func TestParseReturns(t *testing.T) {
	cases := []struct {
		src  string
		want []Return
	}{
		{"f() -> ()", nil},
		{"f() -> Tensor", []Return{{Type: Type{Base: "Tensor"}}}},
		{"f() -> Tensor[]", []Return{{Type: Type{Base: "Tensor", List: true}}}},
		{"f() -> Tensor(a)[]", []Return{{Type: Type{Base: "Tensor", List: true}, Alias: "a"}}},
		{"f() -> (Tensor(a!) values, Tensor(b!) indices)", []Return{
			{Name: "values", Type: Type{Base: "Tensor"}, Alias: "a!"},
			{Name: "indices", Type: Type{Base: "Tensor"}, Alias: "b!"}}},
		{"f() -> (Tensor, Tensor)", []Return{{Type: Type{Base: "Tensor"}}, {Type: Type{Base: "Tensor"}}}},
		{"f() -> (Tensor out)", []Return{{Name: "out", Type: Type{Base: "Tensor"}}}},
		{"f() -> Scalar", []Return{{Type: Type{Base: "Scalar"}}}},
		{"f() -> SymInt", []Return{{Type: Type{Base: "SymInt"}}}},
		{"f() -> Any[]", []Return{{Type: Type{Base: "Any", List: true}}}},
	}
	for _, c := range cases {
		s, err := Parse(c.src)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if !reflect.DeepEqual(s.Returns, c.want) {
			t.Errorf("%s: got %+v", c.src, s.Returns)
		}
	}
}

func TestParseNames(t *testing.T) {
	cases := []struct{ src, ns, name, ovl string }{
		{"aten::relu(Tensor self) -> Tensor", "aten", "relu", ""},
		{"aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", "aten", "_softmax", ""},
		{"aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", "aten", "add_", "Tensor"},
		{"operator::add(Any a, Any b) -> Any", "operator", "add", ""},
		{"relu(Tensor self) -> Tensor", "", "relu", ""},
		{"dim_order_ops::_to_dim_order_copy(Tensor self, *, int[]? dim_order=None) -> Tensor", "dim_order_ops", "_to_dim_order_copy", ""},
	}
	for _, c := range cases {
		s, err := Parse(c.src)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if s.Namespace != c.ns || s.Name != c.name || s.Overload != c.ovl {
			t.Errorf("%s: got %q %q %q", c.src, s.Namespace, s.Name, s.Overload)
		}
	}
}

func TestVarArgs(t *testing.T) {
	s, err := Parse("higher_order::with_effects(Token token, Any op, ...) -> Any[]")
	if err != nil {
		t.Fatal(err)
	}
	if !s.VarArgs || len(s.Args) != 2 {
		t.Fatalf("got %+v", s)
	}
	if s.String() != "higher_order::with_effects(Token token, Any op, ...) -> Any[]" {
		t.Errorf("String: %s", s)
	}
	s, err = Parse("prim::Print(...) -> ...")
	if err != nil {
		t.Fatal(err)
	}
	if !s.VarArgs || !s.VarRets || len(s.Args) != 0 {
		t.Fatalf("got %+v", s)
	}
}

func TestMutates(t *testing.T) {
	s, err := Parse("aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, false, false, true} {
		if got := s.Args[i].Mutates(); got != want {
			t.Errorf("arg %d Mutates = %v", i, got)
		}
	}
	if (Arg{Alias: "a -> *"}).Mutates() {
		t.Errorf("a -> * does not mutate")
	}
}

func TestRoundTrip(t *testing.T) {
	for _, src := range []string{
		"aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
		"aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
		"aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
		"aten::convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
		"aten::_assert_async.msg(Tensor self, str assert_msg) -> ()",
		"aten::gelu(Tensor self, *, str approximate='none') -> Tensor",
	} {
		s, err := Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if s.String() != src {
			t.Errorf("round trip:\n got %s\nwant %s", s, src)
		}
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		src string
		col int
		msg string
	}{
		{"", 1, "expected operator name"},
		{"aten::add(Tensor self", 22, `expected ","`},
		{"aten::add(Tensr self) -> Tensor", 11, `unknown type "Tensr"`},
		{"aten::add(Tensor self) Tensor", 24, `expected "->"`},
		{"aten::add(Tensor self, Tensor self) -> Tensor", 24, "declared twice"},
		{"aten::add(Tensor(a self) -> Tensor", 20, "expected ')' closing"},
		{"aten::add(int[x] self) -> Tensor", 15, "expected ']'"},
		{"aten::add(int self=) -> Tensor", 20, "expected a default value"},
		{"aten::add(int self=None) -> Tensor", 20, "None for non-optional"},
		{"aten::add(str self='abc) -> Tensor", 20, "unterminated string"},
		{"aten::add(*, *, int x) -> Tensor", 14, "second '*'"},
		{"aten::add(int x) -> Tensor )", 28, "unexpected"},
		{"aten::add(int x) -> Tensor y", 29, "must not be named"},
		{"aten::add(int[0] x) -> Tensor", 15, "bad list length"},
		{"aten::add(int x=1.2.3) -> Tensor", 17, "bad number"},
		{"aten::add(int[][] x) -> Tensor", 16, "nested lists"},
	}
	for _, c := range cases {
		_, err := Parse(c.src)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: want *Error, got %v", c.src, err)
			continue
		}
		if e.Col != c.col || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%q: got %v, want col %d containing %q", c.src, err, c.col, c.msg)
		}
	}
}

func FuzzParseSchema(f *testing.F) {
	for _, s := range []string{
		"aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
		"aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
		"aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
		"aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
		"aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
		`aten::gelu(Tensor self, *, str approximate="none") -> Tensor`,
		"aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
		"higher_order::with_effects(Token token, Any op, ...) -> Any[]",
		"f(int[] x=[0, [1, 2]], float y=-inf) -> ()",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse(src)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Col < 1 || e.Col > len(src)+1 {
				t.Fatalf("bad error %v for %q", err, src)
			}
			return
		}
		// Whatever parses prints to something that parses to the same schema.
		again, err := Parse(s.String())
		if err != nil {
			t.Fatalf("reparse of %q (from %q): %v", s.String(), src, err)
		}
		if again.String() != s.String() {
			t.Fatalf("round trip: %q vs %q", again.String(), s.String())
		}
	})
}
