package sym

import (
	"errors"
	"math"
	"strings"
	"testing"
)

var (
	s0 = Sym("s0")
	s1 = Sym("s1")
	s2 = Sym("s2")
	u0 = Sym("u0")
)

func c(v int64) Expr { return Const(v) }

func TestCanonicalForms(t *testing.T) {
	tests := []struct {
		name string
		got  Expr
		want string
	}{
		{"const", c(7), "7"},
		{"neg const", c(-3), "-3"},
		{"sym", s0, "s0"},
		{"fold add", Add(c(2), c(3)), "5"},
		{"like terms", Add(Mul(c(2), s0), s0), "3*s0"},
		{"add zero", Add(s0, c(0)), "s0"},
		{"mul one", Mul(s0, c(1)), "s0"},
		{"mul zero", Mul(s0, c(0), s1), "0"},
		{"cancel", Sub(s0, s0), "0"},
		{"flatten sort", Add(s1, Add(c(1), s0)), "s0 + s1 + 1"},
		{"natural order", Add(Sym("s10"), Sym("s2")), "s2 + s10"},
		{"sub", Sub(s0, c(1)), "s0 - 1"},
		{"neg", Neg(s0), "-s0"},
		{"neg sum", Neg(Add(s0, c(1))), "-s0 - 1"},
		{"coef", Mul(c(2), s0, c(3)), "6*s0"},
		{"mul comm", Mul(s1, s0), "s0*s1"},
		{"square", Mul(s0, s0), "s0**2"},
		{"pow", Pow(s0, 2), "s0**2"},
		{"pow0", Pow(s0, 0), "1"},
		{"pow1", Pow(s0, 1), "s0"},
		{"pow const", Pow(c(3), 4), "81"},
		{"pow neg const", Pow(c(-2), 3), "-8"},
		{"0**0", Pow(c(0), 0), "1"},
		{"pow pow", Pow(Pow(s0, 2), 3), "s0**6"},
		{"pow mul", Pow(Mul(c(2), s0), 2), "4*s0**2"},
		{"pow combine", Mul(Pow(s0, 2), s0, s1), "s0**3*s1"},
		{"expand square", Pow(Add(s0, c(1)), 2), "s0**2 + 2*s0 + 1"},
		{"expand product", Mul(Add(s0, c(1)), Add(s1, c(-1))), "s0*s1 - s0 + s1 - 1"},
		{"distribute", Mul(c(2), Add(s0, c(1))), "2*s0 + 2"},
		{"distribute sym", Mul(s1, Add(s0, c(1))), "s0*s1 + s1"},
		{"floordiv const", FloorDiv(c(7), c(2)), "3"},
		{"floordiv neg", FloorDiv(c(-7), c(2)), "-4"},
		{"floordiv neg div", FloorDiv(c(7), c(-2)), "-4"},
		{"floordiv 1", FloorDiv(s0, c(1)), "s0"},
		{"floordiv cx/c", FloorDiv(Mul(c(4), s0), c(4)), "s0"},
		{"floordiv -cx/c", FloorDiv(Mul(c(-4), s0), c(4)), "-s0"},
		{"floordiv pull", FloorDiv(Add(Mul(c(4), s0), s1), c(4)), "s0 + s1//4"},
		{"floordiv const pull", FloorDiv(Add(Mul(c(2), s0), c(3)), c(2)), "s0 + 1"},
		{"floordiv gcd", FloorDiv(Add(Mul(c(2), s0), c(2)), c(4)), "(s0 + 1)//2"},
		{"floordiv plain", FloorDiv(Add(s0, c(1)), c(2)), "(s0 + 1)//2"},
		{"floordiv nested", FloorDiv(FloorDiv(s0, c(2)), c(3)), "s0//6"},
		{"floordiv neg divisor", FloorDiv(s0, c(-2)), "-s0//2"},
		{"floordiv sym", FloorDiv(s0, s1), "s0//s1"},
		{"floordiv zero num", FloorDiv(c(0), s1), "0"},
		{"floordiv by zero kept", FloorDiv(s0, c(0)), "s0//0"},
		{"mod const", Mod(c(-7), c(2)), "1"},
		{"mod const negdiv", Mod(c(7), c(-2)), "-1"},
		{"mod 1", Mod(s0, c(1)), "0"},
		{"mod cx", Mod(Mul(c(4), s0), c(4)), "0"},
		{"mod -cx", Mod(Mul(c(-4), s0), c(4)), "0"},
		{"mod plain", Mod(s0, c(4)), "Mod(s0, 4)"},
		{"mod pull", Mod(Add(Mul(c(4), s0), s1, c(5)), c(4)), "Mod(s1 + 1, 4)"},
		{"mod gcd", Mod(Mul(c(2), s0), c(4)), "2*Mod(s0, 2)"},
		{"mod nested", Mod(Mod(s0, c(8)), c(4)), "Mod(s0, 4)"},
		{"mod nested inner", Mod(Mod(s0, c(4)), c(8)), "Mod(s0, 4)"},
		{"mod negdiv", Mod(s0, c(-4)), "-Mod(-s0, 4)"},
		{"ceildiv", CeilDiv(s0, c(2)), "(s0 + 1)//2"},
		{"ceildiv const", CeilDiv(c(7), c(2)), "4"},
		{"ceildiv neg const", CeilDiv(c(-7), c(2)), "-3"},
		{"ceildiv sym", CeilDiv(s0, s1), "-(-s0//s1)"},
		{"min flatten", Min(s0, Min(s1, c(3)), c(5)), "Min(3, s0, s1)"},
		{"max dedupe", Max(s0, s0), "s0"},
		{"max single", Max(s0), "s0"},
		{"max consts", Max(c(1), c(7), c(3)), "7"},
		{"max const sym", Max(s0, c(1)), "Max(1, s0)"},
		{"max offset", Max(s0, Add(s0, c(1))), "s0 + 1"},
		{"min offset", Min(s0, Add(s0, c(1))), "s0"},
		{"eq fold", Eq(c(3), c(3)), "True"},
		{"ne fold", Ne(c(3), c(3)), "False"},
		{"lt fold", Lt(c(2), c(3)), "True"},
		{"eq self", Eq(Add(s0, s1), Add(s1, s0)), "True"},
		{"eq", Eq(s0, c(4)), "s0 == 4"},
		{"eq flipped", Eq(c(4), s0), "s0 == 4"},
		{"eq syms", Eq(s1, s0), "s0 == s1"},
		{"eq gcd", Eq(Mul(c(2), s0), c(4)), "s0 == 2"},
		{"eq impossible", Eq(Mul(c(2), s0), c(3)), "False"},
		{"ne impossible", Ne(Mul(c(2), s0), c(3)), "True"},
		{"ne", Ne(s0, c(1)), "s0 != 1"},
		{"le", Le(s0, c(8)), "s0 <= 8"},
		{"lt", Lt(s0, c(8)), "s0 <= 7"},
		{"gt", Gt(s0, c(3)), "4 <= s0"},
		{"ge", Ge(s0, c(2)), "2 <= s0"},
		{"ge sym", Ge(s0, s1), "s1 <= s0"},
		{"le gcd", Le(Mul(c(2), s0), c(7)), "s0 <= 3"},
		{"lt gcd", Lt(c(7), Mul(c(2), s0)), "4 <= s0"},
		{"not le", Not(Le(s0, c(3))), "4 <= s0"},
		{"not eq", Not(Eq(s0, c(3))), "s0 != 3"},
		{"and", And(Le(s0, c(3)), Ge(s1, c(2))), "And(s0 <= 3, 2 <= s1)"},
		{"and true", And(True(), Le(s0, c(3))), "s0 <= 3"},
		{"and false", And(False(), Le(s0, c(3))), "False"},
		{"and empty", And(), "True"},
		{"or empty", Or(), "False"},
		{"and complement", And(Le(s0, c(3)), Gt(s0, c(3))), "False"},
		{"or complement", Or(Eq(s0, c(3)), Ne(s0, c(3))), "True"},
		{"not and", Not(And(Le(s0, c(3)), Eq(s1, c(2)))), "Or(s1 != 2, 4 <= s0)"},
		{"mul floordiv", Mul(c(2), FloorDiv(s0, c(3))), "2*(s0//3)"},
		{"neg floordiv", Neg(FloorDiv(s0, c(3))), "-(s0//3)"},
		{"pow of sum raw", Pow(Add(s0, s1, s2, Sym("s3"), c(1)), 4), "(s0 + s1 + s2 + s3 + 1)**4"},
		{"torch view", Mul(s0, s1, c(4)), "4*s0*s1"},
		{"unbacked", Max(c(1), u0), "Max(1, u0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.got.IsValid() {
				t.Fatalf("got invalid expression, want %q", tt.want)
			}
			if s := tt.got.String(); s != tt.want {
				t.Errorf("String() = %q, want %q", s, tt.want)
			}
			p, err := Parse(tt.got.String())
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.got.String(), err)
			}
			if !p.Equal(tt.got) {
				t.Errorf("round trip %q -> %q", tt.got, p)
			}
		})
	}
}

