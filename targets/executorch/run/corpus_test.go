package run

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/interp/npy"
	"github.com/fxport/fxport/ir"
	_ "github.com/fxport/fxport/passes" // the executorch lowering passes
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// emitPTE runs the executorch.portable pipeline on p and emits, encodes and
// decodes the .pte.
func emitPTE(p *ir.Program, name string) (*pte.File, error) {
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.portable")
	if err != nil {
		return nil, err
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	f, err := emit.Program(p, emit.Options{})
	if err != nil {
		return nil, fmt.Errorf("emit: %w", err)
	}
	b, err := pte.Encode(f)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return pte.Decode(name, b)
}

func maxAbsErr(t *testing.T, got interp.Value, want *interp.Tensor) float64 {
	t.Helper()
	g, ok := got.(*interp.Tensor)
	if !ok {
		t.Fatalf("got %s, want a tensor", interp.Describe(got))
	}
	if fmt.Sprint(g.Shape) != fmt.Sprint(want.Shape) {
		t.Fatalf("shape %v, want %v", g.Shape, want.Shape)
	}
	gs, ws := g.Float64s(), want.Float64s()
	m := 0.0
	for i := range ws {
		d := math.Abs(gs[i] - ws[i])
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		m = math.Max(m, d)
	}
	return m
}

// TestEmittedCorpus emits every corpus program that the portable emitter
// accepts, runs the .pte with its planned arena and compares with the
// outputs torch computed (tests/corpus/<name>/io), at 1e-4.
func TestEmittedCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("lowers the corpus through the executorch pipeline")
	}
	root := "../../../tests/corpus"
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Skip("corpus not found")
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, name)
			p, err := pt2.Read(filepath.Join(dir, "program.pt2"))
			if err != nil {
				t.Fatal(err)
			}
			f, err := emitPTE(p, name+".pte")
			if err != nil {
				t.Fatalf("emit: %v", err) // every corpus program emits
			}
			var ins []interp.Value
			for i := 0; ; i++ {
				x, err := npy.ReadFile(filepath.Join(dir, "io", fmt.Sprintf("input_%d.npy", i)))
				if os.IsNotExist(err) {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				ins = append(ins, x)
			}
			outs, err := Run(f, ins, Options{})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			var wants []*interp.Tensor
			for i := 0; ; i++ {
				w, err := npy.ReadFile(filepath.Join(dir, "io", fmt.Sprintf("output_%d.npy", i)))
				if os.IsNotExist(err) {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				wants = append(wants, w)
			}
			if len(outs) < len(wants) {
				t.Fatalf("%d outputs, torch gave %d", len(outs), len(wants))
			}
			// Mutated-buffer write-backs come first; the user outputs last.
			outs = outs[len(outs)-len(wants):]
			for i, o := range outs {
				want := wants[i]
				e := maxAbsErr(t, o, want)
				t.Logf("output %d: max error %.3g", i, e)
				if e > 1e-4 {
					t.Errorf("output %d: max error %g > 1e-4", i, e)
				}
			}
		})
	}
}

// TestEmittedMLP runs the emitted .pte of examples/mlp (which has no torch
// outputs) against the reference interpreter on the IR program.
func TestEmittedMLP(t *testing.T) {
	src, err := os.ReadFile("../../../examples/mlp/program.fxir")
	if err != nil {
		t.Skip("examples/mlp not found")
	}
	p, err := ir.Parse(src, "program.fxir")
	if err != nil {
		t.Fatal(err)
	}
	ref := p.Clone()
	f, err := emitPTE(p, "mlp.pte")
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	// Batch 5, below the planned bound of 64: dynamic-bound tensors resize.
	x := f32([]int64{5, 4}, ramp(20, 0.3)...)
	mask := interp.FromInt64(ir.Bool, []int64{5, 2}, []int64{1, 0, 0, 1, 1, 1, 0, 0, 1, 0})
	want, err := interp.Run(ref, []interp.Value{x, mask}, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := Run(f, []interp.Value{x, mask}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := maxAbsErr(t, outs[len(outs)-1], want.Outputs[len(want.Outputs)-1].(*interp.Tensor))
	t.Logf("max error %.3g", e)
	if e > 1e-5 {
		t.Errorf("max error %g", e)
	}
}
