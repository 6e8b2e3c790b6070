package emit_test

import (
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// higher_order.while_loop is emitted inline (initial moves, cond_fn,
// JumpFalseCall to the exit, body_fn, moves back into the carried slots, a
// jump back); the loop runs to the interpreter's result for several trip
// counts, including zero iterations.
func TestEmitWhileLoopRuns(t *testing.T) {
	ref, f := exportRun(t, "while_sum", `graph forward(%start: i64[], %n: i64[], %x: f32[4], %y: f32[4]) {
  %while_loop: i64[], %while_loop_1: f32[4] = higher_order.while_loop(^cond_graph_0, ^body_graph_0, [%start, %y], [%n, %x])
  ^cond_graph_0(%i: i64[], %acc: f32[4], %lim: i64[], %step: f32[4]) {
    %le: b8[] = aten.le.Tensor(%i, %lim)
    return %le
  }
  ^body_graph_0(%i: i64[], %acc: f32[4], %lim: i64[], %step: f32[4]) {
    %inc: i64[] = aten.add.Scalar(%i, 1)
    %m: f32[4] = aten.mul.Tensor(%acc, %step)
    %s: f32[4] = aten.add.Tensor(%m, %step)
    return %inc, %s
  }
  %out: f32[4] = aten.add.Tensor(%while_loop_1, %x)
  return %while_loop, %out
}
`)
	if got := countInstr(f, etfb.InstructionArgumentsJumpFalseCall); got != 2 {
		t.Errorf("%d JumpFalseCall instructions, want 2", got)
	}
	if got := countInstr(f, etfb.InstructionArgumentsMoveCall); got != 4 {
		t.Errorf("%d MoveCall instructions, want 4", got)
	}
	x := interp.FromFloat64(ir.Float32, []int64{4}, []float64{1.5, -0.5, 2, 0.25})
	y := interp.FromFloat64(ir.Float32, []int64{4}, []float64{1, 2, -3, 4})
	// The loop runs while the counter (from 1) is at most n: n iterations.
	one := interp.FromFloat64(ir.Int64, []int64{}, []float64{1})
	for _, n := range []int64{0, 1, 5} {
		nv := interp.FromFloat64(ir.Int64, []int64{}, []float64{float64(n)})
		compareRun(t, "n="+itoa(n), ref, f, []interp.Value{one, nv, x, y})
	}
}
