package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/fxport/fxport/internal/memstat"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	etemit "github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// noiseSource yields n pseudo-random bytes determined by id (a splitmix64
// stream), so that no two weights are equal and none is deduplicated, and
// nothing is held in memory.
type noiseSource struct{ n, id int64 }

type noise struct {
	id, word uint64
	left     int64
	tail     []byte // bytes of the current word not yet returned
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (r *noise) Read(b []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), r.left)]
	n := copy(b, r.tail)
	r.tail = r.tail[n:]
	for ; n+8 <= len(b); n += 8 {
		binary.LittleEndian.PutUint64(b[n:], splitmix(r.id<<40^r.word))
		r.word++
	}
	if n < len(b) {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], splitmix(r.id<<40^r.word))
		r.word++
		k := copy(b[n:], w[:])
		r.tail = append([]byte(nil), w[k:]...)
		n += k
	}
	r.left -= int64(n)
	return n, nil
}

func (s noiseSource) Open() (io.ReadCloser, error) {
	return io.NopCloser(&noise{id: uint64(s.id), left: s.n}), nil
}
func (s noiseSource) Size() int64    { return s.n }
func (s noiseSource) String() string { return fmt.Sprintf("noise(%d, id=%d)", s.n, s.id) }

// bigProgram is x: f32[1, 1024] multiplied in turn by weights f32[1024,
// 1024] (4 MiB each), with a bias added after each.
func bigProgram(tb testing.TB, weights int) *ir.Program {
	p := ir.NewProgram()
	g := p.Main
	act := ir.Tensor(ir.Float32, 1, 1024)
	var ws, bs []*ir.Value
	param := func(name, fqn string, t *ir.TensorType, size, id int64) *ir.Value {
		v, err := g.AddInput(name, t)
		if err != nil {
			tb.Fatal(err)
		}
		p.Signature.Inputs = append(p.Signature.Inputs, ir.InputSpec{Kind: ir.Parameter, Name: name, Target: fqn})
		p.AddWeight(&ir.Weight{Name: fqn, Type: t, Source: noiseSource{size, id}})
		return v
	}
	for k := 0; k < weights; k++ {
		ks := strconv.Itoa(k)
		ws = append(ws, param("p_layer"+ks+"_weight", "layer"+ks+".weight", ir.Tensor(ir.Float32, 1024, 1024), 4<<20, int64(2*k)))
		bs = append(bs, param("p_layer"+ks+"_bias", "layer"+ks+".bias", ir.Tensor(ir.Float32, 1024), 4<<10, int64(2*k+1)))
	}
	x, err := g.AddInput("x", act)
	if err != nil {
		tb.Fatal(err)
	}
	p.Signature.Inputs = append(p.Signature.Inputs, ir.InputSpec{Kind: ir.UserInput, Name: "x"})
	b := ir.NewBuilder(g)
	h := x
	for k := range ws {
		mm, err := b.Raw(ir.OpAtenMm, []ir.Arg{ir.ValueArg(h), ir.ValueArg(ws[k])}, []ir.Type{act}, []string{"mm" + strconv.Itoa(k)})
		if err != nil {
			tb.Fatal(err)
		}
		add, err := b.Raw(ir.OpAtenAddTensor, []ir.Arg{ir.ValueArg(mm.Results[0]), ir.ValueArg(bs[k]), ir.IntArg(1)}, []ir.Type{act}, []string{"add" + strconv.Itoa(k)})
		if err != nil {
			tb.Fatal(err)
		}
		h = add.Results[0]
	}
	g.SetOutputs(ir.ValueArg(h))
	p.Signature.Outputs = []ir.OutputSpec{{Kind: ir.UserOutput}}
	return p
}

// vmHWM is the process's peak resident set size in bytes (skips where
// Linux's VmHWM is unavailable).
func vmHWM(tb testing.TB) int64 {
	n, err := memstat.PeakRSS()
	if err != nil {
		tb.Skipf("peak RSS: %v", err)
	}
	return n
}

// resetHWM lowers the peak RSS to the current RSS.
func resetHWM(tb testing.TB) {
	if err := memstat.ResetPeak(); err != nil {
		tb.Skipf("cannot reset the peak RSS: %v", err)
	}
}

// BenchmarkExportExecuTorch1GiB exports a program with 1 GiB of weights
// (256 distinct f32[1024, 1024] weights and their biases, lazy sources)
// through the executorch.portable pipeline and writeExecuTorch — constants
// in the .pte, and with external constants in the .ptd — and through the
// executorch.xnnpack pipeline (the weights become the delegate's named
// data, each transposed for fully-connected), and reports the peak RSS
// increase of each export, which must stay under half the weights' size:
// weights are streamed from their sources into the files.
func BenchmarkExportExecuTorch1GiB(b *testing.B) {
	if testing.Short() {
		b.Skip("writes 1 GiB files")
	}
	const weights = 256
	for _, c := range []struct {
		name, backend string
		opts          etemit.Options
	}{
		{"portable", "executorch.portable", etemit.Options{}},
		{"external-constants", "executorch.portable", etemit.Options{ExternalConstants: true}},
		{"xnnpack", "executorch.xnnpack", etemit.Options{}},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			out := filepath.Join(dir, "big.pte")
			var base, peak, wbytes int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				p := bigProgram(b, weights)
				wbytes = 0
				for _, w := range p.Weights {
					wbytes += w.Source.Size()
				}
				pl, err := pm.Build(pm.TargetExecuTorch, c.backend)
				if err != nil {
					b.Fatal(err)
				}
				resetHWM(b)
				before := vmHWM(b)
				b.StartTimer()
				if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil {
					b.Fatal(err)
				}
				if err := writeExecuTorch(p, out, c.opts); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if after := vmHWM(b); after-before > peak-base {
					base, peak = before, after
				}
			}
			var files int64
			for _, path := range []string{out, ptdPath(out)} {
				if st, err := os.Stat(path); err == nil {
					files += st.Size()
				}
			}
			if files < wbytes {
				b.Fatalf("wrote %d bytes for %d bytes of weights", files, wbytes)
			}
			if c.opts.ExternalConstants {
				d, err := pte.ReadPTD(ptdPath(out))
				if err != nil {
					b.Fatal(err)
				}
				if len(d.Tensors) != 2*weights {
					b.Fatalf(".ptd holds %d tensors, want %d", len(d.Tensors), 2*weights)
				}
			} else if f, err := pte.Read(out); err != nil {
				b.Fatal(err)
			} else if c.backend == "executorch.xnnpack" && len(f.Program.NamedData) != 2*weights {
				b.Fatalf("the XNNPACK .pte holds %d named constants, want %d (every weight delegated)", len(f.Program.NamedData), 2*weights)
			}
			b.ReportMetric(float64(peak-base)/(1<<20), "exportRSS-MiB")
			b.ReportMetric(float64(wbytes)/(1<<20), "weights-MiB")
			b.ReportMetric(float64(files)/(1<<20), "files-MiB")
			if peak-base > wbytes/2 {
				b.Errorf("exporting took %d MiB of RSS for %d MiB of weights", (peak-base)>>20, wbytes>>20)
			}
		})
	}
}
