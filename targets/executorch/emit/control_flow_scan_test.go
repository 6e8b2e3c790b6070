package emit_test

import (
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/run"
)

// higher_order.scan is emitted as a counted loop (counter reset, initial
// carry copies, lt/JumpFalseCall head, select_copy of each xs row, the
// combine body, et_copy_index of each step output, carry copies back, the
// counter increment, a jump back); it runs to the interpreter's result
// under both MoveCall semantics. A map_impl is the same loop without
// carries.
//
// The exclusive cumulative sum returns the carry input itself as the step
// output: the row must be written before the carry copy overwrites the
// slot. The body reads %carry after writing %next, so a carry slot that
// aliased a body output would be overwritten early.
func TestEmitScanRuns(t *testing.T) {
	x := interp.FromFloat64(ir.Float32, []int64{4, 3}, []float64{1, 2, 3, -4, 5, 0.5, 7, -8, 9, 0.25, 11, -12})
	init := interp.FromFloat64(ir.Float32, []int64{3}, []float64{10, 20, 30})
	w := interp.FromFloat64(ir.Float32, []int64{3}, []float64{0.5, -1, 2})
	cases := []struct {
		name, src string
		inputs    []interp.Value
	}{
		{"scan_cumsum", `graph forward(%x: f32[4,3], %init: f32[3]) {
  %scan: f32[3], %scan_1: f32[4,3] = higher_order.scan(^combine_graph_0, [%init], [%x], [])
  ^combine_graph_0(%carry: f32[3], %row: f32[3]) {
    %next: f32[3] = aten.add.Tensor(%carry, %row)
    %m: f32[3] = aten.mul.Tensor(%next, %carry)
    %out: f32[3] = aten.add.Tensor(%m, %carry)
    return %out, %carry
  }
  %sum: f32[3] = aten.add.Tensor(%scan, %init)
  return %sum, %scan_1
}
`, []interp.Value{x, init}},
		{"scan_additional", `graph forward(%x: f32[4,3], %init: f32[3], %w: f32[3]) {
  %scan: f32[3], %scan_1: f32[4,3], %scan_2: f32[4,3] = higher_order.scan(^combine_graph_0, [%init], [%x, %x], [%w])
  ^combine_graph_0(%carry: f32[3], %row: f32[3], %row2: f32[3], %weight: f32[3]) {
    %scaled: f32[3] = aten.mul.Tensor(%carry, %weight)
    %next: f32[3] = aten.add.Tensor(%scaled, %row)
    %y: f32[3] = aten.sub.Tensor(%next, %row2)
    return %next, %next, %y
  }
  return %scan, %scan_1, %scan_2
}
`, []interp.Value{x, init, w}},
		{"map_impl", `graph forward(%x: f32[4,3], %w: f32[3]) {
  %map: f32[4,3], %map_1: f32[4] = higher_order.map_impl(^body_graph_0, [%x], [%w])
  ^body_graph_0(%row: f32[3], %weight: f32[3]) {
    %m: f32[3] = aten.mul.Tensor(%row, %weight)
    %s: f32[] = aten.sum.dim_IntList(%m, [0])
    return %m, %s
  }
  return %map, %map_1
}
`, []interp.Value{x, w}},
	}
	for _, c := range cases {
		ref, f := exportRun(t, c.name, c.src)
		if got := countInstr(f, etfb.InstructionArgumentsJumpFalseCall); got != 2 {
			t.Errorf("%s: %d JumpFalseCall instructions, want 2", c.name, got)
		}
		if got := countKernel(f, "aten::select_copy", "int_out"); got < 1 {
			t.Errorf("%s: no aten::select_copy.int_out kernel call", c.name)
		}
		if got := countKernel(f, "executorch_prim::et_copy_index", "tensor"); got < 1 {
			t.Errorf("%s: no executorch_prim::et_copy_index kernel call", c.name)
		}
		for _, alias := range []bool{false, true} {
			what := c.name
			if alias {
				what += ", aliasing MoveCall"
			}
			compareRunOpts(t, what, ref, f, c.inputs, run.Options{AliasingMoves: alias})
		}
	}
}
