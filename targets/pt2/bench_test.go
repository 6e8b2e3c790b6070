package pt2

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	frontend "github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/internal/memstat"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// zeroSource yields n zero bytes; id keeps the spellings of equal-sized
// sources apart (the writer shares a payload between equal spellings).
type zeroSource struct{ n, id int64 }

type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}

func (z zeroSource) Open() (io.ReadCloser, error) {
	return io.NopCloser(io.LimitReader(zeros{}, z.n)), nil
}
func (z zeroSource) Size() int64    { return z.n }
func (z zeroSource) String() string { return fmt.Sprintf("zeros(%d, id=%d)", z.n, z.id) }

// syntheticProgram builds a chain of nodes over f32[s0, 1024] activations
// with weights of 4 MiB (f32[1024, 1024]) each: every so often an mm with
// the next weight, otherwise relu/neg.
func syntheticProgram(tb testing.TB, nodes, weights int) *ir.Program {
	p := ir.NewProgram()
	hint := int64(8)
	p.Env.Declare("s0", sym.Range{Lo: sym.Finite(1), Hi: sym.Finite(4096)}, &hint, false)
	act := ir.TensorOf(ir.Float32, []sym.Expr{sym.Sym("s0"), sym.Const(1024)})
	g := p.Main
	var ws []*ir.Value
	for k := 0; k < weights; k++ {
		name := "p_layer" + strconv.Itoa(k) + "_weight"
		v, err := g.AddInput(name, ir.Tensor(ir.Float32, 1024, 1024))
		if err != nil {
			tb.Fatal(err)
		}
		ws = append(ws, v)
		fqn := "layer" + strconv.Itoa(k) + ".weight"
		p.Signature.Inputs = append(p.Signature.Inputs, ir.InputSpec{Kind: ir.Parameter, Name: name, Target: fqn})
		p.Weights = append(p.Weights, &ir.Weight{Name: fqn, Type: ir.Tensor(ir.Float32, 1024, 1024), Source: zeroSource{4 << 20, int64(k)}})
	}
	x, err := g.AddInput("x", act)
	if err != nil {
		tb.Fatal(err)
	}
	p.Signature.Inputs = append(p.Signature.Inputs, ir.InputSpec{Kind: ir.UserInput, Name: "x"})
	sortWeights(p)
	b := ir.NewBuilder(g)
	h := x
	every := nodes / weights
	for i, k := 0, 0; i < nodes; i++ {
		var op ir.Op
		var args []ir.Arg
		switch {
		case i%every == 0 && k < weights:
			op, args = ir.OpAtenMm, []ir.Arg{ir.ValueArg(h), ir.ValueArg(ws[k])}
			k++
		case i%2 == 0:
			op, args = ir.OpAtenRelu, []ir.Arg{ir.ValueArg(h)}
		default:
			op, args = ir.OpAtenNeg, []ir.Arg{ir.ValueArg(h)}
		}
		n, err := b.Raw(op, args, []ir.Type{act}, []string{"v" + strconv.Itoa(i)})
		if err != nil {
			tb.Fatal(err)
		}
		n.Meta.Set(ir.MetaStackTrace, `  File "model.py", line `+strconv.Itoa(i)+", in forward\n")
		h = n.Results[0]
	}
	g.SetOutputs(ir.ValueArg(h))
	p.Signature.Outputs = []ir.OutputSpec{{Kind: ir.UserOutput}}
	return p
}

func sortWeights(p *ir.Program) {
	ws := p.Weights
	p.Weights = nil
	for _, w := range ws {
		p.AddWeight(w)
	}
}

// peakRSS is the process's peak resident set size in bytes (skips where
// Linux's VmHWM is unavailable).
func peakRSS(tb testing.TB) int64 {
	n, err := memstat.PeakRSS()
	if err != nil {
		tb.Skipf("peak RSS: %v", err)
	}
	return n
}

// resetPeakRSS lowers the peak RSS to the current RSS.
func resetPeakRSS(tb testing.TB) {
	if err := memstat.ResetPeak(); err != nil {
		tb.Skipf("cannot reset the peak RSS: %v", err)
	}
}

// BenchmarkRead100kNodes1GiB reads a synthetic archive of 100,000 nodes and
// 1 GiB of weights (256 × 4 MiB) and reports the peak RSS of reading it,
// which must stay far below the weights' size: weights are never read.
func BenchmarkRead100kNodes1GiB(b *testing.B) {
	if testing.Short() {
		b.Skip("writes a 1 GiB archive")
	}
	const nodes, weights = 100_000, 256
	path := filepath.Join(b.TempDir(), "big.pt2")
	{
		p := syntheticProgram(b, nodes, weights)
		if err := Write(p, path); err != nil {
			b.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	var p *ir.Program
	var base, peak int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p = nil
		resetPeakRSS(b)
		before := peakRSS(b)
		b.StartTimer()
		p, err = frontend.Read(path)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if after := peakRSS(b); after-before > peak-base {
			base, peak = before, after
		}
	}
	if got := p.NumNodes(); got != nodes {
		b.Fatalf("read %d nodes, want %d", got, nodes)
	}
	var wbytes int64
	for _, w := range p.Weights {
		wbytes += w.Source.Size()
	}
	b.ReportMetric(float64(peak)/(1<<20), "peakRSS-MiB")
	b.ReportMetric(float64(peak-base)/(1<<20), "readRSS-MiB")
	b.ReportMetric(float64(wbytes)/(1<<20), "weights-MiB")
	b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
	if peak-base > wbytes/2 {
		b.Errorf("reading took %d MiB of RSS for %d MiB of weights", (peak-base)>>20, wbytes>>20)
	}
}
