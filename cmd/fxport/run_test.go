package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/interp/npy"
	"github.com/fxport/fxport/ir"
)

// fxport run executes a genuine .pte on .npy inputs and writes its outputs.
func TestRunPTE(t *testing.T) {
	pteFile := "../../../shared/testdata/pte/et_portable_add_f32x1.pte"
	if _, err := os.Stat(pteFile); err != nil {
		t.Skip("genuine .pte files not found")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, x := range []float64{1.5, 2.25} {
		if err := npy.WriteFile(filepath.Join(in, []string{"input_0.npy", "input_1.npy"}[i]), interp.FromFloat64(ir.Float32, []int64{1}, []float64{x})); err != nil {
			t.Fatal(err)
		}
	}
	stdout, errOut, code := fxport(t, "run", pteFile, "--inputs", in, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(stdout, "output 0: f32[1] [3.75]") {
		t.Errorf("stdout %q", stdout)
	}
	got, err := npy.ReadFile(filepath.Join(out, "output_0.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if v := got.Float64s()[0]; v != 3.75 {
		t.Errorf("output_0 = %v, want 3.75", v)
	}
	if _, errOut, code := fxport(t, "run", pteFile, "--method", "nope"); code == 0 || !strings.Contains(errOut, `no method "nope"`) {
		t.Errorf("unknown method: exit %d, %s", code, errOut)
	}
}
