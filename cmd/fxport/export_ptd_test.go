package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
	etrun "github.com/fxport/fxport/targets/executorch/run"
)

const mulAdd = "../../targets/executorch/emit/testdata/external_mul_add.fxir"

// --external-constants writes OUT.pte with EXTERNAL constants and OUT.ptd
// holding them; fxport run finds OUT.ptd beside OUT.pte (or takes --data)
// and fails, naming the key, without it.
func TestExportExternalConstants(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.pte")
	_, errOut, code := fxport(t, "export", mulAdd, "--target", "executorch-portable", "--external-constants", "-o", out)
	require.Equal(t, 0, code, errOut)
	f, err := pte.Read(out)
	require.NoError(t, err)
	var fqns []string
	for _, v := range f.Program.ExecutionPlan[0].Values {
		if x, ok := v.Val.Value.(*etfb.TensorT); ok && x.ExtraTensorInfo != nil && x.ExtraTensorInfo.Location == etfb.TensorDataLocationEXTERNAL {
			fqns = append(fqns, x.ExtraTensorInfo.FullyQualifiedName)
		}
	}
	require.Equal(t, []string{"a", "b"}, fqns)
	d, err := pte.ReadPTD(filepath.Join(dir, "m.ptd"))
	require.NoError(t, err)
	require.Len(t, d.Tensors, 2)
	require.Equal(t, "a", d.Tensors[0].Key)

	// a = 3, b = 2: the seeded input x gives 3x + 2.
	stdout, errOut, code := fxport(t, "run", out)
	require.Equal(t, 0, code, errOut)
	x := etrun.Seeded(ir.Float32, []int64{2, 2}, 0).Float64s()
	want := make([]float64, len(x))
	for i, v := range x {
		want[i] = float64(float32(3)*float32(v) + float32(2))
	}
	require.Equal(t, "output 0: "+interp.Describe(interp.FromFloat64(ir.Float32, []int64{2, 2}, want))+"\n", stdout)
	stdout2, errOut, code := fxport(t, "run", out, "--data", filepath.Join(dir, "m.ptd"))
	require.Equal(t, 0, code, errOut)
	require.Equal(t, stdout, stdout2)

	require.NoError(t, os.Rename(filepath.Join(dir, "m.ptd"), filepath.Join(dir, "elsewhere.ptd")))
	_, errOut, code = fxport(t, "run", out)
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, `external data "a"`)
	_, errOut, code = fxport(t, "run", out, "--data", filepath.Join(dir, "missing.ptd"))
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "missing.ptd")

	// Without the flag everything stays in the .pte.
	plain := filepath.Join(dir, "plain.pte")
	_, errOut, code = fxport(t, "export", mulAdd, "--target", "executorch-portable", "-o", plain)
	require.Equal(t, 0, code, errOut)
	_, err = os.Stat(filepath.Join(dir, "plain.ptd"))
	require.True(t, os.IsNotExist(err), "plain.ptd written without --external-constants")
}

// XNNPACK: --external-delegate-data moves the delegates' weights to the
// .ptd too; the pair runs.
func TestExportExternalDelegateData(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.pte")
	_, errOut, code := fxport(t, "export", example, "--target", "executorch-xnnpack", "--external-constants", "--external-delegate-data", "-o", out)
	require.Equal(t, 0, code, errOut)
	f, err := pte.Read(out)
	require.NoError(t, err)
	require.Empty(t, f.Program.NamedData)
	d, err := pte.ReadPTD(filepath.Join(dir, "x.ptd"))
	require.NoError(t, err)
	require.NotEmpty(t, d.Tensors)
	_, errOut, code = fxport(t, "run", out)
	require.Equal(t, 0, code, errOut)
}

// When the .ptd cannot be put in place, neither file is written and no
// temporary file is left behind.
func TestExportExternalConstantsAtomic(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.pte")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "m.ptd", "occupied"), 0o755))
	_, errOut, code := fxport(t, "export", mulAdd, "--target", "executorch-portable", "--external-constants", "-o", out)
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "m.ptd")
	_, err := os.Stat(out)
	require.True(t, os.IsNotExist(err), "m.pte written although m.ptd failed")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.Contains(e.Name(), ".tmp"), "temporary file %s left", e.Name())
	}
}
