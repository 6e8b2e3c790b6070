package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	fxapi "github.com/fxport/fxport"
	"github.com/fxport/fxport/internal/memstat"
	"github.com/fxport/fxport/internal/testenv"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// BenchmarkGenuineScaling exports the genuine torch.export programs of
// tools/anchors/scaling.py — stacks of a Llama-style decoder block (rotary
// embeddings, KV cache), torchvision's ViT EncoderBlock and a ResNet stage at
// about 1k, 10k and 100k nodes — through every target with a native writer,
// in-process: read (fxport.Load + ir.Verify), the pipeline (each pass
// timed), emit + write. Make the programs first (cached outside git):
//
//	third_party/venv/bin/python tools/anchors/scaling.py        # or: make bench-programs
//	go test -run=NONE -bench=GenuineScaling -benchtime=1x -timeout=2h ./cmd/fxport
//	go test -run=NONE -bench='GenuineScaling/decoder/executorch-xnnpack' -benchtime=1x ./cmd/fxport
//
// It fails when, from 10k to 100k nodes, a pipeline's time grows more than
// 1.2× the growth in nodes (12× for 10×). A target that fails on a program
// (an op it cannot lower yet) is measured up to the failing step: the ratio
// then covers the passes both sizes completed. docs/benchmarks.md records
// the results.
func BenchmarkGenuineScaling(b *testing.B) {
	dir := benchCacheDir()
	models := []string{"decoder", "vit", "resnet"}
	sizes := []string{"1k", "10k", "100k"}
	var found int
	for _, m := range models {
		for _, s := range sizes {
			if fileExists(filepath.Join(dir, m+"_"+s+".pt2")) {
				found++
			}
		}
	}
	if found == 0 {
		testenv.Missing(b, "the genuine scaling programs ("+dir+"/*.pt2)", "third_party/venv/bin/python tools/anchors/scaling.py")
	}
	var targets []exportTarget
	for _, t := range exportTargets {
		if hasEmitter(t) {
			targets = append(targets, t)
		}
	}
	for _, m := range models {
		b.Run(m, func(b *testing.B) {
			for _, t := range targets {
				b.Run(t.String(), func(b *testing.B) {
					res := map[string]*genuineRun{}
					for _, s := range sizes {
						path := filepath.Join(dir, m+"_"+s+".pt2")
						if !fileExists(path) {
							continue
						}
						b.Run(s, func(b *testing.B) {
							for i := 0; i < b.N; i++ {
								r := genuineExport(b, path, t)
								res[s] = r
								b.ReportMetric(r.read.Seconds(), "read-s")
								b.ReportMetric(r.pipeline.Seconds(), "pipeline-s")
								b.ReportMetric(r.write.Seconds(), "emit+write-s")
								b.ReportMetric(r.total().Seconds(), "total-s")
								b.ReportMetric(r.cpu.Seconds(), "cpu-s")
								b.ReportMetric(float64(r.peak)/(1<<20), "peak-MiB")
								b.Logf("%s", r.line())
							}
						})
					}
					small, large := res["10k"], res["100k"]
					if small == nil || large == nil {
						return
					}
					if msg := scalingCheck(small, large); msg != "" {
						b.Errorf("%s/%s: %s", m, t, msg)
					}
				})
			}
		})
	}
}

// benchCacheDir is where tools/anchors/scaling.py caches its programs:
// $FXPORT_BENCH_CACHE, else $XDG_CACHE_HOME/fxport/bench, else
// ~/.cache/fxport/bench.
func benchCacheDir() string {
	if d := os.Getenv("FXPORT_BENCH_CACHE"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "fxport", "bench")
}

// genuineRun is one export of a scaling program: time and peak RSS rise
// (VmHWM, reset before each phase) by phase, each pass's time, and the
// error that stopped it, if any.
type genuineRun struct {
	nodes                 int
	read, pipeline, write time.Duration
	// cpu is the process's CPU time (user + system) over the three phases:
	// on a shared machine it measures the work where wall time measures
	// the neighbours too.
	cpu           time.Duration
	peak          int64
	passes        []pm.PassReport
	failedAt, err string
}

func (r *genuineRun) total() time.Duration { return r.read + r.pipeline + r.write }