func TestEqualityOfEquivalentBuilds(t *testing.T) {
	pairs := [][2]Expr{
		{Add(s0, s1, c(1)), Add(c(1), Add(s1, s0))},
		{Mul(s0, Add(s1, c(1))), Add(Mul(s0, s1), s0)},
		{Mul(c(4), s0, s1), Mul(s1, Mul(c(2), Mul(s0, c(2))))},
		{Sub(Mul(c(2), s0), s0), s0},
		{Gt(s0, s1), Lt(s1, s0)},
		{Ge(s0, c(3)), Not(Lt(s0, c(3)))},
		{Lt(s0, c(4)), Le(s0, c(3))},
		{Eq(s0, s1), Eq(s1, s0)},
		{Eq(Mul(c(3), s0), Mul(c(3), s1)), Eq(s0, s1)},
		{FloorDiv(FloorDiv(s0, c(2)), c(2)), FloorDiv(s0, c(4))},
		{Max(s0, Max(s1, c(1))), Max(c(1), s1, s0)},
		{Pow(Mul(s0, s1), 2), Mul(s0, s0, s1, s1)},
		{Mul(Add(s0, c(1)), Add(s0, c(1))), Pow(Add(s0, c(1)), 2)},
		{CeilDiv(Mul(c(2), s0), c(2)), s0},
		{Neg(Neg(s0)), s0},
		{And(Le(s0, c(1)), And(Le(s1, c(1)), Le(s0, c(1)))), And(Le(s1, c(1)), Le(s0, c(1)))},
	}
	for i, p := range pairs {
		if !p[0].Equal(p[1]) {
			t.Errorf("%d: %q not Equal to %q", i, p[0], p[1])
		}
		if p[0].Hash() != p[1].Hash() {
			t.Errorf("%d: hash mismatch for %q", i, p[0])
		}
		if Compare(p[0], p[1]) != 0 {
			t.Errorf("%d: Compare != 0 for %q", i, p[0])
		}
	}
	if s0.Equal(s1) || Add(s0, c(1)).Equal(Add(s0, c(2))) || c(1).Equal(True()) {
		t.Error("unexpected equality")
	}
}

