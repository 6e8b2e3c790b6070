package executorch_test

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// The ExecuTorch export's scaling benchmarks (docs/performance.md,
// "ExecuTorch export of synthetic 10k–100k-node programs"):
//
//	go test -run=NONE -bench=ExecuTorchExport -benchtime=1x ./targets/executorch
//	go test -run=NONE -bench=ExecuTorchScaling -benchtime=1x ./targets/executorch

var benchBackends = []string{"executorch.portable", "executorch.xnnpack"}

// exportTimes is one export's wall time by phase and by pass.
type exportTimes struct {
	pipeline, emit, write time.Duration
	passes                map[string]time.Duration
}

func (e exportTimes) total() time.Duration { return e.pipeline + e.emit + e.write }

// exportSynth runs backend's pipeline (with pass timing) on p, emits the
// .pte program and writes it to w.
func exportSynth(tb testing.TB, p *ir.Program, backend string, w io.Writer) exportTimes {
	tb.Helper()
	pl, err := pm.Build(pm.TargetExecuTorch, backend)
	if err != nil {
		tb.Fatal(err)
	}
	t0 := time.Now()
	rep, err := pm.Run(p, pl, nil, pm.Config{Time: true})
	if err != nil {
		tb.Fatalf("%s pipeline: %v", backend, err)
	}
	t1 := time.Now()
	f, err := emit.Program(p, emit.Options{})
	if err != nil {
		tb.Fatalf("%s emit: %v", backend, err)
	}
	t2 := time.Now()
	if err := pte.Write(w, f); err != nil {
		tb.Fatalf("%s write: %v", backend, err)
	}
	t3 := time.Now()
	e := exportTimes{pipeline: t1.Sub(t0), emit: t2.Sub(t1), write: t3.Sub(t2), passes: map[string]time.Duration{}}
	for _, pr := range rep.Passes {
		e.passes[pr.Name] += pr.Duration
	}
	return e
}

