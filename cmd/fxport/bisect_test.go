package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/interp/npy"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// plantedBug is a wrong pass (neg becomes relu) in a test-only catalog.
func plantedBug(t *testing.T) *pm.Catalog {
	t.Helper()
	cat := pm.NewCatalog()
	neg := ir.MustLookupOp("aten.neg.default")
	require.NoError(t, cat.AddPass(&pm.Pass{
		Name:  "planted-neg-bug",
		Doc:   "rewrite neg as relu (wrong on purpose, tests only)",
		Kind:  pm.KindTransform,
		Stage: pm.StageStateCleanup,
		Run: func(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
			changed := false
			for _, n := range p.Main.Nodes() {
				if n.Op != neg {
					continue
				}
				b := ir.NewBuilder(n.Graph)
				b.SetInsertBefore(n)
				b.Pass = "planted-neg-bug"
				v, err := b.Value(ir.MustLookupOp("aten.relu.default"), n.Args[0])
				if err != nil {
					return pm.Result{}, err
				}
				n.Result().ReplaceAllUsesWith(v)
				if err := n.Erase(); err != nil {
					return pm.Result{}, err
				}
				changed = true
			}
			return pm.Result{Changed: changed}, nil
		},
	}))
	old := bisectCatalog
	bisectCatalog = func() *pm.Catalog { return cat }
	t.Cleanup(func() { bisectCatalog = old })
	return cat
}

const bisectProgram = `symbol s0: [2, 16] hint 3
graph forward(%x: f32[s0, 2]) {
  %neg: f32[s0, 2] = aten.neg.default(%x)
  %exp: f32[s0, 2] = aten.exp.default(%neg)
  return %exp
}
`

func writeProgram(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "program.fxir")
	require.NoError(t, os.WriteFile(path, []byte(bisectProgram), 0o644))
	return path
}

func TestBisectNamesPlantedPass(t *testing.T) {
	plantedBug(t)
	prog := writeProgram(t)
	out, errOut, code := fxport(t, "bisect", prog, "--pipeline", "dynamo: dynamo.state-cleanup(planted-neg-bug)")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, out, `first disagreeing pass: #1 "planted-neg-bug"`)
	require.Contains(t, out, "aten.relu.default")
	require.Contains(t, errOut, "disagrees")
}

func TestBisectAgainstTorchOutputs(t *testing.T) {
	plantedBug(t)
	prog := writeProgram(t)
	dir := filepath.Join(t.TempDir(), "case")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "io"), 0o755))
	x := interp.FromFloat64(ir.Float32, []int64{3, 2}, []float64{1, -1, 0.5, 2, -3, 0})
	want := make([]float64, 6)
	for i, v := range x.Float64s() {
		want[i] = float64(float32(mathExp(-v)))
	}
	require.NoError(t, npy.WriteFile(filepath.Join(dir, "io", "input_0.npy"), x))
	require.NoError(t, npy.WriteFile(filepath.Join(dir, "io", "output_0.npy"), interp.FromFloat64(ir.Float32, []int64{3, 2}, want)))
	out, errOut, code := fxport(t, "bisect", prog, "--pipeline", "dynamo: dynamo.state-cleanup(planted-neg-bug)", "--io", dir)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, out, "torch's outputs in "+dir)
	require.Contains(t, out, `"planted-neg-bug"`)

	// The default dynamo pipeline keeps the program's meaning.
	bisectCatalog = func() *pm.Catalog { return pm.Default }
	out, errOut, code = fxport(t, "bisect", prog, "--target", "dynamo", "--inputs", dir)
	require.Equal(t, 0, code, errOut)
	require.True(t, strings.Contains(out, "no disagreement"), out)
}

func TestBisectUsage(t *testing.T) {
	_, errOut, code := fxport(t, "bisect")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "usage")
	_, errOut, code = fxport(t, "bisect", example)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--target")
}

func mathExp(x float64) float64 { return math.Exp(x) }
