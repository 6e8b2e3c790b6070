package run

import (
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// TestOverlappingPlanComputesWrongNumbers moves the first add's output
// (a + a, i64) onto the planned window of input b, which the second add
// still reads: with a real arena the first write clobbers b.
func TestOverlappingPlanComputesWrongNumbers(t *testing.T) {
	f := readGenuine(t, "ecn_portable_add_i64_f32.pte")
	in := func() []interp.Value {
		return []interp.Value{interp.FromInt64(ir.Int64, []int64{1}, []int64{21}), f32([]int64{1}, -1.25)}
	}
	outs, err := Run(f, in(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "b+b (original plan)", outs[1], []int64{1}, []float64{-2.5}, 0)

	plan := f.Program.ExecutionPlan[0]
	tensorOf := func(vi int32) *etfb.TensorT { return plan.Values[vi].Val.Value.(*etfb.TensorT) }
	b, out0 := tensorOf(plan.Inputs[1]), tensorOf(plan.Outputs[0])
	if b.AllocationInfo == nil || out0.AllocationInfo == nil {
		t.Fatal("expected planned input and output")
	}
	if *b.AllocationInfo == *out0.AllocationInfo {
		t.Fatal("already overlapping")
	}
	*out0.AllocationInfo = *b.AllocationInfo
	data, err := pte.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := pte.Decode("overlapping.pte", data)
	if err != nil {
		t.Fatal(err)
	}
	outs, err = Run(g, in(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := outs[1].(*interp.Tensor).Float64s()[0]
	if got == -2.5 {
		t.Fatalf("b+b = %v with b's window overwritten by a+a: the arena is not shared", got)
	}
	// b's low 4 bytes now hold int64(42): b reads as the float32 with bits 42.
	want := 2 * float64(float32FromBits(42))
	if got != want {
		t.Errorf("b+b = %v, want %v (b clobbered by the i64 result 42)", got, want)
	}
}