func TestZeroValueAndSortErrors(t *testing.T) {
	var z Expr
	if z.IsValid() || z.IsBool() || z.IsInt() {
		t.Error("zero Expr should be invalid")
	}
	if z.String() != "<invalid>" {
		t.Errorf("zero String = %q", z.String())
	}
	if _, err := z.Eval(nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Eval(zero) err = %v", err)
	}
	invalid := []Expr{
		Add(s0, z), Mul(z), Neg(z), FloorDiv(s0, z), Pow(s0, -1), Min(), Max(),
		Add(s0, True()), Mul(Eq(s0, c(1)), c(2)), And(s0), Not(s0), Eq(True(), s0),
		Sym(""), Sym("1abc"), Sym("a-b"), Sym("True"), Sym("and"),
	}
	for i, e := range invalid {
		if e.IsValid() {
			t.Errorf("%d: expected invalid, got %q", i, e)
		}
	}
	if !z.Equal(Expr{}) || z.Equal(c(0)) {
		t.Error("zero Expr equality")
	}
	if v, ok := c(0).Const(); !ok || v != 0 {
		t.Error("Const(0) should be a valid constant")
	}
}

func TestAccessors(t *testing.T) {
	e := Add(Mul(c(2), s1), s0, Mod(u0, c(3)), c(-1))
	if got := e.Symbols(); strings.Join(got, ",") != "s0,s1,u0" {
		t.Errorf("Symbols = %v", got)
	}
	if got := Add(Sym("s10"), Sym("s2")).Symbols(); strings.Join(got, ",") != "s10,s2" {
		t.Errorf("Symbols sort = %v", got)
	}
	if c(3).Symbols() != nil {
		t.Error("const has symbols")
	}
	if !Eq(s0, c(1)).IsBool() || s0.IsBool() || !True().IsBool() {
		t.Error("IsBool")
	}
	if v, ok := Add(c(2), c(3)).Const(); !ok || v != 5 {
		t.Error("Const")
	}
	if _, ok := s0.Const(); ok {
		t.Error("s0 is not const")
	}
	if n, ok := s0.Name(); !ok || n != "s0" {
		t.Error("Name")
	}
	if !e.HasSymbol("u0") || e.HasSymbol("s2") {
		t.Error("HasSymbol")
	}
	// Args rebuild through the constructor of Op.
	build := map[Op]func(xs []Expr) Expr{
		OpAdd:      func(xs []Expr) Expr { return Add(xs...) },
		OpMul:      func(xs []Expr) Expr { return Mul(xs...) },
		OpPow:      func(xs []Expr) Expr { k, _ := xs[1].Const(); return Pow(xs[0], k) },
		OpFloorDiv: func(xs []Expr) Expr { return FloorDiv(xs[0], xs[1]) },
		OpMod:      func(xs []Expr) Expr { return Mod(xs[0], xs[1]) },
		OpMin:      func(xs []Expr) Expr { return Min(xs...) },
		OpMax:      func(xs []Expr) Expr { return Max(xs...) },
		OpEq:       func(xs []Expr) Expr { return Eq(xs[0], xs[1]) },
		OpNe:       func(xs []Expr) Expr { return Ne(xs[0], xs[1]) },
		OpLe:       func(xs []Expr) Expr { return Le(xs[0], xs[1]) },
		OpAnd:      func(xs []Expr) Expr { return And(xs...) },
		OpOr:       func(xs []Expr) Expr { return Or(xs...) },
	}
	for _, x := range []Expr{
		e, Mul(c(-3), s0, s1), Pow(s0, 3), FloorDiv(Add(s0, c(1)), c(2)), Mod(s0, c(4)),
		Min(s0, c(2)), Max(s0, s1), Eq(s0, Add(s1, c(2))), Ne(s0, c(0)), Le(c(2), s0), Lt(s0, s1),
		And(Le(s0, c(1)), Eq(s1, c(2))), Or(Le(s0, c(1)), Eq(s1, c(2))),
	} {
		got := build[x.Op()](x.Args())
		if !got.Equal(x) {
			t.Errorf("rebuild %v from %v = %q, want %q", x.Op(), x.Args(), got, x)
		}
	}
}

