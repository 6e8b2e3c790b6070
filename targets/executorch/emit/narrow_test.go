package emit_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/run"
)

// narrow (literal bounds, a negative start, symbolic start and length) is
// lowered to slice_copy by narrow-as-slice-copy, so the program emits (no
// narrow kernel exists) and the .pte computes what the interpreter computes
// on the unlowered program, at two sizes of the dynamic dim.
func TestEmitNarrowRuns(t *testing.T) {
	src := `symbol s0: [4, 16] hint 8
graph forward(%x: f32[s0, 3]) {
  %sym_size: Sym(s0) = aten.sym_size.int(%x, 0)
  %half: Sym(s0//2) = operator.floordiv(%sym_size, 2)
  %rest: Sym(s0 - s0//2) = operator.sub(%sym_size, %half)
  %lo: f32[s0//2, 3] = aten.narrow.default(%x, 0, 0, %half)
  %hi: f32[s0 - s0//2, 3] = aten.narrow.default(%x, 0, %half, %rest)
  %mid: f32[s0//2, 3] = aten.narrow.default(%x, 0, 1, %half)
  %col: f32[s0, 2] = aten.narrow.default(%x, 1, -2, 2)
  %row: f32[2, 3] = aten.narrow.default(%x, 0, 1, 2)
  return %lo, %hi, %mid, %col, %row
}
`
	path := filepath.Join(t.TempDir(), "narrow.fxir")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ref, err := ir.Parse([]byte(src), path)
	if err != nil {
		t.Fatal(err)
	}
	lowered := lower(t, path)
	for _, n := range lowered.Main.Nodes() {
		if n.Op.Info().Base == "narrow" {
			t.Fatalf("%s survived the lowering", n.Short())
		}
	}
	ef, err := emit.Program(lowered, emit.Options{NoMetadataMethod: true})
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	b, err := pte.Encode(ef)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pte.Decode("narrow.pte", b)
	if err != nil {
		t.Fatal(err)
	}
	for _, rows := range []int64{5, 8} {
		xs := make([]float64, rows*3)
		for i := range xs {
			xs[i] = float64(i)
		}
		x := interp.FromFloat64(ir.Float32, []int64{rows, 3}, xs)
		want, err := interp.Run(ref, []interp.Value{x}, interp.Options{})
		if err != nil {
			t.Fatalf("interpreter: %v", err)
		}
		got, err := run.Run(f, []interp.Value{x}, run.Options{})
		if err != nil {
			t.Fatalf("rows %d: run: %v", rows, err)
		}
		if len(got) != len(want.Outputs) {
			t.Fatalf("rows %d: %d outputs, want %d", rows, len(got), len(want.Outputs))
		}
		for i := range got {
			g, w := got[i].(*interp.Tensor), want.Outputs[i].(*interp.Tensor)
			if !equalShape(g.Shape, w.Shape) || !equalFloats(g.Float64s(), w.Float64s()) {
				t.Errorf("rows %d, output %d: .pte %v %v, interpreter %v %v", rows, i, g.Shape, g.Float64s(), w.Shape, w.Float64s())
			}
		}
	}
}

func equalShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