// topPasses formats the n slowest passes of e, slowest first.
func topPasses(e exportTimes, n int) string {
	names := make([]string, 0, len(e.passes))
	for name := range e.passes {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := int64(e.passes[b] - e.passes[a]); c != 0 {
			if c > 0 {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, name := range names[:min(n, len(names))] {
		parts = append(parts, fmt.Sprintf("%s %.3fs", name, e.passes[name].Seconds()))
	}
	return strings.Join(parts, ", ")
}

// BenchmarkExecuTorchExport exports the synthetic transformer and CNN
// stacks of 10k, 30k and 100k nodes through the executorch.portable and
// executorch.xnnpack pipelines, emits the .pte program and writes it to
// io.Discard. Parsing and cloning are outside the timer. It reports each
// phase (pipeline, emit, write) and logs the slowest passes.
func BenchmarkExecuTorchExport(b *testing.B) {
	for _, m := range synthModels {
		srcs := map[int]*ir.Program{}
		for _, want := range []int{10_000, 30_000, 100_000} {
			for _, backend := range benchBackends {
				nodes := m.sizeFor(backend, want)
				src := srcs[nodes]
				if src == nil {
					src = synthProgram(b, m, nodes)
					srcs[nodes] = src
				}
				name := fmt.Sprintf("%s/%s/%dk", m.name, strings.TrimPrefix(backend, "executorch."), nodes/1000)
				b.Run(name, func(b *testing.B) {
					var sum exportTimes
					sum.passes = map[string]time.Duration{}
					for b.Loop() {
						b.StopTimer()
						p := src.Clone()
						b.StartTimer()
						e := exportSynth(b, p, backend, io.Discard)
						sum.pipeline += e.pipeline
						sum.emit += e.emit
						sum.write += e.write
						for k, d := range e.passes {
							sum.passes[k] += d
						}
					}
					n := float64(b.N)
					b.ReportMetric(sum.pipeline.Seconds()/n, "pipeline-s")
					b.ReportMetric(sum.emit.Seconds()/n, "emit-s")
					b.ReportMetric(sum.write.Seconds()/n, "write-s")
					b.ReportMetric(sum.total().Seconds()/n, "total-s")
					b.Logf("%d IR nodes; slowest passes (sum over %d runs): %s", irNodeCount(src), b.N, topPasses(sum, 5))
				})
			}
		}
	}
}

// maxScaling bounds time(100k nodes) / time(10k nodes) of a whole export:
// 10 for linear work, with headroom for cache effects and GC.
const maxScaling = 15

// BenchmarkExecuTorchScaling fails when exporting 10× the nodes (10k →
// 100k; 5k → 50k for the portable CNN, see synthModel.portableMax) takes
// more than maxScaling× the time (the best of a few runs of each size), for
// either synthetic model and either pipeline: a superlinear pass, planner,
// emitter or writer shows up here.
func BenchmarkExecuTorchScaling(b *testing.B) {
	for _, m := range synthModels {
		for _, backend := range benchBackends {
			n := m.sizeFor(backend, 100_000)
			small, large := synthProgram(b, m, n/10), synthProgram(b, m, n)
			b.Run(m.name+"/"+strings.TrimPrefix(backend, "executorch."), func(b *testing.B) {
				best := func(src *ir.Program, runs int) exportTimes {
					var e exportTimes
					for i := range runs {
						if t := exportSynth(b, src.Clone(), backend, io.Discard); i == 0 || t.total() < e.total() {
							e = t
						}
					}
					return e
				}
				var es, el exportTimes
				for b.Loop() {
					es, el = best(small, 3), best(large, 2)
				}
				ratio := el.total().Seconds() / es.total().Seconds()
				b.ReportMetric(es.total().Seconds(), "small-s")
				b.ReportMetric(el.total().Seconds(), "large-s")
				b.ReportMetric(ratio, "ratio")
				if ratio > maxScaling {
					b.Errorf("%s %s: %d nodes took %.2fs, %d nodes %.3fs: %.1f× (want ≤ %d×, near-linear); by phase: %s",
						m.name, backend, n, el.total().Seconds(), n/10, es.total().Seconds(), ratio, maxScaling, phaseRatios(es, el))
				}
			})
		}
	}
}

// phaseRatios formats each phase's time in large over its time in small,
// and the passes that grew the most, to point at the superlinear part.
func phaseRatios(small, large exportTimes) string {
	r := func(a, b time.Duration) string {
		return fmt.Sprintf("%.2fs/%.3fs = %.1f×", b.Seconds(), a.Seconds(), b.Seconds()/max(a.Seconds(), 1e-9))
	}
	out := fmt.Sprintf("pipeline %s, emit %s, write %s", r(small.pipeline, large.pipeline), r(small.emit, large.emit), r(small.write, large.write))
	grown := exportTimes{passes: map[string]time.Duration{}}
	for name, d := range large.passes {
		if extra := d - 10*small.passes[name]; extra > 50*time.Millisecond {
			grown.passes[name] = extra // time beyond linear
		}
	}
	if top := topPasses(grown, 3); top != "" {
		out += "; passes beyond 10× their small time: " + top
	}
	return out
}

func irNodeCount(p *ir.Program) int {
	n := 0
	for _, x := range p.Main.Nodes() {
		if !x.IsReturn() {
			n++
		}
	}
	return n
}

// The synthetic programs are what the benchmarks claim: the node count
// per block holds, and a small instance of each exports through both
// pipelines into a .pte that reads back (the XNNPACK one with delegates).
func TestSyntheticProgramsExport(t *testing.T) {
	for _, m := range synthModels {
		p := synthProgram(t, m, 3*m.perBlock)
		if got := irNodeCount(p); got != 3*m.perBlock {
			t.Errorf("%s: %d nodes for 3 blocks, want %d", m.name, got, 3*m.perBlock)
		}
		for _, backend := range benchBackends {
			var buf bytes.Buffer
			exportSynth(t, p.Clone(), backend, &buf)
			f, err := pte.Decode(m.name+".pte", buf.Bytes())
			if err != nil {
				t.Fatalf("%s %s: %v", m.name, backend, err)
			}
			if len(f.Program.ExecutionPlan) == 0 {
				t.Fatalf("%s %s: no execution plan", m.name, backend)
			}
			delegates := len(f.Program.ExecutionPlan[0].Delegates)
			if xnn := backend == "executorch.xnnpack"; xnn != (delegates > 0) {
				t.Errorf("%s %s: %d delegates", m.name, backend, delegates)
			}
		}
	}
}