func TestParsePlain(t *testing.T) {
	tests := []struct{ in, want string }{
		{"s0", "s0"},
		{"2*s0", "2*s0"},
		{"s0 + 1", "s0 + 1"},
		{"(s0//2)", "s0//2"},
		{"s0 - 1", "s0 - 1"},
		{"Max(1, s0)", "Max(1, s0)"},
		{"Min(s0, 8, s1)", "Min(8, s0, s1)"},
		{"Mod(s0, 2)", "Mod(s0, 2)"},
		{"s0 % 2", "Mod(s0, 2)"},
		{"FloorDiv(s0, 2)", "s0//2"},
		{"CeilToInt(IntTrueDiv(s0, 2))", "(s0 + 1)//2"},
		{"CeilToInt(FloatTrueDiv(ToFloat(s0), 4))", "(s0 + 3)//4"},
		{"ceiling(s0/2)", "(s0 + 1)//2"},
		{"floor(s0/2)", "s0//2"},
		{"FloorToInt(IntTrueDiv(s0, s1))", "s0//s1"},
		{"s0*s1", "s0*s1"},
		{"-s0", "-s0"},
		{"s0**2", "s0**2"},
		{"-s0**2", "-s0**2"},
		{"2**3**2", "512"},
		{"(-2)**3", "-8"},
		{"Eq(s0, 1)", "s0 == 1"},
		{"s0 <= 8", "s0 <= 8"},
		{"s0 < 8", "s0 <= 7"},
		{"s0 > 8", "9 <= s0"},
		{"s0 >= s1", "s1 <= s0"},
		{"Ne(s0, 2)", "s0 != 2"},
		{"s0 != 2", "s0 != 2"},
		{"True", "True"},
		{"False", "False"},
		{"2 <= s0 <= 8", "And(s0 <= 8, 2 <= s0)"},
		{"(s0 <= 3) & (s1 > 2)", "And(s0 <= 3, 3 <= s1)"},
		{"(s0 <= 3) | ~(s1 > 2)", "Or(s0 <= 3, s1 <= 2)"},
		{"s0 <= 3 and not s1 == 2", "And(s1 != 2, s0 <= 3)"},
		{"((s0 + 1)//2)*2", "2*((s0 + 1)//2)"},
		{"s0*2//3", "2*s0//3"},
		{"  s0\t+\n1 ", "s0 + 1"},
		{"Identity(s0)", "s0"},
		{"PythonMod(s0, 4)", "Mod(s0, 4)"},
		{"CeilDiv(s0, 4)", "(s0 + 3)//4"},
		{"Lt(s0, 4)", "s0 <= 3"},
		{"Gt(s0, 4)", "5 <= s0"},
		{"Ge(s0, 4)", "4 <= s0"},
		{"And(Le(s0, 4), Ge(s0, 2))", "And(s0 <= 4, 2 <= s0)"},
		{"Not(Eq(s0, 4))", "s0 != 4"},
		{"9223372036854775807 + 1", "9223372036854775808"},
		{"-9223372036854775808", "-9223372036854775808"},
		{"s0 + -3", "s0 - 3"},
		{"Max(s0)", "s0"},
		{"Add()", "0"},
		{"Mul()", "1"},
	}
	for _, tt := range tests {
		e, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if e.String() != tt.want {
			t.Errorf("Parse(%q) = %q, want %q", tt.in, e, tt.want)
		}
	}
}

