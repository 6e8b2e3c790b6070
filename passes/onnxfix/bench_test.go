package onnxfix_test

import (
	"fmt"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	_ "github.com/fxport/fxport/passes/dynamo"
	_ "github.com/fxport/fxport/passes/onnxfix"
	"github.com/fxport/fxport/pm"
)

// program builds n nodes in which every eighth node is an alias → detach_
// pair and every sixteenth a mixed-dtype where (at i%16 == 13): the patterns the ONNX
// pipeline rewrites.
func program(tb testing.TB, n int) *ir.Program {
	tb.Helper()
	p := ir.NewProgram()
	p.Env.Declare("s0", sym.Range{Lo: sym.Finite(2), Hi: sym.Finite(4096)}, nil, false)
	shape := []sym.Expr{sym.Sym("s0"), sym.Const(64)}
	x, _ := p.Main.AddInput("x", ir.TensorOf(ir.Float32, shape))
	m, _ := p.Main.AddInput("m", ir.TensorOf(ir.Bool, shape))
	k, _ := p.Main.AddInput("k", ir.TensorOf(ir.Int64, nil))
	b := ir.NewBuilder(p.Main)
	op := ir.MustLookupOp
	cur := x
	must := func(v *ir.Value, err error) *ir.Value {
		if err != nil {
			tb.Fatal(err)
		}
		return v
	}
	for i := 0; i < n; {
		switch {
		case i%16 == 13:
			cur = must(b.Value(op("aten.where.self"), ir.ValueArg(m), ir.ValueArg(cur), ir.ValueArg(k)))
			i++
		case i%8 == 6:
			a := must(b.Value(op("aten.alias.default"), ir.ValueArg(cur)))
			cur = must(b.Value(op("aten.detach_.default"), ir.ValueArg(a)))
			i += 2
		default:
			cur = must(b.Value(op("aten.relu.default"), ir.ValueArg(cur)))
			i++
		}
	}
	p.Main.SetOutputs(ir.ValueArg(cur))
	p.Signature = ir.DefaultSignature(p.Main)
	return p
}

func BenchmarkONNXPipeline(b *testing.B) {
	pl, err := pm.Build(pm.TargetONNX, "")
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				p := program(b, n)
				exp, err := pm.NewExport(pm.TargetONNX, "")
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := pm.Run(p, pl, exp, pm.Config{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkONNXPipelineVerifyEach(b *testing.B) {
	pl, err := pm.Build(pm.TargetONNX, "")
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				p := program(b, n)
				exp, _ := pm.NewExport(pm.TargetONNX, "")
				b.StartTimer()
				if _, err := pm.Run(p, pl, exp, pm.Config{VerifyEach: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestONNXPipelineOnSynthetic checks the rewrite counts on a mid-size program.
func TestONNXPipelineOnSynthetic(t *testing.T) {
	p := program(t, 1600)
	pl, err := pm.Build(pm.TargetONNX, "")
	if err != nil {
		t.Fatal(err)
	}
	exp, _ := pm.NewExport(pm.TargetONNX, "")
	rep, err := pm.Run(p, pl, exp, pm.Config{VerifyEach: true})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, f := range rep.Fired {
		counts[f.Entry]++
	}
	if counts["fix-alias"] != 200 || counts["fix-detach-inplace"] != 200 || counts["where-promote"] != 100 {
		t.Fatalf("unexpected firing counts: %v", counts)
	}
}
