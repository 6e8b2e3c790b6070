package emit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/run"
)

// A scan over xs whose leading dim is the symbol s0 (in [2, 8]): the trip
// count is sym_size.int(xs, 0), the stacked output f32[s0, 3] is planned at
// its upper bound (8 rows) and emitted DYNAMIC_BOUND, and before the loop
// it is sized to the trip count (zeros.out with [sym_size, 3]): ExecuTorch's
// et_copy_index only ever grows copy_to, so without this the result kept
// its 8 bound rows (the .pte returned f32[8, 3] for 5 rows). The .pte runs at several sizes, the bound included,
// to the interpreter's results under both MoveCall semantics; the same
// method runs again at a smaller size (a stale larger shape would show).
func TestEmitScanDynamicLeadingDim(t *testing.T) {
	ref, f := exportRun(t, "scan_dynamic", `symbol s0: [2, 8] hint 4
graph forward(%x: f32[s0, 3], %init: f32[3]) {
  %scan: f32[3], %scan_1: f32[s0, 3], %scan_2: f32[s0] = higher_order.scan(^combine_graph_0, [%init], [%x], [])
  ^combine_graph_0(%carry: f32[3], %row: f32[3]) {
    %next: f32[3] = aten.add.Tensor(%carry, %row)
    %m: f32[3] = aten.mul.Tensor(%next, %row)
    %s: f32[] = aten.sum.dim_IntList(%m, [0])
    return %next, %m, %s
  }
  %out: f32[3] = aten.mul.Tensor(%scan, %init)
  return %out, %scan_1, %scan_2
}
`)
	if got := countKernel(f, "aten::sym_size", "int"); got != 1 {
		t.Errorf("%d aten::sym_size.int kernel calls (the trip count), want 1", got)
	}
	if got := countKernel(f, "aten::zeros", "out"); got != 2 {
		t.Errorf("%d aten::zeros.out kernel calls, want 2 (one per dynamic stacked output)", got)
	}
	plan := f.Program.ExecutionPlan[0]
	for _, oi := range plan.Outputs[1:] {
		tt, ok := plan.Values[oi].Val.Value.(*etfb.TensorT)
		if !ok || tt.ShapeDynamism != etfb.TensorShapeDynamismDYNAMIC_BOUND || tt.Sizes[0] != 8 {
			t.Fatalf("stacked output value %d: %+v, want a DYNAMIC_BOUND tensor of 8 rows", oi, plan.Values[oi].Val.Value)
		}
	}
	init := interp.FromFloat64(ir.Float32, []int64{3}, []float64{1, -2, 0.5})
	for _, alias := range []bool{false, true} {
		m, err := run.Load(f, run.Options{AliasingMoves: alias})
		if err != nil {
			t.Fatal(err)
		}
		for _, rows := range []int64{5, 2, 8, 3} {
			xs := make([]float64, rows*3)
			for i := range xs {
				xs[i] = float64(i%7) - 2.5
			}
			x := interp.FromFloat64(ir.Float32, []int64{rows, 3}, xs)
			want, err := interp.Run(ref, []interp.Value{x, init}, interp.Options{})
			if err != nil {
				t.Fatalf("interpreter: %v", err)
			}
			got, err := m.Execute([]interp.Value{x, init})
			if err != nil {
				t.Fatalf("rows %d (aliasing moves %v): run: %v", rows, alias, err)
			}
			for i := range got {
				g, w := got[i].(*interp.Tensor), want.Outputs[i].(*interp.Tensor)
				if !equalShape(g.Shape, w.Shape) || !equalFloats(g.Float64s(), w.Float64s()) {
					t.Errorf("rows %d (aliasing moves %v), output %d: .pte %v %v, interpreter %v %v", rows, alias, i, g.Shape, g.Float64s(), w.Shape, w.Float64s())
				}
			}
		}
	}
}

// A stacked output whose row dims are symbolic cannot be sized before the
// loop: emission fails naming the node and the dim (no file).
func TestEmitScanSymbolicRowDimRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scan_rows.fxir")
	src := `symbol s0: [2, 8] hint 4
symbol s1: [1, 4] hint 2
graph forward(%x: f32[s0, s1]) {
  %map: f32[s0, s1] = higher_order.map_impl(^body_graph_0, [%x], [])
  ^body_graph_0(%row: f32[s1]) {
    %r: f32[s1] = aten.relu.default(%row)
    return %r
  }
  return %map
}
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := emit.Program(lower(t, path), emit.Options{NoMetadataMethod: true})
	if err == nil || !strings.Contains(err.Error(), "row dim 1") || !strings.Contains(err.Error(), "%map") {
		t.Fatalf("emit error %v, want one naming %%map and its symbolic row dim", err)
	}
}