func TestParseSrepr(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Symbol('s0', integer=True, positive=True)", "s0"},
		{`Symbol("s1")`, "s1"},
		{"Add(Mul(Integer(2), Symbol('s0', integer=True, positive=True)), Integer(-1))", "2*s0 - 1"},
		{"Add(Symbol('s0'), Integer(1))", "s0 + 1"},
		{"Mul(Integer(2), Symbol('s0'))", "2*s0"},
		{"FloorDiv(Symbol('s1'), Integer(2))", "s1//2"},
		{"Mod(Symbol('s0', integer=True, positive=True), Integer(4))", "Mod(s0, 4)"},
		{"PythonMod(Symbol('s0'), Integer(4))", "Mod(s0, 4)"},
		{"Max(Integer(1), Symbol('u0'))", "Max(1, u0)"},
		{"Min(Symbol('s0'), Integer(8))", "Min(8, s0)"},
		{"Pow(Symbol('s0'), Integer(2))", "s0**2"},
		{"StrictLessThan(Symbol('s0'), Integer(8))", "s0 <= 7"},
		{"LessThan(Symbol('s0'), Integer(8))", "s0 <= 8"},
		{"StrictGreaterThan(Symbol('s0'), Integer(8))", "9 <= s0"},
		{"GreaterThan(Symbol('s0'), Integer(2))", "2 <= s0"},
		{"Equality(Symbol('s0'), Integer(4))", "s0 == 4"},
		{"Unequality(Symbol('s0'), Integer(4))", "s0 != 4"},
		{"BooleanTrue()", "True"},
		{"BooleanFalse()", "False"},
		{"Integer(-3)", "-3"},
		{"Zero()", "0"},
		{"One()", "1"},
		{"NegativeOne()", "-1"},
		{"Rational(4, 2)", "2"},
		{"CeilToInt(IntTrueDiv(Symbol('s0'), Integer(2)))", "(s0 + 1)//2"},
		{"And(LessThan(Symbol('s0'), Integer(8)), Equality(Symbol('s1'), Integer(2)))", "And(s1 == 2, s0 <= 8)"},
		{"Add(Mul(Symbol('s0'), Symbol('s1')), Mul(Integer(-1), Symbol('s0')))", "s0*s1 - s0"},
		{"Mul(Integer(4), Symbol('s0', integer=True, positive=True), Symbol('s1', integer=True, positive=True))", "4*s0*s1"},
	}
	for _, tt := range tests {
		e, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if e.String() != tt.want {
			t.Errorf("Parse(%q) = %q, want %q", tt.in, e, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		msg    string
	}{
		{"", 0, "expected an expression"},
		{"s0 +", 4, "expected an expression"},
		{"s0 + )", 5, "expected an expression"},
		{"(s0", 3, "expected ')'"},
		{"s0 s1", 3, "expected an operator"},
		{"Foo(s0)", 0, "unknown function"},
		{"s0 / 2", 0, "true division"},
		{"s0 ** s1", 6, "exponent"},
		{"s0 ** -1", 6, "exponent"},
		{"2.5", 1, "integer literal"},
		{"s0 $ 1", 3, "unexpected character"},
		{"Symbol('a b')", 7, "invalid symbol name"},
		{"Symbol(s0)", 7, "quoted symbol name"},
		{"Mod(s0)", 0, "expects 2"},
		{"(s0 == 1) + 1", 0, "integer expression"},
		{"s0 & s1", 0, "boolean"},
		{"Rational(1, 2)", 0, "Rational"},
		{"TruncToInt(IntTrueDiv(s0, 2))", 0, "TruncToInt"},
		{"'abc", 0, "unterminated"},
		{"oo", 0, "infinity"},
		{"Max(s0, 1", 9, "expected ',' or ')'"},
		{"Max(,s0)", 4, "expected an expression"},
		{strings.Repeat("(", 5000) + "s0" + strings.Repeat(")", 5000), 2000, "nested too deeply"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%.30q) err = %v, want *ParseError", tt.in, err)
			continue
		}
		if pe.Offset != tt.offset || !strings.Contains(pe.Msg, tt.msg) {
			t.Errorf("Parse(%.30q) = offset %d %q, want offset %d containing %q", tt.in, pe.Offset, pe.Msg, tt.offset, tt.msg)
		}
	}
}

func TestEvalPythonSemantics(t *testing.T) {
	bind := map[string]int64{"s0": 7, "s1": -2, "s2": -7, "u0": 0}
	tests := []struct {
		e    Expr
		want int64
	}{
		{FloorDiv(s0, c(2)), 3},
		{FloorDiv(s2, c(2)), -4},
		{FloorDiv(s0, s1), -4},
		{FloorDiv(s2, s1), 3},
		{Mod(s0, c(2)), 1},
		{Mod(s2, c(2)), 1},
		{Mod(s0, s1), -1},
		{Mod(s2, s1), -1},
		{Mod(s2, c(-2)), -1},
		{CeilDiv(s0, c(2)), 4},
		{CeilDiv(s2, c(2)), -3},
		{CeilDiv(s0, s1), -3},
		{Add(Mul(c(2), s0), c(1)), 15},
		{Pow(s1, 3), -8},
		{Max(s0, s1, c(3)), 7},
		{Min(s0, s1, c(3)), -2},
		{Eq(s0, c(7)), 1},
		{Lt(s0, c(7)), 0},
		{And(Le(s1, c(0)), Ge(s0, c(7))), 1},
		{Or(Le(s0, c(0)), Eq(s1, c(7))), 0},
		{Mod(Add(Mul(c(2), s0), c(2)), c(4)), 0},
		{FloorDiv(Add(Mul(c(2), s2), c(2)), c(4)), -3},
	}
	for _, tt := range tests {
		got, err := tt.e.Eval(bind)
		if err != nil || got != tt.want {
			t.Errorf("Eval(%q) = %d, %v; want %d", tt.e, got, err, tt.want)
		}
	}
	_, err := Add(s0, Sym("s9")).Eval(bind)
	var ue *UnboundError
	if !errors.As(err, &ue) || ue.Name != "s9" || !strings.Contains(err.Error(), "s9") {
		t.Errorf("unbound err = %v", err)
	}
	if _, err := FloorDiv(s0, u0).Eval(bind); !errors.Is(err, ErrDivisionByZero) {
		t.Errorf("div by zero err = %v", err)
	}
	if _, err := Mod(s0, Sub(s1, s1)).Eval(bind); !errors.Is(err, ErrDivisionByZero) {
		t.Errorf("mod by const zero err = %v", err)
	}
}