// line is the run as one log line: phases, the slowest passes, the failure.
func (r *genuineRun) line() string {
	ps := slices.Clone(r.passes)
	slices.SortStableFunc(ps, func(a, b pm.PassReport) int { return int(b.Duration - a.Duration) })
	var top []string
	for _, p := range ps[:min(4, len(ps))] {
		top = append(top, fmt.Sprintf("%s %.3fs", p.Name, p.Duration.Seconds()))
	}
	s := fmt.Sprintf("%d nodes: read %.3fs, pipeline %.3fs (%s), emit+write %.3fs, total %.3fs (CPU %.3fs), peak rise %d MiB",
		r.nodes, r.read.Seconds(), r.pipeline.Seconds(), strings.Join(top, ", "), r.write.Seconds(), r.total().Seconds(), r.cpu.Seconds(), r.peak>>20)
	if r.err != "" {
		s += fmt.Sprintf("; fails at %s: %s", r.failedAt, r.err)
	}
	return s
}

// genuineExport reads path and exports it to t in a temporary directory
// through fxport's export API (fxport.Export, as fxport export does),
// timing each phase: read is fxport.Load + ir.Verify, pipeline the passes
// (each timed by pm), write the rest of the export (emission and writing).
func genuineExport(tb testing.TB, path string, t exportTarget) *genuineRun {
	tb.Helper()
	r := &genuineRun{}
	_ = memstat.ResetPeak()
	base, _ := memstat.PeakRSS()
	c0 := cpuTime()
	defer func() {
		r.cpu = cpuTime() - c0
		if p, err := memstat.PeakRSS(); err == nil {
			r.peak = p - base
		}
	}()
	t0 := time.Now()
	p, err := fxapi.Load(path)
	if err == nil {
		err = ir.Verify(p)
	}
	r.read = time.Since(t0)
	if err != nil {
		r.failedAt, r.err = "read", firstLine(err)
		return r
	}
	r.nodes = p.NumNodes()
	out := filepath.Join(tb.TempDir(), "out"+t.Ext())
	t1 := time.Now()
	res, err := fxapi.Export(context.Background(), fxapi.Program(p), t, fxapi.Options{Output: out, Run: pm.Config{Time: true}})
	total := time.Since(t1)
	if res != nil && res.Report != nil {
		r.passes = res.Report.Passes
	}
	for _, ps := range r.passes {
		r.pipeline += ps.Duration
	}
	r.write = max(total-r.pipeline, 0)
	if err != nil {
		r.err = firstLine(err)
		r.failedAt = "emit"
		var pe *pm.PassError
		if errors.As(err, &pe) {
			r.failedAt = "pass " + pe.Pass
		}
	}
	return r
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// scalingCheck compares two runs of one target on one model: "" when the
// larger costs at most 1.2× its node ratio in time (12× for 10×), else what
// grew. Where either run failed, only the passes both completed count.
func scalingCheck(small, large *genuineRun) string {
	if small.nodes == 0 || large.nodes == 0 {
		return ""
	}
	nodeRatio := float64(large.nodes) / float64(small.nodes)
	limit := 1.2 * nodeRatio
	var ts, tl time.Duration
	what := "the whole export"
	if small.err == "" && large.err == "" {
		ts, tl = small.total(), large.total()
	} else {
		what = "the passes both sizes completed"
		done := map[string]time.Duration{}
		for _, p := range small.passes {
			done[p.Name] += p.Duration
		}
		for _, p := range large.passes {
			if d, ok := done[p.Name]; ok {
				ts += d
				tl += p.Duration
			}
		}
		ts += small.read
		tl += large.read
	}
	if ts <= 0 || float64(tl)/float64(ts) <= limit {
		return ""
	}
	// Name the passes that grew most beyond the node ratio.
	sp := map[string]time.Duration{}
	for _, p := range small.passes {
		sp[p.Name] += p.Duration
	}
	type grow struct {
		name  string
		extra time.Duration
		ratio float64
	}
	var gs []grow
	for _, p := range large.passes {
		if d := sp[p.Name]; d > 0 {
			gs = append(gs, grow{p.Name, p.Duration - time.Duration(nodeRatio*float64(d)), float64(p.Duration) / float64(d)})
		}
	}
	slices.SortFunc(gs, func(a, b grow) int { return int(b.extra - a.extra) })
	var parts []string
	for _, g := range gs[:min(3, len(gs))] {
		parts = append(parts, fmt.Sprintf("%s %.1f×", g.name, g.ratio))
	}
	return fmt.Sprintf("%s took %.2fs at %d nodes and %.2fs at %d: %.1f× for %.1f× the nodes (limit %.1f×); grew most: %s",
		what, ts.Seconds(), small.nodes, tl.Seconds(), large.nodes, float64(tl)/float64(ts), nodeRatio, limit, strings.Join(parts, ", "))
}
