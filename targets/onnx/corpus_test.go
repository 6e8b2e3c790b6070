package onnx

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/internal/ort"
)

const corpusDir = "../../tests/corpus"

// VerifyFixture exports nothing: it runs an emitted model on a fixture's
// io/input_<i>.npy files and compares with io/output_<i>.npy.
func verifyFixture(m *Model, ioDir string, tol float64) ([]Diff, error) {
	var ins []ort.Tensor
	for i := range m.Inputs {
		t, err := ort.ReadNPY(filepath.Join(ioDir, fmt.Sprintf("input_%d.npy", i)))
		if err != nil {
			return nil, err
		}
		ins = append(ins, t)
	}
	got, err := m.RunORT(ins)
	if err != nil {
		return nil, err
	}
	var diffs []Diff
	for i, g := range got {
		w, err := ort.ReadNPY(filepath.Join(ioDir, fmt.Sprintf("output_%d.npy", i)))
		if err != nil {
			return nil, err
		}
		gv, err := g.Float64s()
		if err != nil {
			return nil, err
		}
		wv, err := w.Float64s()
		if err != nil {
			return nil, err
		}
		diffs = append(diffs, Compare(g.Name, gv, g.Shape, wv, w.Shape))
	}
	return diffs, nil
}

func TestCorpusInORT(t *testing.T) {
	needORT(t)
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Skipf("no corpus: %v", err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(corpusDir, name)
			p, err := pt2.Read(filepath.Join(dir, "program.pt2"))
			if err != nil {
				t.Fatalf("frontend cannot read the program: %v", err)
			}
			runPipeline(t, p)
			m, err := Emit(p, Options{})
			if err != nil {
				t.Fatalf("emit: %v", err)
			}
			diffs, err := verifyFixture(m, filepath.Join(dir, "io"), 1e-4)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range diffs {
				if !d.OK(1e-4) {
					t.Errorf("output %s: %s max abs %g max rel %g", d.Name, d.Err, d.MaxAbs, d.MaxRel)
				}
			}
		})
	}
}