func TestOverflowSafety(t *testing.T) {
	maxC, minC := c(math.MaxInt64), c(math.MinInt64)
	big1 := Add(maxC, c(1))
	if _, ok := big1.Const(); ok || !big1.IsConst() {
		t.Error("MaxInt64+1 should be a big constant")
	}
	if big1.String() != "9223372036854775808" {
		t.Errorf("big String = %q", big1)
	}
	if !Sub(big1, c(1)).Equal(maxC) {
		t.Error("big - 1 should fold back to MaxInt64")
	}
	if v, ok := Neg(Neg(minC)).Const(); !ok || v != math.MinInt64 {
		t.Error("--MinInt64")
	}
	if _, err := big1.Eval(nil); !errors.Is(err, ErrOverflow) {
		t.Errorf("Eval big err = %v", err)
	}
	if _, err := Mul(s0, s0).Eval(map[string]int64{"s0": 1 << 40}); !errors.Is(err, ErrOverflow) {
		t.Errorf("Eval overflow err = %v", err)
	}
	// partial sums overflow but the total fits
	if v, err := Add(s0, s1, c(-10)).Eval(map[string]int64{"s0": math.MaxInt64, "s1": 5}); err != nil || v != math.MaxInt64-5 {
		t.Errorf("sum = %d, %v", v, err)
	}
	// coefficient overflow collects exactly
	e := Add(Mul(maxC, s0), Mul(maxC, s0), Mul(c(-2), maxC, s0))
	if !e.Equal(c(0)) {
		t.Errorf("big coefficients: %q", e)
	}
	p := Pow(c(2), 1<<40)
	if p.Op() != OpPow || p.String() != "2**1099511627776" {
		t.Errorf("huge pow = %q", p)
	}
	if _, err := p.Eval(nil); !errors.Is(err, ErrOverflow) {
		t.Errorf("huge pow eval err = %v", err)
	}
	if got := Pow(Pow(s0, math.MaxInt64), 2); got.Op() != OpPow {
		t.Errorf("exponent overflow = %q", got)
	}
	x := Mul(Pow(s0, math.MaxInt64), Pow(s0, math.MaxInt64), s0)
	if x.String() != "s0**2*s0**9223372036854775807*s0**9223372036854775807" {
		// 2*Max+1 = Max + Max + 1 → remainder first
		t.Logf("exp chunks: %q", x)
	}
	if r, err := Parse(x.String()); err != nil || !r.Equal(x) {
		t.Errorf("exp chunks round trip: %v", err)
	}
	if got := FloorDiv(minC, c(-1)); got.String() != "9223372036854775808" {
		t.Errorf("MinInt64 // -1 = %q", got)
	}
	if got := Mod(minC, c(-1)); !got.Equal(c(0)) {
		t.Errorf("MinInt64 %% -1 = %q", got)
	}
	if got := Mul(minC, c(-1)); got.String() != "9223372036854775808" {
		t.Errorf("MinInt64 * -1 = %q", got)
	}
	env := NewEnv()
	env.Declare("s0", Range{Finite(math.MaxInt64 - 1), PosInf()}, nil, false)
	if b := env.Bounds(Add(s0, c(10))); b.String() != "[9223372036854775807, inf]" {
		t.Errorf("saturated bounds = %v", b)
	}
	if b := env.Bounds(Neg(minC)); b.Lo.Cmp(Finite(math.MaxInt64)) != 0 || b.Hi.Inf != 1 {
		t.Errorf("big const bounds = %v", b)
	}
	for _, s := range []string{"9223372036854775807*9223372036854775807", "2**4096*3", "(-2)**99999", "99999999999999999999999 // 7"} {
		e, err := Parse(s)
		if err != nil {
			t.Errorf("Parse(%q): %v", s, err)
			continue
		}
		r, err := Parse(e.String())
		if err != nil || !r.Equal(e) {
			t.Errorf("round trip %q -> %q: %v", s, e, err)
		}
	}
}

func TestBoundsAndRanges(t *testing.T) {
	env := NewEnv()
	env.Declare("s0", Range{Finite(2), PosInf()}, ptr(5), false)
	env.Declare("s1", Range{Finite(0), Finite(10)}, ptr(3), false)
	env.Declare("u0", Range{Finite(0), PosInf()}, nil, true)
	env.Declare("z", Unbounded(), nil, false)
	env.Declare("w", Range{Finite(-5), Finite(5)}, nil, false)
	tests := []struct {
		e    Expr
		want string
	}{
		{s0, "[2, inf]"},
		{Sub(s0, c(1)), "[1, inf]"},
		{Neg(s0), "[-inf, -2]"},
		{FloorDiv(s0, c(2)), "[1, inf]"},
		{Mod(s0, c(4)), "[0, 3]"},
		{Min(s0, c(8)), "[2, 8]"},
		{Max(s0, c(8)), "[8, inf]"},
		{Mul(s0, s1), "[0, inf]"},
		{Mul(c(-3), s1), "[-30, 0]"},
		{Mul(s0, Sym("z")), "[-inf, inf]"},
		{Pow(Sym("z"), 2), "[0, inf]"},
		{Pow(s1, 3), "[0, 1000]"},
		{Pow(Sym("w"), 2), "[0, 25]"},
		{Pow(Sym("w"), 3), "[-125, 125]"},
		{Mod(s1, c(16)), "[0, 10]"},
		{Mod(Sym("z"), c(-4)), "[-3, 0]"},
		{FloorDiv(s1, s0), "[0, 5]"},
		{FloorDiv(Sub(c(-10), s1), s0), "[-10, -1]"},
		{FloorDiv(s0, Sub(s1, c(5))), "[-inf, inf]"},
		{Mod(s1, s0), "[0, 10]"},
		{Add(s0, Neg(s0)), "[0, 0]"},
		{Sub(s0, s1), "[-8, inf]"},
		{Add(s0, Sym("z")), "[-inf, inf]"},
		{Sym("unknown"), "[-inf, inf]"},
		{Ge(s0, c(2)), "[1, 1]"},
		{Lt(s0, c(2)), "[0, 0]"},
		{Eq(s0, c(4)), "[0, 1]"},
		{Eq(s1, c(11)), "[0, 0]"},
		{Ne(s1, c(11)), "[1, 1]"},
		{And(Ge(s0, c(2)), Le(s1, c(10))), "[1, 1]"},
		{Or(Eq(s0, c(4)), Lt(s1, c(0))), "[0, 1]"},
		{Mul(u0, c(0)), "[0, 0]"},
		{Mul(c(4), u0, s0), "[0, inf]"},
		{FloorDiv(Mul(c(4), u0), c(3)), "[0, inf]"},
	}
	for _, tt := range tests {
		if got := env.Bounds(tt.e).String(); got != tt.want {
			t.Errorf("Bounds(%q) = %s, want %s", tt.e, got, tt.want)
		}
	}
	if env.UpperBound(Min(s0, c(8))) != Finite(8) || env.LowerBound(s0) != Finite(2) {
		t.Error("Upper/LowerBound")
	}
	var nilEnv *Env
	if got := nilEnv.Bounds(Add(s0, c(1))).String(); got != "[-inf, inf]" {
		t.Errorf("nil env bounds = %s", got)
	}
	var zeroEnv Env
	zeroEnv.Declare("s0", Range{Finite(1), Finite(4)}, nil, false)
	if got := zeroEnv.Bounds(Mul(c(2), s0)).String(); got != "[2, 8]" {
		t.Errorf("zero env bounds = %s", got)
	}
}

