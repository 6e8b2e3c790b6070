package sym

import (
	"strings"
	"testing"
)

var fuzzSeeds = []string{
	"s0", "2*s0 + 1", "(s0 + 1)//2", "Mod(s0, 4)", "Max(s0, s1)", "s0**2", "s0 == 4",
	"s0 <= 8", "Eq(s0, 1)", "Ne(s0, 2)", "-s0", "s0*s1", "Max(1, u0)", "Min(s0, 8)",
	"CeilToInt(IntTrueDiv(s0, 2))", "True", "False", "2 <= s0 <= 8", "(s0 <= 3) & (s1 > 2)",
	"Add(Mul(Integer(2), Symbol('s0', integer=True, positive=True)), Integer(-1))",
	"FloorDiv(Symbol('s1'), Integer(2))", "Max(Integer(1), Symbol('u0'))",
	"Pow(Symbol('s0'), Integer(2))", "StrictLessThan(Symbol('s0'), Integer(8))",
	"Equality(Symbol('s0'), Integer(4))", "BooleanTrue()", "PythonMod(Symbol('s0'), Integer(4))",
	"9223372036854775807 + 1", "-9223372036854775808 // -1", "(s0 + s1 + 1)**5", "2**5000",
	"Mod(2*s0 + 2, 4)", "s0//0", "Not(And(s0 <= 1, s1 == 2))", "(s0*s1 - 1)*(s0 + s2 + 3)",
}

// FuzzParse checks that Parse never panics and that anything it accepts
// prints to a form that parses back to an Equal expression (and prints
// identically).
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("Parse(%q) error of type %T", s, err)
			}
			return
		}
		if !e.IsValid() {
			t.Fatalf("Parse(%q) accepted an invalid expression", s)
		}
		out := e.String()
		r, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which does not parse: %v", s, out, err)
		}
		if !r.Equal(e) {
			t.Fatalf("Parse(%q) = %q, reparsed as %q (not Equal)", s, out, r)
		}
		if r.String() != out {
			t.Fatalf("unstable print: %q -> %q", out, r.String())
		}
		if r.Hash() != e.Hash() {
			t.Fatalf("hash differs for %q", out)
		}
		// Exercise the other entry points; none may panic.
		env := NewEnv()
		env.Declare("s0", Range{Finite(2), PosInf()}, nil, false)
		_ = env.Bounds(e)
		_ = env.StaticallyKnownTrue(e)
		_ = env.Simplify(e)
		_, _ = e.Eval(map[string]int64{"s0": 3, "s1": -2, "u0": 0})
		_ = e.Symbols()
		if strings.Contains(out, "<invalid>") {
			t.Fatalf("printed invalid sub-expression: %q", out)
		}
	})
}

func TestFuzzSeedsRoundTrip(t *testing.T) {
	for _, s := range fuzzSeeds {
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
