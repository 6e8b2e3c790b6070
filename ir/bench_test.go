package ir_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// synthetic builds a program of n nodes: a chain of relu/add/mul over a
// symbolic [s0, 64] input where every fourth node is dead (for DCE).
func synthetic(tb testing.TB, n int) *ir.Program {
	tb.Helper()
	p := ir.NewProgram()
	p.Env.Declare("s0", sym.Range{Lo: sym.Finite(2), Hi: sym.Finite(4096)}, nil, false)
	x, err := p.Main.AddInput("x", ir.TensorOf(ir.Float32, []sym.Expr{sym.Sym("s0"), sym.Const(64)}))
	if err != nil {
		tb.Fatal(err)
	}
	relu := ir.MustLookupOp("aten.relu.default")
	add := ir.MustLookupOp("aten.add.Tensor")
	mul := ir.MustLookupOp("aten.mul.Tensor")
	b := ir.NewBuilder(p.Main)
	cur := x
	for i := 0; i < n; i++ {
		var v *ir.Value
		switch i % 4 {
		case 0:
			v, err = b.Value(relu, ir.ValueArg(cur))
		case 1:
			v, err = b.Value(add, ir.ValueArg(cur), ir.ValueArg(x))
		case 2:
			v, err = b.Value(mul, ir.ValueArg(cur), ir.ValueArg(cur))
		case 3: // dead
			_, err = b.Value(relu, ir.ValueArg(cur))
			continue
		}
		if err != nil {
			tb.Fatal(err)
		}
		cur = v
	}
	p.Main.SetOutputs(ir.ValueArg(cur))
	p.Signature = ir.DefaultSignature(p.Main)
	return p
}

var sizes = []int{10_000, 100_000}

func BenchmarkBuild(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				synthetic(b, n)
			}
		})
	}
}

func BenchmarkPrint(b *testing.B) {
	for _, n := range sizes {
		p := synthetic(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_ = ir.Print(p)
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	for _, n := range sizes {
		src := []byte(ir.Print(synthetic(b, n)))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for i := 0; i < b.N; i++ {
				if _, err := ir.Parse(src, "bench.fxir"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkVerify(b *testing.B) {
	for _, n := range sizes {
		p := synthetic(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := ir.Verify(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkVerifyTypes(b *testing.B) {
	for _, n := range sizes {
		p := synthetic(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := ir.VerifyWith(p, ir.VerifyOptions{Types: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDCE(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				p := synthetic(b, n)
				b.StartTimer()
				if removed := ir.DCE(p.Main); removed != n/4 {
					b.Fatalf("removed %d, want %d", removed, n/4)
				}
			}
		})
	}
}

func BenchmarkClone(b *testing.B) {
	for _, n := range sizes {
		p := synthetic(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_ = p.Clone()
			}
		})
	}
}

// BenchmarkVerifyScaling verifies 10k and 100k nodes and fails when ten
// times the nodes costs more than twelve times the time: the verifier must
// stay linear. It is a ratio measured in a benchmark (best of five runs per
// size), not a wall-clock bound in a unit test, which fails on a loaded
// machine.
func BenchmarkVerifyScaling(b *testing.B) {
	best := map[int]time.Duration{}
	for i := 0; i < b.N; i++ {
		for _, n := range sizes {
			p := synthetic(b, n)
			for r := 0; r < 5; r++ {
				t0 := time.Now()
				if err := ir.Verify(p); err != nil {
					b.Fatal(err)
				}
				if d := time.Since(t0); best[n] == 0 || d < best[n] {
					best[n] = d
				}
			}
		}
	}
	for _, n := range sizes {
		b.ReportMetric(float64(best[n].Nanoseconds())/float64(n), fmt.Sprintf("ns/node@%d", n))
	}
	ratio := float64(best[100_000]) / float64(best[10_000])
	b.ReportMetric(ratio, "ratio-100k/10k")
	if ratio > 12 {
		b.Fatalf("verifying 100k nodes took %.1f× the time of 10k nodes (want ≤ 12×)", ratio)
	}
}
