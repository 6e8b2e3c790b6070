package ir_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// exprs parses a list of expressions.
func exprs(t testing.TB, ss ...string) []sym.Expr {
	t.Helper()
	out := make([]sym.Expr, len(ss))
	for i, s := range ss {
		e, err := sym.Parse(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		out[i] = e
	}
	return out
}

// dimOrderEnv declares s0 (backed, [2, 64], hint 4), s1 (backed, [2, inf],
// no hint), u0 (unbacked, [0, inf]), u1 (unbacked, [0, 10]) and u2
// (unbacked, [2, inf]).
func dimOrderEnv() *sym.Env {
	env := sym.NewEnv()
	four := int64(4)
	env.Declare("s0", sym.Range{Lo: sym.Finite(2), Hi: sym.Finite(64)}, &four, false)
	env.Declare("s1", sym.Range{Lo: sym.Finite(2), Hi: sym.PosInf()}, nil, false)
	env.Declare("u0", sym.Range{Lo: sym.Finite(0), Hi: sym.PosInf()}, nil, true)
	env.Declare("u1", sym.Range{Lo: sym.Finite(0), Hi: sym.Finite(10)}, nil, true)
	env.Declare("u2", sym.Range{Lo: sym.Finite(2), Hi: sym.PosInf()}, nil, true)
	return env
}

// ET-P13: the dim order of symbolic, even unbacked, strides is the true
// permutation, not a give-up nil.
func TestDimOrderFromStrides(t *testing.T) {
	env := dimOrderEnv()
	for _, c := range []struct {
		name           string
		sizes, strides []string
		want           []int
	}{
		// channels_last [N, C, H, W] = strides (C*H*W, 1, W*C, C)
		{"channels_last static", []string{"2", "3", "4", "5"}, []string{"60", "1", "15", "3"}, []int{0, 2, 3, 1}},
		{"channels_last backed and unbacked", []string{"s0", "3", "u0", "8"}, []string{"24*u0", "1", "24", "3"}, []int{0, 2, 3, 1}},
		{"channels_last all symbolic", []string{"u2", "s0", "u0", "s1"}, []string{"s0*s1*u0", "1", "s0*s1", "s0"}, []int{0, 2, 3, 1}},
		{"contiguous symbolic", []string{"s0", "u0", "s1"}, []string{"s1*u0", "s1", "1"}, nil},
		// transposed [u0, u1] (column-major): u0 vs 1 is data-dependent, u0 → 2^20
		{"transposed unbacked", []string{"u0", "u1"}, []string{"1", "u0"}, []int{1, 0}},
		// bounded unbacked: u1 → 10 > 3
		{"bounded unbacked", []string{"3", "u1"}, []string{"1", "u1"}, []int{1, 0}},
		// backed without hint: s1 → its range decides s1 >= 2 > 1
		{"backed without hint", []string{"s1", "5"}, []string{"1", "s1"}, []int{1, 0}},
		// the ranges decide s0 + 1 > s0 whatever the substitution
		{"ranges decide", []string{"2", "2"}, []string{"u0", "u0 + 1"}, []int{1, 0}},
		// ties keep dim order (stable)
		{"tie static", []string{"2", "3", "4"}, []string{"4", "4", "1"}, nil},
		{"tie after", []string{"2", "3", "4"}, []string{"1", "4", "4"}, []int{1, 2, 0}},
		{"tie symbolic", []string{"u0", "u0", "3"}, []string{"u0", "u0", "u0*u0"}, []int{2, 0, 1}},
		// size-1 dims are placed before the first larger-indexed dim
		{"size one leading", []string{"1", "3", "4", "5"}, []string{"60", "1", "15", "3"}, []int{0, 2, 3, 1}},
		{"size one inside", []string{"2", "3", "1", "5"}, []string{"15", "1", "1", "3"}, []int{0, 2, 3, 1}},
		{"size one channel is contiguous", []string{"2", "1", "4", "5"}, []string{"20", "1", "5", "1"}, nil},
		{"size one, any stride", []string{"4", "1", "3"}, []string{"1", "0", "4"}, []int{1, 2, 0}},
		// the stride of a size-1 dim is ignored even when it is 0
		{"expanded size one", []string{"1", "3"}, []string{"0", "1"}, nil},
		// a stride that only might be 0 sorts by its substitution
		{"maybe zero stride", []string{"4", "3"}, []string{"1", "u1"}, []int{1, 0}},
		{"maybe zero stride unbounded", []string{"4", "3"}, []string{"u0", "1"}, nil},
		// empty tensors and rank < 2 have no layout to describe
		{"empty", []string{"0", "3"}, []string{"1", "0"}, nil},
		{"rank 1", []string{"u0"}, []string{"2"}, nil},
		{"rank 0", nil, nil, nil},
		// exact beyond int64: (2^20)^4 vs (2^20)^3 * 3
		{"huge substitution", []string{"u0", "u0", "u0", "u0", "3"}, []string{"3*u0**3", "u0**4", "3*u0", "3*u0**2", "1"}, []int{1, 0, 3, 2, 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ir.DimOrderFromStrides(exprs(t, c.sizes...), exprs(t, c.strides...), env)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) || (got == nil) != (c.want == nil) {
				t.Fatalf("sizes %v strides %v: dim order %v, want %v", c.sizes, c.strides, got, c.want)
			}
		})
	}
}

