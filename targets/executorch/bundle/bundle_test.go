package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/interp/npy"
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
	etrun "github.com/fxport/fxport/targets/executorch/run"
)

func tensorDecl(st etfb.ScalarType, sizes []int32, order []uint8) *etfb.EValueT {
	return &etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesTensor, Value: &etfb.TensorT{ScalarType: st, Sizes: sizes, DimOrder: order}}}
}

func scalarDecl(k etfb.KernelTypes) *etfb.EValueT {
	return &etfb.EValueT{Val: &etfb.KernelTypesT{Type: k}}
}

// Tensors are laid out in the declared dim order and convert back to the
// same logical tensor; scalars take the declared kind.
func TestValue(t *testing.T) {
	x := interp.FromFloat64(ir.Float32, []int64{2, 3}, []float64{1, 2, 3, 4, 5, 6})
	v, err := Value(x, tensorDecl(etfb.ScalarTypeFLOAT, []int32{2, 3}, []uint8{1, 0}))
	if err != nil {
		t.Fatal(err)
	}
	if s := v.String(); s != "Tensor float[2,3] dim_order [1,0] [1 4 2 5 3 6]" {
		t.Errorf("bundled %s", s)
	}
	back, err := etrun.BundledValue(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := etrun.CompareBundled(back, v, 0, 0); err != nil {
		t.Error(err)
	}
	if got := back.(*interp.Tensor).Float64s(); got[1] != 2 || got[3] != 4 {
		t.Errorf("round trip %v", got)
	}
	for _, tc := range []struct {
		x    interp.Value
		decl *etfb.EValueT
		want string
	}{
		{x, tensorDecl(etfb.ScalarTypeINT, []int32{2, 3}, []uint8{0, 1}), "got f32[2 3], the method declares INT with sizes [2 3]"},
		{x, tensorDecl(etfb.ScalarTypeFLOAT, []int32{6}, []uint8{0}), "the method declares FLOAT with sizes [6]"},
		{int64(3), tensorDecl(etfb.ScalarTypeFLOAT, []int32{1}, []uint8{0}), "got 3 for a tensor"},
		{x, scalarDecl(etfb.KernelTypesInt), "a 6-element tensor for a Int"},
		{true, scalarDecl(etfb.KernelTypesInt), "a bool for an Int"},
		{int64(2), scalarDecl(etfb.KernelTypesBool), "for a Bool"},
		{int64(1), scalarDecl(etfb.KernelTypesString), "which a bundled program cannot hold"},
	} {
		if _, err := Value(tc.x, tc.decl); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s for %s: %v, want %q", interp.Describe(tc.x), tc.decl.Val.Type, err, tc.want)
		}
	}
	for _, tc := range []struct {
		x    interp.Value
		kind etfb.KernelTypes
		want pte.BundledValue
	}{
		{interp.ScalarInt0(ir.Int64, 7), etfb.KernelTypesInt, pte.BundledValue{Kind: pte.BundledInt, Int: 7}},
		{int64(1), etfb.KernelTypesBool, pte.BundledValue{Kind: pte.BundledBool, Bool: true}},
		{2.5, etfb.KernelTypesDouble, pte.BundledValue{Kind: pte.BundledDouble, Double: 2.5}},
	} {
		got, err := Value(tc.x, scalarDecl(tc.kind))
		if err != nil || got != tc.want {
			t.Errorf("%s as %s: %+v (%v), want %+v", interp.Describe(tc.x), tc.kind, got, err, tc.want)
		}
	}
}

// ReadDir reads inputs and optional outputs, from DIR or DIR/io.
func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	io := filepath.Join(dir, "io")
	if err := os.MkdirAll(io, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "no input_0.npy") {
		t.Errorf("empty dir: %v", err)
	}
	x := interp.FromFloat64(ir.Float32, []int64{2}, []float64{1, 2})
	for _, name := range []string{"input_0.npy", "input_1.npy", "input_3.npy"} {
		if err := npy.WriteFile(filepath.Join(io, name), x); err != nil {
			t.Fatal(err)
		}
	}
	c, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Dir != io || len(c.Inputs) != 2 || c.Outputs != nil {
		t.Errorf("case %+v", c)
	}
	if err := os.WriteFile(filepath.Join(io, "output_0.npy"), []byte("not npy"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "output_0.npy") {
		t.Errorf("corrupt output: %v", err)
	}
	if _, err := ReadDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing dir read")
	}
}

// Suite checks cases against the method and needs the program to compute
// missing outputs.
func TestSuiteErrors(t *testing.T) {
	path := "../../../../shared/testdata/pte/et_bundled_program_mul_add.bpte"
	if _, err := os.Stat(path); err != nil {
		t.Skip("genuine files not found")
	}
	f, err := pte.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	x := interp.FromInt64(ir.Int32, []int64{2, 2}, []int64{1, 2, 3, 4})
	for _, tc := range []struct {
		method string
		c      Case
		want   string
	}{
		{"forward", Case{Dir: "d", Inputs: []interp.Value{x}}, "test case 0 (d): 1 inputs, method forward takes 2"},
		{"forward", Case{Dir: "d", Inputs: []interp.Value{x, x}}, "0 expected outputs for 1 method outputs, and no program to compute the rest with"},
		{"forward", Case{Dir: "d", Inputs: []interp.Value{x, x}, Outputs: []interp.Value{x, x}}, "2 expected outputs, method forward returns 1"},
		{"backward", Case{Dir: "d", Inputs: []interp.Value{x, x}}, `no method "backward" (methods: [forward])`},
	} {
		if _, _, err := Suite(nil, f, tc.method, []Case{tc.c}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v, want %q", err, tc.want)
		}
	}
	s, origins, err := Suite(nil, f, "", []Case{{Dir: "d", Inputs: []interp.Value{x, x}, Outputs: []interp.Value{x}}})
	if err != nil || len(s.Cases) != 1 || origins[0] != FromFiles || s.Method != "forward" {
		t.Fatalf("%+v %v %v", s, origins, err)
	}
}
