package emit_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/run"
)

// exportRun lowers src, emits and re-decodes it, and returns the reference
// (unlowered) program with the decoded file.
func exportRun(t *testing.T, name, src string) (*ir.Program, *pte.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".fxir")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ref, err := ir.Parse([]byte(src), path)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := emit.Program(lower(t, path), emit.Options{NoMetadataMethod: true})
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	b, err := pte.Encode(ef)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pte.Decode(name+".pte", b)
	if err != nil {
		t.Fatal(err)
	}
	return ref, f
}

// compareRun runs the .pte and the interpreter on inputs and compares the
// tensor outputs exactly.
func compareRun(t *testing.T, what string, ref *ir.Program, f *pte.File, inputs []interp.Value) {
	t.Helper()
	compareRunOpts(t, what, ref, f, inputs, run.Options{})
}

// compareRunOpts is compareRun with runner options (e.g. AliasingMoves).
func compareRunOpts(t *testing.T, what string, ref *ir.Program, f *pte.File, inputs []interp.Value, opts run.Options) {
	t.Helper()
	want, err := interp.Run(ref, inputs, interp.Options{})
	if err != nil {
		t.Fatalf("%s: interpreter: %v", what, err)
	}
	got, err := run.Run(f, inputs, opts)
	if err != nil {
		t.Fatalf("%s: run: %v", what, err)
	}
	if len(got) != len(want.Outputs) {
		t.Fatalf("%s: %d outputs, want %d", what, len(got), len(want.Outputs))
	}
	for i := range got {
		g, w := got[i].(*interp.Tensor), want.Outputs[i].(*interp.Tensor)
		if !equalShape(g.Shape, w.Shape) || !equalFloats(g.Float64s(), w.Float64s()) {
			t.Errorf("%s, output %d: .pte %v %v, interpreter %v %v", what, i, g.Shape, g.Float64s(), w.Shape, w.Float64s())
		}
	}
}

// countInstr counts the instructions of kind k in the method's chain.
func countInstr(f *pte.File, k etfb.InstructionArguments) int {
	n := 0
	for _, in := range f.Program.ExecutionPlan[0].Chains[0].Instructions {
		if in.InstrArgs.Type == k {
			n++
		}
	}
	return n
}

// higher_order.cond is emitted inline with JumpFalseCall / MoveCall; both
// branches run to the interpreter's result, with a bool-tensor predicate
// and with a SymBool computed from a dynamic size.
func TestEmitCondRunsBothBranches(t *testing.T) {
	ref, f := exportRun(t, "cond_tensor", `graph forward(%p: b8[], %x: f32[4], %y: f32[4]) {
  %cond: f32[4] = higher_order.cond(%p, ^true_graph_0, ^false_graph_0, [%x, %y])
  ^true_graph_0(%a: f32[4], %b: f32[4]) {
    %m: f32[4] = aten.mul.Tensor(%a, %b)
    %s: f32[4] = aten.add.Tensor(%m, %a)
    return %s
  }
  ^false_graph_0(%a: f32[4], %b: f32[4]) {
    %n: f32[4] = aten.neg.default(%b)
    return %n
  }
  %out: f32[4] = aten.mul.Tensor(%cond, %x)
  return %out
}
`)
	if countInstr(f, etfb.InstructionArgumentsJumpFalseCall) != 2 || countInstr(f, etfb.InstructionArgumentsMoveCall) != 2 {
		t.Fatalf("want 2 JumpFalseCall and 2 MoveCall instructions")
	}
	// Region values are planned in the arena (no slots past it): %p, %x,
	// %y live across the cond, %m, the storage %s, %n and %cond share, and
	// %out in a dead slot: 5 × 16 bytes.
	if got := f.Program.ExecutionPlan[0].NonConstBufferSizes; len(got) != 2 || got[1] != 80 {
		t.Errorf("non_const_buffer_sizes %v, want [0 80]", got)
	}
	x := interp.FromFloat64(ir.Float32, []int64{4}, []float64{1, -2, 3, 0.5})
	y := interp.FromFloat64(ir.Float32, []int64{4}, []float64{2, 5, -1, 4})
	for _, b := range []bool{true, false} {
		p := interp.FromFloat64(ir.Bool, []int64{}, []float64{map[bool]float64{true: 1, false: 0}[b]})
		compareRun(t, map[bool]string{true: "true branch", false: "false branch"}[b], ref, f, []interp.Value{p, x, y})
	}

	ref, f = exportRun(t, "cond_symbool", `symbol s0: [2, 8] hint 4
graph forward(%x: f32[s0]) {
  %sym_size: Sym(s0) = aten.sym_size.int(%x, 0)
  %gt: SymBool(s0 > 4) = operator.gt(%sym_size, 4)
  %cond: f32[s0] = higher_order.cond(%gt, ^true_graph_0, ^false_graph_0, [%x])
  ^true_graph_0(%a: f32[s0]) {
    %m: f32[s0] = aten.mul.Tensor(%a, %a)
    return %m
  }
  ^false_graph_0(%a: f32[s0]) {
    %n: f32[s0] = aten.neg.default(%a)
    return %n
  }
  return %cond
}
`)
	for _, n := range []int64{3, 6} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i) - 1.5
		}
		compareRun(t, "size "+itoa(n), ref, f, []interp.Value{interp.FromFloat64(ir.Float32, []int64{n}, xs)})
	}
}