func TestDimOrderFromStridesErrors(t *testing.T) {
	env := dimOrderEnv()
	zero := int64(0)
	env.Declare("z", sym.Point(0), &zero, false)
	for _, c := range []struct {
		name           string
		sizes, strides []string
		is             error
		want           string
	}{
		{"zero stride", []string{"4", "3"}, []string{"0", "1"}, ir.ErrZeroStride, "dim 0 (size 4) has stride 0"},
		{"zero stride symbolic size", []string{"3", "s0"}, []string{"1", "0"}, ir.ErrZeroStride, "dim 1 (size s0) has stride 0"},
		{"zero stride maybe-one size", []string{"u0", "3"}, []string{"0", "1"}, ir.ErrZeroStride, "dim 0 (size u0)"},
		{"definitely zero symbolic stride", []string{"4", "3"}, []string{"3", "z"}, ir.ErrZeroStride, "dim 1 (size 3) has stride 0"},
		{"negative stride", []string{"4", "3"}, []string{"-3", "1"}, ir.ErrNegativeStride, "dim 0 (size 4) has stride -3"},
		{"lengths", []string{"4", "3"}, []string{"1"}, nil, "1 strides for 2 sizes"},
		{"boolean", []string{"4", "3"}, []string{"s0 <= 3", "1"}, nil, "strides[0] is not a valid integer expression"},
		{"undecidable", []string{"4", "3"}, []string{"s0//(u1 - 10) + 40", "1"}, nil, "cannot order the strides of dims"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ir.DimOrderFromStrides(exprs(t, c.sizes...), exprs(t, c.strides...), env)
			if err == nil {
				t.Fatalf("dim order %v, want an error", got)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v does not wrap %v", err, c.is)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q lacks %q", err, c.want)
			}
		})
	}
}

// torchStrides gives the strides torch assigns to sizes laid out in order
// (outermost first), a size of 0 counting as 1.
func torchStrides(sizes []sym.Expr, order []int) []sym.Expr {
	st := make([]sym.Expr, len(sizes))
	acc := sym.Const(1)
	for k := len(order) - 1; k >= 0; k-- {
		d := order[k]
		st[d] = acc
		acc = sym.Mul(acc, sizes[d])
	}
	return st
}

