package difftest_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/difftest"
	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/pm"
)

// corpusDirs lists tests/corpus/<name>/ directories holding a program.pt2
// and io/ with torch's inputs and outputs.
func corpusDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("../tests/corpus/*/program.pt2")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		dir := filepath.Dir(d)
		if _, err := os.Stat(filepath.Join(dir, "io", "output_0.npy")); err == nil {
			out = append(out, dir)
		}
	}
	if len(out) == 0 {
		t.Skip("no corpus programs with io/ under tests/corpus")
	}
	return out
}

// TestCorpusMatchesTorch interprets every corpus program on torch's example
// inputs and compares with torch's eager outputs (float32 within 1e-4).
func TestCorpusMatchesTorch(t *testing.T) {
	for _, dir := range corpusDirs(t) {
		dir := dir
		t.Run(filepath.Base(dir), func(t *testing.T) {
			p, err := pt2.Read(filepath.Join(dir, "program.pt2"))
			if err != nil {
				t.Fatal(err)
			}
			in, want, err := difftest.ReadIODir(dir)
			if err != nil {
				t.Fatal(err)
			}
			r, err := interp.Run(p, in, interp.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := difftest.UserOutputs(p, r.Outputs)
			if len(got) != len(want) {
				t.Fatalf("%d user outputs, torch has %d", len(got), len(want))
			}
			for i := range want {
				if err := difftest.Compare(got[i], want[i], nil); err != nil {
					t.Errorf("output %d: %v", i, err)
				}
			}
		})
	}
}

// TestCorpusThroughPipelines runs every corpus program through the default
// pipeline of each target and checks the result against the input program
// on torch's inputs and on drawn ones.
func TestCorpusThroughPipelines(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: whole pipelines on every corpus program")
	}
	for _, dir := range corpusDirs(t) {
		dir := dir
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in, _, err := difftest.ReadIODir(dir)
			if err != nil {
				t.Fatal(err)
			}
			cache := interp.NewWeightCache()
			for _, target := range []string{pm.TargetDynamo, pm.TargetONNX, pm.TargetExecuTorch} {
				p, err := pt2.Read(filepath.Join(dir, "program.pt2"))
				if err != nil {
					t.Fatal(err)
				}
				pl, err := pm.Build(target, "")
				if err != nil {
					t.Fatal(err)
				}
				// On torch's inputs, then on drawn samples (other symbol values).
				for _, opt := range []difftest.Option{difftest.WithInputs(in), difftest.WithSamples(2)} {
					err = difftest.Check(p.Clone(), pl, opt, difftest.WithWeightCache(cache))
					var perr *difftest.PipelineError
					switch {
					case errors.As(err, &perr):
						// The pipeline's own failures are the golden and export
						// tests' business; the passes before it were checked.
						t.Logf("%s: %v", target, err)
					case err != nil:
						t.Errorf("%s: %v", target, err)
					}
				}
			}
		})
	}
}