func ptr(v int64) *int64 { return &v }

func TestStaticallyKnown(t *testing.T) {
	env := NewEnv()
	env.Declare("s0", Range{Finite(2), PosInf()}, ptr(5), false)
	env.Declare("s1", Range{Finite(1), Finite(64)}, ptr(3), false)
	tests := []struct {
		cond        Expr
		known, kneg bool
	}{
		{Ge(s0, c(2)), true, false},
		{Gt(s0, c(1)), true, false},
		{Lt(s0, c(2)), false, true},
		{Eq(s0, c(4)), false, false},
		{Ne(s0, c(1)), true, false},
		{Eq(s0, c(1)), false, true},
		{Le(s1, c(64)), true, false},
		{Ge(Mul(s0, s1), c(2)), true, false},
		{Eq(Mod(Mul(c(4), s0), c(2)), c(0)), true, false},
		{Le(s0, Max(s0, s1)), true, false},
		{Le(Min(s0, s1), s1), true, false},
		{Le(s0, s1), false, false},
		{And(Ge(s0, c(2)), Ge(s1, c(1))), true, false},
		{Or(Eq(s0, c(4)), Ge(s1, c(1))), true, false},
		{True(), true, false},
		{False(), false, true},
		{s0, true, false},
		{Sub(s1, s1), false, true},
		{Expr{}, false, false},
	}
	for _, tt := range tests {
		if got := env.StaticallyKnownTrue(tt.cond); got != tt.known {
			t.Errorf("StaticallyKnownTrue(%q) = %v", tt.cond, got)
		}
		if got := env.StaticallyKnownFalse(tt.cond); got != tt.kneg {
			t.Errorf("StaticallyKnownFalse(%q) = %v", tt.cond, got)
		}
	}
}

func TestEnv(t *testing.T) {
	env := NewEnv()
	env.Declare("s1", Range{Finite(2), PosInf()}, ptr(8), false)
	env.Declare("s0", Range{Finite(2), Finite(100)}, ptr(4), false)
	env.Declare("u0", Range{Finite(0), PosInf()}, nil, true)
	if got := strings.Join(env.Symbols(), ","); got != "s0,s1,u0" {
		t.Errorf("Symbols = %s", got)
	}
	if h, ok := env.Hint("s0"); !ok || h != 4 {
		t.Error("Hint s0")
	}
	if _, ok := env.Hint("u0"); ok {
		t.Error("u0 has no hint")
	}
	if !env.IsUnbacked("u0") || env.IsUnbacked("s0") || env.IsUnbacked("nope") {
		t.Error("IsUnbacked")
	}
	if r, ok := env.Range("s0"); !ok || r.String() != "[2, 100]" {
		t.Error("Range s0")
	}
	if r, ok := env.Range("nope"); ok || r.String() != "[-inf, inf]" {
		t.Error("Range of unknown")
	}
	if v, err := env.EvalHint(Add(Mul(s0, s1), c(1))); err != nil || v != 33 {
		t.Errorf("EvalHint = %d, %v", v, err)
	}
	_, err := env.EvalHint(Add(s0, u0))
	var ue *UnboundError
	if err == nil || !strings.Contains(err.Error(), "unbacked symbol u0") || !errors.As(err, &ue) || ue.Name != "u0" {
		t.Errorf("EvalHint unbacked err = %v", err)
	}
	if _, err := env.EvalHint(Sym("s7")); err == nil || !strings.Contains(err.Error(), "s7") {
		t.Errorf("EvalHint undeclared err = %v", err)
	}

	cl := env.Clone()
	cl.SetRange("s0", Range{Finite(3), Finite(3)})
	cl.Declare("s5", Point(1), ptr(1), false)
	cl.SetHint("s1", 99)
	if r, _ := env.Range("s0"); r.String() != "[2, 100]" {
		t.Error("clone range leaked into original")
	}
	if h, _ := env.Hint("s1"); h != 8 {
		t.Error("clone hint leaked into original")
	}
	if len(env.Symbols()) != 3 || len(cl.Symbols()) != 4 {
		t.Error("clone symbols leaked")
	}
	env.Refine("s0", Range{Finite(10), PosInf()})
	if r, _ := env.Range("s0"); r.String() != "[10, 100]" {
		t.Errorf("Refine = %v", r)
	}
	if r, _ := cl.Range("s0"); r.String() != "[3, 3]" {
		t.Error("original refine leaked into clone")
	}
	// Redeclare clears hint / unbacked.
	env.Declare("u0", Range{Finite(0), Finite(5)}, ptr(2), false)
	if env.IsUnbacked("u0") {
		t.Error("redeclare unbacked")
	}
	var nilEnv *Env
	if nilEnv.Symbols() != nil || nilEnv.IsUnbacked("x") || nilEnv.Clone() == nil {
		t.Error("nil env")
	}
}

