package xnnpack_test

import (
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/run"
)

// TestGenuineScalarConstant: x * 2.0 with a dynamic n exported from
// hand-written IR has the structure of exir's file field by field: the 2.0
// is a 0-d constant in the constant segment passed to the delegate as its
// second runtime input ([x, c, out]), the I/O tensors are DYNAMIC_BOUND at
// their upper bound, the XNNPACK values have the upper-bound dims, and the
// planned offsets and arena (64 bytes of XNNPACK padding) are exir's.
func TestGenuineScalarConstant(t *testing.T) {
	dir := genuineDir(t)
	ours, _ := export(t, filepath.Join("testdata", "mul_scalar_dynamic.fxir"))
	want, err := pte.Read(filepath.Join(dir, "ecn_xnnpack_mul_scalar_dynamic_bound.pte"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(describe(t, want, true), describe(t, ours, true)); diff != "" {
		t.Errorf("structure differs (-genuine +ours):\n%s", diff)
	}
	if diff := cmp.Diff(planOf(want), planOf(ours)); diff != "" {
		t.Errorf("memory plan differs (-genuine +ours):\n%s", diff)
	}
	// The constant's bytes are the constant segment's, not named data.
	if len(ours.Program.NamedData) != 0 {
		t.Errorf("named data %v, want none (the scalar is a runtime input)", ours.Program.NamedData)
	}
	c := ours.Methods[0].Plan.Values[0].Val.Value.(*etfb.TensorT)
	if got := ours.Segments[0].Data[:4]; math.Float32frombits(uint32(got[0])|uint32(got[1])<<8|uint32(got[2])<<16|uint32(got[3])<<24) != 2 || c.DataBufferIdx != 1 {
		t.Errorf("constant buffer %d holds %x, want 2.0", c.DataBufferIdx, got)
	}
}

// planOf lists each planned tensor's (mem id, offset) and the arena sizes.
func planOf(f *pte.File) []string {
	var out []string
	m := f.Methods[0].Plan
	for _, s := range m.NonConstBufferSizes {
		out = append(out, "arena "+strconv.FormatInt(s, 10))
	}
	for i, v := range m.Values {
		if x, ok := v.Val.Value.(*etfb.TensorT); ok && x.AllocationInfo != nil {
			off := uint64(x.AllocationInfo.MemoryOffsetHigh)<<32 | uint64(x.AllocationInfo.MemoryOffsetLow)
			out = append(out, "%"+strconv.Itoa(i)+" @"+strconv.Itoa(int(x.AllocationInfo.MemoryId))+"+"+strconv.FormatUint(off, 10))
		}
	}
	return out
}

// TestNumericScalarConstantDynamic runs the exported x * 2.0 at several
// lengths within the bound: the runtime input c reaches XNNPACK as a
// broadcast [1] operand and the result has the input's length.
func TestNumericScalarConstantDynamic(t *testing.T) {
	ours, _ := export(t, filepath.Join("testdata", "mul_scalar_dynamic.fxir"))
	for _, n := range []int64{1, 3, 8} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Sin(float64(3*i+1)) * 4
		}
		outs, err := run.Run(ours, []interp.Value{interp.FromFloat64(ir.Float32, []int64{n}, xs)}, run.Options{})
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		got := outs[0].(*interp.Tensor)
		if len(got.Shape) != 1 || got.Shape[0] != n {
			t.Fatalf("n=%d: output shape %v", n, got.Shape)
		}
		for i, g := range got.Float64s() {
			if w := float64(float32(xs[i])) * 2; g != w {
				t.Fatalf("n=%d: out[%d] = %g, want %g", n, i, g, w)
			}
		}
	}
}
