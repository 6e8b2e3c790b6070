package sym

import "testing"

func TestFloorDivBySymbolicMonomial(t *testing.T) {
	s0, s1 := Sym("s0"), Sym("s1")
	cases := []struct {
		got  Expr
		want string
	}{
		{FloorDiv(Mul(Const(8), s0, s1), s0), "8*s1"},
		{FloorDiv(s0, s0), "1"},
		{FloorDiv(Add(Mul(Const(2), s0, s1), Mul(Const(4), Pow(s0, 2))), Mul(Const(2), s0)), "2*s0 + s1"},
		{FloorDiv(Mul(Const(3), s0), Mul(Const(2), s0)), "3*s0//(2*s0)"}, // coefficient does not divide
		{FloorDiv(Add(s0, Const(1)), s0), "(s0 + 1)//s0"},                // constant term
		{Mod(Mul(s0, s1), s1), "0"},
		{Mod(Add(s0, s1), s1), "Mod(s0 + s1, s1)"},
	}
	for _, c := range cases {
		if c.got.String() != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	// The quotient agrees with evaluation wherever the divisor is non-zero.
	e := FloorDiv(Mul(Const(6), s0, s1), Mul(Const(3), s1))
	for _, v := range []int64{-3, 1, 5} {
		got, err := e.Eval(map[string]int64{"s0": 7, "s1": v})
		if err != nil || got != 14 {
			t.Fatalf("eval at s1=%d: %d, %v", v, got, err)
		}
	}
}