// canonicalOrder is order with its size-1 dims moved before the first
// larger-indexed dim, nil for the identity.
func canonicalOrder(order []int, isOne func(int) bool) []int {
	var rest []int
	for _, d := range order {
		if !isOne(d) {
			rest = append(rest, d)
		}
	}
	for d := range order {
		if !isOne(d) {
			continue
		}
		at := len(rest)
		for k, o := range rest {
			if o > d {
				at = k
				break
			}
		}
		rest = slices.Insert(rest, at, d)
	}
	if slices.IsSorted(rest) {
		return nil
	}
	return rest
}

// Property: for random sizes and a random permutation, the strides torch
// gives that layout map back to the permutation (canonical in its size-1
// dims): with static sizes, and with sizes replaced by backed symbols (hint
// or none) and unbacked ones (bounded or not).
func TestDimOrderFromStridesRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 2026))
	for iter := 0; iter < 2000; iter++ {
		rank := 1 + rng.IntN(6)
		static := make([]int64, rank)
		sizes := make([]sym.Expr, rank)
		env := sym.NewEnv()
		symbolic := iter%2 == 1
		for d := range static {
			static[d] = 1 + rng.Int64N(5)
			sizes[d] = sym.Const(static[d])
			if symbolic && static[d] > 1 && rng.IntN(2) == 0 {
				name := fmt.Sprintf("s%d", d)
				var hint *int64
				hi := sym.PosInf()
				unbacked := rng.IntN(2) == 0
				if unbacked {
					name = fmt.Sprintf("u%d", d)
					if rng.IntN(2) == 0 {
						hi = sym.Finite(2 + rng.Int64N(100))
					}
				} else if rng.IntN(2) == 0 {
					hint = &static[d]
				}
				env.Declare(name, sym.Range{Lo: sym.Finite(2), Hi: hi}, hint, unbacked)
				sizes[d] = sym.Sym(name)
			}
		}
		perm := rng.Perm(rank)
		strides := torchStrides(sizes, perm)
		got, err := ir.DimOrderFromStrides(sizes, strides, env)
		if err != nil {
			t.Fatalf("sizes %v strides %v: %v", sizes, strides, err)
		}
		want := canonicalOrder(perm, func(d int) bool { return static[d] == 1 })
		if !slices.Equal(got, want) {
			t.Fatalf("sizes %v, order %v, strides %v: got dim order %v, want %v", sizes, perm, strides, got, want)
		}
	}
}

// FuzzDimOrderFromStrides: any sizes and strides give an error or a
// permutation of the dims (nil for the identity), never a panic.
func FuzzDimOrderFromStrides(f *testing.F) {
	f.Add("s0, 3, u0, 8", "24*u0, 1, 24, 3")
	f.Add("u0, u1", "1, u0")
	f.Add("4, 3", "0, u1")
	f.Add("1, 3, 1", "u2**3, s1//u1, Mod(u0, 3)")
	env := dimOrderEnv()
	f.Fuzz(func(t *testing.T, sizes, strides string) {
		parse := func(s string) ([]sym.Expr, bool) {
			var out []sym.Expr
			for _, part := range strings.Split(s, ",") {
				e, err := sym.Parse(strings.TrimSpace(part))
				if err != nil {
					return nil, false
				}
				out = append(out, e)
			}
			return out, len(out) <= 8
		}
		sz, ok1 := parse(sizes)
		st, ok2 := parse(strides)
		if !ok1 || !ok2 {
			return
		}
		got, err := ir.DimOrderFromStrides(sz, st, env)
		if err != nil {
			return
		}
		if got == nil {
			return
		}
		if len(got) != len(sz) {
			t.Fatalf("dim order %v for rank %d", got, len(sz))
		}
		seen := make([]bool, len(got))
		for _, d := range got {
			if d < 0 || d >= len(got) || seen[d] {
				t.Fatalf("dim order %v is not a permutation", got)
			}
			seen[d] = true
		}
		if slices.IsSorted(got) {
			t.Fatalf("dim order %v is the identity, want nil", got)
		}
	})
}
