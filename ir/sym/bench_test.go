package sym

import (
	"strconv"
	"testing"
)

var sinkExpr Expr
var sinkRange Range

func BenchmarkConst(b *testing.B) {
	b.ReportAllocs()
	for i := range b.N {
		sinkExpr = Const(int64(i))
	}
}

func BenchmarkSym(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkExpr = Sym("s3")
	}
}

func BenchmarkAddConsts(b *testing.B) {
	b.ReportAllocs()
	x, y := Const(3), Const(4)
	for range b.N {
		sinkExpr = Add(x, y)
	}
}

func BenchmarkAddSymConst(b *testing.B) {
	b.ReportAllocs()
	s := Sym("s0")
	for range b.N {
		sinkExpr = Add(s, Const(-1))
	}
}

func BenchmarkMulSyms(b *testing.B) {
	b.ReportAllocs()
	s, t := Sym("s0"), Sym("s1")
	for range b.N {
		sinkExpr = Mul(s, t, Const(4))
	}
}

// BenchmarkConvOutputDim builds a typical conv/pool output size:
// (s0 + 2*p - d*(k - 1) - 1)//stride + 1.
func BenchmarkConvOutputDim(b *testing.B) {
	b.ReportAllocs()
	s := Sym("s0")
	for range b.N {
		num := Sub(Sub(Add(s, Mul(Const(2), Const(1))), Mul(Const(1), Sub(Const(3), Const(1)))), Const(1))
		sinkExpr = Add(FloorDiv(num, Const(2)), Const(1))
	}
}

// BenchmarkShapeGraph simulates shape propagation through a 1000-node graph
// of 4-d tensors with symbolic batch/sequence dims: reshapes (products),
// slices (differences), pooling (floor division) and broadcasting (Max).
func BenchmarkShapeGraph(b *testing.B) {
	b.ReportAllocs()
	s0, s1 := Sym("s0"), Sym("s1")
	for range b.N {
		dims := [4]Expr{s0, s1, Const(64), Const(64)}
		for n := 0; n < 1000; n++ {
			switch n % 5 {
			case 0:
				dims[1] = Mul(dims[1], Const(2))
			case 1:
				dims[2] = Add(FloorDiv(Sub(dims[2], Const(1)), Const(2)), Const(1))
			case 2:
				dims[0] = Max(dims[0], s0)
			case 3:
				dims[1] = FloorDiv(dims[1], Const(2))
			case 4:
				_ = Mul(dims[0], dims[1], dims[2], dims[3])
			}
		}
		sinkExpr = dims[1]
	}
}

func BenchmarkCanonicalizeLarge(b *testing.B) {
	b.ReportAllocs()
	syms := make([]Expr, 16)
	for i := range syms {
		syms[i] = Sym("s" + strconv.Itoa(i))
	}
	for range b.N {
		terms := make([]Expr, 0, 64)
		for i := 0; i < 64; i++ {
			terms = append(terms, Mul(Const(int64(i%7-3)), syms[i%16], syms[(i*5)%16]))
		}
		sinkExpr = Add(terms...)
	}
}

func BenchmarkExpand(b *testing.B) {
	b.ReportAllocs()
	a := Add(Sym("s0"), Sym("s1"), Const(1))
	c := Add(Sym("s2"), Const(-1))
	for range b.N {
		sinkExpr = Mul(a, c, a)
	}
}

func BenchmarkEqual(b *testing.B) {
	x := MustParse("2*s0*s1 + (s0 + 1)//2 + Mod(s1, 4) + 3")
	y := MustParse("3 + Mod(s1, 4) + (s0 + 1)//2 + s1*s0*2")
	b.ReportAllocs()
	for range b.N {
		if !x.Equal(y) {
			b.Fatal("not equal")
		}
	}
}

func BenchmarkString(b *testing.B) {
	x := MustParse("2*s0*s1 + (s0 + 1)//2 + Mod(s1, 4) + 3")
	b.ReportAllocs()
	for range b.N {
		_ = x.String()
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sinkExpr, _ = Parse("Add(Mul(Integer(2), Symbol('s0', integer=True, positive=True)), Integer(-1))")
	}
}

func BenchmarkBounds(b *testing.B) {
	env := NewEnv()
	env.Declare("s0", Range{Finite(2), PosInf()}, nil, false)
	env.Declare("s1", Range{Finite(1), Finite(1024)}, nil, false)
	x := MustParse("2*s0*s1 + (s0 + 1)//2 + Mod(s1, 4) + Max(1, s0 - 3) + 3")
	b.ReportAllocs()
	for range b.N {
		sinkRange = env.Bounds(x)
	}
}

func BenchmarkStaticallyKnownTrue(b *testing.B) {
	env := NewEnv()
	env.Declare("s0", Range{Finite(2), PosInf()}, nil, false)
	cond := Ge(Mul(Sym("s0"), Const(4)), Const(8))
	b.ReportAllocs()
	for range b.N {
		if !env.StaticallyKnownTrue(cond) {
			b.Fatal("should be known")
		}
	}
}
