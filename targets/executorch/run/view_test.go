package run

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// viewProgram has static and symbolic views of planned values, a view of
// a view, a view of the user input, a view inside a cond branch and a
// returned view (kept as view_copy).
const viewProgram = `symbol s0: [2, 16] hint 4
graph forward(%p: b8[], %x: f32[s0, 6], %y: f32[4, 6]) {
  %relu: f32[s0, 6] = aten.relu.default(%x)
  %flat: f32[6*s0] = aten.view.default(%relu, [-1])
  %neg: f32[6*s0] = aten.neg.default(%flat)
  %vy: f32[24] = aten.view.default(%y, [24])
  %m: f32[24] = aten.mul.Tensor(%vy, %vy)
  %a: f32[2, 12] = aten.view.default(%m, [2, 12])
  %b: f32[3, 8] = aten.view.default(%a, [3, 8])
  %s: f32[3, 8] = aten.sigmoid.default(%b)
  %cond: f32[24] = higher_order.cond(%p, ^true_graph_0, ^false_graph_0, [%s])
  ^true_graph_0(%u: f32[3, 8]) {
    %v: f32[24] = aten.view.default(%u, [24])
    %w: f32[24] = aten.add.Tensor(%v, %v)
    return %w
  }
  ^false_graph_0(%u: f32[3, 8]) {
    %v: f32[24] = aten.view.default(%u, [24])
    %w: f32[24] = aten.neg.default(%v)
    return %w
  }
  %out: f32[4, 6] = aten.view.default(%cond, [4, 6])
  return %neg, %out
}
`

