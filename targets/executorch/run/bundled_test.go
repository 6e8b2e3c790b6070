package run

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// Every test case of the genuine bundled program passes at ExecuTorch's
// default tolerances.
func TestRunBundledGenuine(t *testing.T) {
	f := readGenuine(t, "et_bundled_program_mul_add.bpte")
	res, err := RunBundled(f, BundledOptions{RTol: DefaultRTol, ATol: DefaultATol})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 10 {
		t.Fatalf("%d results, want 10", len(res))
	}
	for _, r := range res {
		if !r.Passed() || r.Method != "forward" {
			t.Errorf("%s case %d: %v", r.Method, r.Case, r.Err)
		}
	}
	if _, err := RunBundled(f, BundledOptions{Options: Options{Method: "nope"}}); err == nil || !strings.Contains(err.Error(), `no test suite for method "nope"`) {
		t.Errorf("unknown method: %v", err)
	}
	if _, err := RunBundled(readGenuine(t, "et_portable_add_f32x1.pte"), BundledOptions{}); err == nil || !strings.Contains(err.Error(), "not a bundled program") {
		t.Errorf("plain .pte: %v", err)
	}
}

// A corrupted expected output fails its case, named, with the element;
// the other cases still pass.
func TestRunBundledCorruptedExpectation(t *testing.T) {
	f := readGenuine(t, "et_bundled_program_mul_add.bpte")
	out := f.Bundled.TestSuites[0].Cases[3].ExpectedOutputs[0].Tensor
	data := append([]byte(nil), out.Data...)
	binary.LittleEndian.PutUint32(data[8:], 7) // element [1,0]: 2 → 7
	out.Data = data
	res, err := RunBundled(f, BundledOptions{RTol: DefaultRTol, ATol: DefaultATol})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Case != 3 {
			if !r.Passed() {
				t.Errorf("case %d: %v", r.Case, r.Err)
			}
			continue
		}
		want := "output 0: 1 of 4 elements differ (exact comparison for i32); first at [1,0]: got 2, want 7"
		if r.Passed() || r.Err.Error() != want {
			t.Errorf("case 3: %v, want %q", r.Err, want)
		}
	}
}

func f32Bundled(sizes []int32, order []uint8, vals ...float32) pte.BundledValue {
	data := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	return pte.BundledValue{Kind: pte.BundledTensor, Tensor: &pte.BundledTensorData{
		ScalarType: etfb.ScalarTypeFLOAT, Sizes: sizes, DimOrder: order, Data: data}}
}

// The comparison follows ExecuTorch's: |want − got| ≤ atol + |rtol·got|,
// NaN = NaN, equal infinities; dtype and shape must match.
func TestCompareBundled(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	got := interp.FromFloat64(ir.Float32, []int64{4}, []float64{1, nan, inf, 100})
	for _, tc := range []struct {
		name       string
		want       pte.BundledValue
		rtol, atol float64
		err        string
	}{
		{"equal", f32Bundled([]int32{4}, []uint8{0}, 1, float32(nan), float32(inf), 100), 0, 0, ""},
		{"within rtol", f32Bundled([]int32{4}, []uint8{0}, 1, float32(nan), float32(inf), 100.001), 1e-5, 0, ""},
		{"beyond rtol", f32Bundled([]int32{4}, []uint8{0}, 1, float32(nan), float32(inf), 100.01), 1e-5, 0, "1 of 4 elements differ beyond rtol 1e-05, atol 0"},
		{"within atol", f32Bundled([]int32{4}, []uint8{0}, 1.0001, float32(nan), float32(inf), 100), 0, 1e-3, ""},
		{"nan vs number", f32Bundled([]int32{4}, []uint8{0}, 1, 0, float32(inf), 100), 1, 1, "first at [1]: got NaN, want 0"},
		{"inf sign", f32Bundled([]int32{4}, []uint8{0}, 1, float32(nan), float32(-inf), 100), 1, 1, "first at [2]: got +Inf, want -Inf"},
		{"shape", f32Bundled([]int32{2, 2}, []uint8{0, 1}, 1, 2, 3, 4), 1, 1, "got f32[4], want f32[2,2]"},
		{"int", pte.BundledValue{Kind: pte.BundledInt, Int: 3}, 1, 1, "got f32[4]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CompareBundled(got, tc.want, tc.rtol, tc.atol)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("unexpected mismatch: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
	if _, err := CompareBundled(int64(3), pte.BundledValue{Kind: pte.BundledInt, Int: 3}, 0, 0); err != nil {
		t.Errorf("Int 3: %v", err)
	}
	if _, err := CompareBundled(true, pte.BundledValue{Kind: pte.BundledBool, Bool: false}, 0, 0); err == nil {
		t.Error("true matched Bool false")
	}
}

// A bundled tensor stored in a non-trivial dim order converts to the
// logical tensor.
func TestBundledValueDimOrder(t *testing.T) {
	// Logical [[1,2,3],[4,5,6]] stored column-major (dim order [1,0]).
	v, err := BundledValue(f32Bundled([]int32{2, 3}, []uint8{1, 0}, 1, 4, 2, 5, 3, 6))
	if err != nil {
		t.Fatal(err)
	}
	x := v.(*interp.Tensor)
	if got := x.Float64s(); len(x.Shape) != 2 || x.Shape[0] != 2 || x.Shape[1] != 3 || got[1] != 2 || got[3] != 4 {
		t.Errorf("shape %v values %v", x.Shape, got)
	}
	for _, st := range []etfb.ScalarType{etfb.ScalarTypeFLOAT, etfb.ScalarTypeLONG, etfb.ScalarTypeBOOL, etfb.ScalarTypeHALF} {
		dt, err := dtypeOf(st)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := ScalarTypeOf(dt); err != nil || back != st {
			t.Errorf("%s → %s → %s (%v)", st, dt, back, err)
		}
	}
}
