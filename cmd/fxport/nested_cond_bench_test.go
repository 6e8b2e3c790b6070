package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkNestedCondExport exports a chain of nested cond (each true
// branch holds the next cond, each false branch one neg; the innermost
// true branch one sin) at depth 1,000, 4,000 and 10,000 through every
// target with a native writer, in-process (read = fxport.Load +
// ir.Verify, then the pipeline and the writer, as genuineExport does):
//
//	go test -run=NONE -bench=NestedCondExport -benchtime=1x ./cmd/fxport
//
// It fails when, from depth 1,000 to 10,000, a target's export CPU time
// grows more than 1.2× the growth in depth (12× for 10×): nesting must cost
// time linear in the depth (docs/performance.md, nested cond). A target
// that cannot export cond is logged and not measured.
func BenchmarkNestedCondExport(b *testing.B) {
	dir := b.TempDir()
	depths := []int{1_000, 4_000, 10_000}
	files := map[int]string{}
	for _, d := range depths {
		path := filepath.Join(dir, fmt.Sprintf("cond%d.fxir", d))
		if err := os.WriteFile(path, []byte(nestedCondIR(d)), 0o644); err != nil {
			b.Fatal(err)
		}
		files[d] = path
	}
	for _, t := range exportTargets {
		if !hasEmitter(t) {
			continue
		}
		b.Run(t.String(), func(b *testing.B) {
			res := map[int]*genuineRun{}
			for _, d := range depths {
				b.Run(fmt.Sprintf("depth-%d", d), func(b *testing.B) {
					for range b.N {
						r := genuineExport(b, files[d], t)
						if r.err != "" {
							// A target without cond (ONNX has no lowering
							// for it yet) is reported, not measured.
							b.Logf("depth %d: %s: %s", d, r.failedAt, r.err)
							return
						}
						res[d] = r
						b.ReportMetric(r.total().Seconds(), "total-s")
						b.ReportMetric(r.cpu.Seconds(), "cpu-s")
						b.ReportMetric(float64(r.peak)/(1<<20), "peak-MiB")
						b.Logf("%s", r.line())
					}
				})
			}
			small, large := res[depths[0]], res[depths[len(depths)-1]]
			if small == nil || large == nil {
				return
			}
			// CPU time: on a shared machine wall time measures the
			// neighbours too.
			ratio := large.cpu.Seconds() / small.cpu.Seconds()
			limit := 1.2 * float64(depths[len(depths)-1]) / float64(depths[0])
			if ratio > limit {
				b.Errorf("%s: CPU %.2fs at depth %d and %.2fs at %d: %.1f× (limit %.1f×)", t, small.cpu.Seconds(), depths[0], large.cpu.Seconds(), depths[len(depths)-1], ratio, limit)
			}
		})
	}
}

// nestedCondIR is IR text of cond nested depth deep, without indentation
// (indenting each level would make the text quadratic in the depth).
func nestedCondIR(depth int) string {
	var s strings.Builder
	s.WriteString("graph forward(%pred: b8[], %x: f32[4]) {\n")
	s.WriteString("%cond: f32[4] = higher_order.cond(%pred, ^true_graph_0, ^false_graph_0, [%pred, %x])\n")
	for i := range depth {
		fmt.Fprintf(&s, "^true_graph_%d(%%p%d: b8[], %%a%d: f32[4]) {\n", i, i, i)
		if i < depth-1 {
			fmt.Fprintf(&s, "%%c%d: f32[4] = higher_order.cond(%%p%d, ^true_graph_%d, ^false_graph_%d, [%%p%d, %%a%d])\n", i, i, i+1, i+1, i, i)
		} else {
			fmt.Fprintf(&s, "%%c%d: f32[4] = aten.sin.default(%%a%d)\n", i, i)
		}
	}
	for i := depth - 1; i >= 0; i-- {
		fmt.Fprintf(&s, "return %%c%d\n}\n^false_graph_%d(%%q%d: b8[], %%b%d: f32[4]) {\n%%n%d: f32[4] = aten.neg.default(%%b%d)\nreturn %%n%d\n}\n", i, i, i, i, i, i, i)
	}
	s.WriteString("return %cond\n}\n")
	return s.String()
}
