package emit_test

import (
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/run"
)

// higher_order.while_loop is emitted inline (initial copies, cond_fn,
// JumpFalseCall to the exit, body_fn, copies back into the carried slots, a
// jump back); the loop runs to the interpreter's result for several trip
// counts, including zero iterations, under both MoveCall semantics: the
// runner's copying one and ExecuTorch's EValue assignment (AliasingMoves).
//
// The body is chosen so that aliasing would break it: a matmul writes %c,
// and a later kernel reads the carried %acc again. Were %acc's slot
// assigned a body output's tensor by a back-edge MoveCall, the next trip
// would overwrite %acc before its last reader runs. %y, the initial value of
// %acc, is read after the loop, so a slot aliasing it (an initial MoveCall)
// would let the back-edge copy overwrite it.
func TestEmitWhileLoopRuns(t *testing.T) {
	ref, f := exportRun(t, "while_cumsum", `graph forward(%start: i64[], %n: i64[], %x: f32[2,2], %y: f32[2,2]) {
  %while_loop: i64[], %while_loop_1: f32[2,2], %while_loop_2: f32[2,2] = higher_order.while_loop(^cond_graph_0, ^body_graph_0, [%start, %y, %x], [%n, %x])
  ^cond_graph_0(%i: i64[], %acc: f32[2,2], %b: f32[2,2], %lim: i64[], %step: f32[2,2]) {
    %le: b8[] = aten.le.Tensor(%i, %lim)
    return %le
  }
  ^body_graph_0(%i: i64[], %acc: f32[2,2], %b: f32[2,2], %lim: i64[], %step: f32[2,2]) {
    %inc: i64[] = aten.add.Scalar(%i, 1)
    %c: f32[2,2] = aten.mm.default(%acc, %step)
    %m: f32[2,2] = aten.mul.Tensor(%acc, %step)
    %s: f32[2,2] = aten.add.Tensor(%m, %c)
    %t: f32[2,2] = aten.add.Tensor(%b, %acc)
    return %inc, %s, %t
  }
  %out: f32[2,2] = aten.add.Tensor(%while_loop_1, %y)
  return %while_loop, %out, %while_loop_2
}
`)
	if got := countInstr(f, etfb.InstructionArgumentsJumpFalseCall); got != 2 {
		t.Errorf("%d JumpFalseCall instructions, want 2", got)
	}
	// The three carried values are tensors (the counter too): each is
	// copied in by aten::clone.out and back by another, never moved.
	if got := countInstr(f, etfb.InstructionArgumentsMoveCall); got != 0 {
		t.Errorf("%d MoveCall instructions, want 0", got)
	}
	if got := countKernel(f, "aten::clone", "out"); got != 6 {
		t.Errorf("%d aten::clone.out kernel calls, want 6", got)
	}
	x := interp.FromFloat64(ir.Float32, []int64{2, 2}, []float64{1.5, -0.5, 2, 0.25})
	y := interp.FromFloat64(ir.Float32, []int64{2, 2}, []float64{1, 2, -3, 4})
	// The loop runs while the counter (from 1) is at most n: n iterations.
	one := interp.FromFloat64(ir.Int64, []int64{}, []float64{1})
	for _, alias := range []bool{false, true} {
		for _, n := range []int64{0, 1, 2, 5} {
			nv := interp.FromFloat64(ir.Int64, []int64{}, []float64{float64(n)})
			what := "n=" + itoa(n)
			if alias {
				what += ", aliasing MoveCall"
			}
			compareRunOpts(t, what, ref, f, []interp.Value{one, nv, x, y}, run.Options{AliasingMoves: alias})
		}
	}
}

// countKernel counts the KernelCalls of operator name.overload.
func countKernel(f *pte.File, name, overload string) int {
	plan := f.Program.ExecutionPlan[0]
	n := 0
	for _, in := range plan.Chains[0].Instructions {
		if k, ok := in.InstrArgs.Value.(*etfb.KernelCallT); ok {
			if o := plan.Operators[k.OpIndex]; o.Name == name && o.Overload == overload {
				n++
			}
		}
	}
	return n
}