// TestETViewEmittedAndRun emits a program whose views
// replace-view-copy-with-view turns into et_view, checks the instructions
// exir writes (the static views elided, the symbolic one as operator
// executorch_prim::et_view with overload "default", arguments self, size,
// out; every view value planned at its base's offset), and runs
// the .pte against the interpreter on both branches, with moves copying
// and aliasing.
func TestETViewEmittedAndRun(t *testing.T) {
	p, err := ir.Parse([]byte(viewProgram), "views.fxir")
	if err != nil {
		t.Fatal(err)
	}
	ref := p.Clone()
	f, err := emitPTE(p, "views.pte")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(ir.Print(p), "executorch_prim.et_view.default("); got != 5 {
		t.Fatalf("%d et_views after lowering, want 5 (flat, vy, b, and the branch views; %%a is rebased away, %%out is returned):\n%s", got, ir.Print(p))
	}
	plan := f.Methods[0].Plan
	views := 0
	for _, ch := range plan.Chains {
		for _, in := range ch.Instructions {
			k, ok := in.InstrArgs.Value.(*etfb.KernelCallT)
			if !ok {
				continue
			}
			op := plan.Operators[k.OpIndex]
			if op.Name != "executorch_prim::et_view" {
				continue
			}
			views++
			if op.Overload != "default" {
				t.Errorf("et_view operator overload %q, want \"default\"", op.Overload)
			}
			if len(k.Args) != 3 {
				t.Fatalf("et_view with %d arguments, want self, size, out", len(k.Args))
			}
			self := plan.Values[k.Args[0]].Val.Value.(*etfb.TensorT)
			out := plan.Values[k.Args[2]].Val.Value.(*etfb.TensorT)
			if plan.Values[k.Args[1]].Val.Type != etfb.KernelTypesIntList {
				t.Errorf("et_view size is a %s value, want an IntList", etfb.EnumNamesKernelTypes[plan.Values[k.Args[1]].Val.Type])
			}
			if self.AllocationInfo == nil || out.AllocationInfo == nil || *self.AllocationInfo != *out.AllocationInfo {
				t.Errorf("et_view out planned at %+v, self at %+v: want the same storage", out.AllocationInfo, self.AllocationInfo)
			}
		}
	}
	// exir's _emit_view elides static, planned views: only %flat (f32[6*s0])
	// needs the kernel.
	if views != 1 {
		t.Errorf("%d et_view instructions, want 1 (the static views are elided)", views)
	}
	x := f32([]int64{5, 6}, ramp(30, -0.2)...)
	y := f32([]int64{4, 6}, ramp(24, 0.1)...)
	for _, pred := range []bool{true, false} {
		for _, alias := range []bool{false, true} {
			ins := []interp.Value{interp.FromInt64(ir.Bool, nil, []int64{b2i(pred)}), x, y}
			want, err := interp.Run(ref, ins, interp.Options{})
			if err != nil {
				t.Fatal(err)
			}
			outs, err := Run(f, ins, Options{AliasingMoves: alias})
			if err != nil {
				t.Fatalf("pred %v, aliasing moves %v: %v", pred, alias, err)
			}
			for i := range want.Outputs {
				if e := maxAbsErr(t, outs[i], want.Outputs[i].(*interp.Tensor)); e > 1e-6 {
					t.Errorf("pred %v, aliasing moves %v: output %d: max error %g", pred, alias, i, e)
				}
			}
		}
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// The runner's et_view points out at self's bytes: a later write to self
// shows through out, and bad calls fail with the kernel's checks.
func TestETViewAliasesBytes(t *testing.T) {
	m := &Method{vals: []any{
		&slot{index: 0, dt: ir.Float32, sizes: []int64{2, 3}, shape: []int64{2, 3}, dimOrder: []int{0, 1}, mem: make([]byte, 24), planned: true},
		intList{2},
		int64(-1),
		&slot{index: 3, dt: ir.Float32, sizes: []int64{6}, shape: []int64{6}, dimOrder: []int{0}},
		&slot{index: 4, dt: ir.Int64, sizes: []int64{6}, shape: []int64{6}, dimOrder: []int{0}},
		intList{6},
		int64(4),
	}}
	if err := m.etView(&etfb.KernelCallT{Args: []int32{0, 1, 3}}); err != nil {
		t.Fatal(err)
	}
	self, out := m.vals[0].(*slot), m.vals[3].(*slot)
	if err := self.write(f32([]int64{2, 3}, 1, 2, 3, 4, 5, 6)); err != nil {
		t.Fatal(err)
	}
	got, err := out.read()
	if err != nil {
		t.Fatal(err)
	}
	if g := got.Float64s(); len(g) != 6 || g[5] != 6 {
		t.Errorf("view reads %v after the base was written, want [1 … 6]", g)
	}
	for _, bad := range []struct {
		args []int32
		want string
	}{
		{[]int32{0, 1, 4}, "self is float32, out is int64"},
		{[]int32{0, 5, 3}, "view of [4] (4 elements) of a 6-element tensor"},
		{[]int32{0, 1}, "2 arguments, want self, size, out"},
	} {
		err := m.etView(&etfb.KernelCallT{Args: bad.args})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("args %v: error %v, want %q", bad.args, err, bad.want)
		}
	}
}

// With alloc-graph-input=false the view of a user input has no planned
// storage either: the kernel points it at the bytes bound at run time.
func TestETViewOfUnplannedInput(t *testing.T) {
	p, err := ir.Parse([]byte(`graph forward(%x: f32[4, 4]) {
  %v: f32[16] = aten.view.default(%x, [16])
  %n: f32[16] = aten.neg.default(%v)
  %w: f32[4, 4] = aten.view.default(%n, [4, 4])
  %e: f32[4, 4] = aten.exp.default(%w)
  return %e
}`), "unplanned.fxir")
	if err != nil {
		t.Fatal(err)
	}
	ref := p.Clone()
	pl, err := pm.ParsePipeline("executorch.portable: executorch.lowering(to-edge-views, replace-view-copy-with-view, to-out-variants, plan-memory{alloc-graph-input=false})")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
		t.Fatal(err)
	}
	ef, err := emit.Program(p, emit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := pte.Encode(ef)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pte.Decode("unplanned.pte", b)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(ir.Print(p), "et_view"); got != 2 {
		t.Fatalf("%d et_views, want 2:\n%s", got, ir.Print(p))
	}
	x := f32([]int64{4, 4}, ramp(16, 0.25)...)
	want, err := interp.Run(ref, []interp.Value{x}, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := Run(f, []interp.Value{x}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e := maxAbsErr(t, outs[0], want.Outputs[0].(*interp.Tensor)); e > 1e-6 {
		t.Errorf("max error %g", e)
	}
}