func TestSimplify(t *testing.T) {
	env := NewEnv()
	env.Declare("s0", Range{Finite(2), PosInf()}, nil, false)
	env.Declare("s1", Range{Finite(0), Finite(3)}, nil, false)
	tests := []struct {
		e    Expr
		want string
	}{
		{Max(c(1), s0), "s0"},
		{Min(c(1), s0), "1"},
		{Max(s0, s1), "Max(s0, s1)"},
		{Mod(s1, c(4)), "s1"},
		{FloorDiv(s1, c(4)), "0"},
		{Add(Mod(s1, c(8)), Max(c(1), s0)), "s0 + s1"},
		{Eq(Max(c(1), s0), c(1)), "False"},
		{Ge(s0, c(2)), "True"},
		{Le(s0, c(5)), "s0 <= 5"},
		{Min(s1, c(5), s0), "Min(s0, s1)"},
	}
	for _, tt := range tests {
		if got := env.Simplify(tt.e).String(); got != tt.want {
			t.Errorf("Simplify(%q) = %q, want %q", tt.e, got, tt.want)
		}
	}
}

func TestSubst(t *testing.T) {
	e := Add(Mul(c(2), s0), FloorDiv(s1, c(2)), Max(c(1), u0))
	got := e.Subst(map[string]Expr{"s0": Add(s1, c(1)), "u0": c(5)})
	if got.String() != "2*s1 + s1//2 + 7" {
		t.Errorf("Subst = %q", got)
	}
	if got := e.Subst(map[string]Expr{"s1": c(7), "s0": c(1), "u0": c(0)}); got.String() != "6" {
		t.Errorf("Subst const = %q", got)
	}
	if !e.Subst(nil).Equal(e) || !e.Subst(map[string]Expr{"zz": c(1)}).Equal(e) {
		t.Error("no-op Subst")
	}
	if got := Eq(s0, s1).Subst(map[string]Expr{"s0": s1}); !got.Equal(True()) {
		t.Errorf("Subst into Eq = %q", got)
	}
	if got := e.Subst(map[string]Expr{"s0": True()}); got.IsValid() {
		t.Error("Subst of a boolean into arithmetic should be invalid")
	}
	// simultaneous
	if got := Sub(s0, s1).Subst(map[string]Expr{"s0": s1, "s1": s0}); got.String() != "-s0 + s1" {
		t.Errorf("simultaneous Subst = %q", got)
	}
}

func TestBoundParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Bound
	}{
		{"7", Finite(7)}, {"-3", Finite(-3)}, {"inf", PosInf()}, {"-inf", NegInf()},
		{"int_oo", PosInf()}, {"-int_oo", NegInf()}, {"oo", PosInf()}, {" -oo ", NegInf()},
		{"Integer(5)", Finite(5)},
	} {
		got, err := ParseBound(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseBound(%q) = %v, %v", tt.in, got, err)
		}
	}
	if _, err := ParseBound("seven"); err == nil {
		t.Error("ParseBound should fail")
	}
	for _, b := range []Bound{Finite(7), Finite(-7), PosInf(), NegInf()} {
		if got, err := ParseBound(b.String()); err != nil || got != b {
			t.Errorf("bound round trip %v", b)
		}
	}
	r, err := ParseRange("VR[2, int_oo]")
	if err != nil || r.String() != "[2, inf]" {
		t.Errorf("ParseRange = %v, %v", r, err)
	}
	if r2, err := ParseRange(r.String()); err != nil || r2 != r {
		t.Error("range round trip")
	}
	if !r.Contains(2) || r.Contains(1) || !r.Contains(math.MaxInt64) {
		t.Error("Contains")
	}
	if !(Range{Finite(3), Finite(2)}).IsEmpty() || r.IsEmpty() {
		t.Error("IsEmpty")
	}
	if _, err := ParseRange("2, 3"); err == nil {
		t.Error("ParseRange should fail")
	}
}
