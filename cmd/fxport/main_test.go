package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// crashPass fails on purpose when the program carries meta "test.crash";
// the tests use it to exercise error reporting, reproducers and replay.
var crashPass = pm.RegisterPass(&pm.Pass{
	Name: "test-crash",
	Kind: pm.KindTransform,
	Doc:  "panic when the program asks for it (tests only)\n\nPanics on a program whose meta has test.crash, naming its first node.",
	Run: func(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
		if _, ok := p.Meta.Get("test.crash"); ok {
			panic("deliberate crash on " + p.Main.First().Short())
		}
		return pm.Result{}, nil
	},
})

func fxport(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return out.String(), errb.String(), code
}

const example = "../../examples/mlp/program.fxir"

func TestPassesMarkdownIsFresh(t *testing.T) {
	want, err := os.ReadFile("../../docs/passes.md")
	require.NoError(t, err)
	// The test-only pass above is registered in this binary; leave it out.
	got := strings.ReplaceAll(passesMarkdown(pm.Targets()), "| transform | `test-crash` | panic when the program asks for it (tests only) |\n", "")
	if d := cmp.Diff(string(want), got); d != "" {
		t.Fatalf("docs/passes.md is stale: run `make generate` (-want +got):\n%s", d)
	}
}

func TestPassesListsEveryStage(t *testing.T) {
	out, _, code := fxport(t, "passes")
	require.Equal(t, 0, code)
	for _, target := range pm.Targets() {
		stages, err := pm.Stages(target)
		require.NoError(t, err)
		for _, s := range stages {
			require.Contains(t, out, s.Qualified())
		}
	}
	for _, name := range []string{"fix-detach-inplace", "where-promote", "drop-unused-weights", "ONNX-FX03"} {
		require.Contains(t, out, name)
	}
	_, errOut, code := fxport(t, "passes", "--target", "nope")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "nope")
}

func TestParsePrintsIR(t *testing.T) {
	out, _, code := fxport(t, "parse", example)
	require.Equal(t, 0, code)
	src, err := os.ReadFile(example)
	require.NoError(t, err)
	p, err := ir.Parse(src, example)
	require.NoError(t, err)
	require.Equal(t, ir.Print(p), out)
}

func TestParseReportsFileAndLine(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.fxir")
	require.NoError(t, os.WriteFile(bad, []byte("graph f(%x: f32[2]) {\n  %y: f32[2] = aten.nope.default(%x)\n  return %y\n}\n"), 0o644))
	_, errOut, code := fxport(t, "parse", bad)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "bad.fxir:2:")
	require.Contains(t, errOut, `unknown op "aten.nope.default"`)
}

func TestExportAllTargetsIsDeterministic(t *testing.T) {
	dir1, dir2 := t.TempDir(), t.TempDir()
	for _, d := range []string{dir1, dir2} {
		_, errOut, code := fxport(t, "export", example, "--target", "all", "-o", d, "--verify-each")
		require.Equal(t, 0, code, errOut)
	}
	for _, tgt := range exportTargets {
		name := "program." + tgt.String() + ".fxir"
		a, err := os.ReadFile(filepath.Join(dir1, name))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(dir2, name))
		require.NoError(t, err)
		require.Equal(t, a, b, name)
		p, err := ir.Parse(a, name)
		require.NoError(t, err)
		require.NoError(t, ir.VerifyWith(p, ir.VerifyOptions{Types: true}))
	}
	onnx, err := os.ReadFile(filepath.Join(dir1, "program.onnx.fxir"))
	require.NoError(t, err)
	require.NotContains(t, string(onnx), "aten.detach_")
	require.NotContains(t, string(onnx), "aten.alias")
	require.NotContains(t, string(onnx), "b_num_batches")
}

func TestExportFailureWritesNothingAndAReproducer(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(example)
	require.NoError(t, err)
	crashing := filepath.Join(dir, "crash.fxir")
	require.NoError(t, os.WriteFile(crashing, append([]byte("meta \"test.crash\" = \"yes\"\n"), src...), 0o644))
	out := filepath.Join(dir, "out.fxir")
	repro := filepath.Join(dir, "repro.fxir")
	_, errOut, code := fxport(t, "export", crashing, "--target", "onnx", "-o", out,
		"--pipeline", "onnx: onnx.fx-node-fixes(onnx-node-fixes, test-crash)", "--reproducer", repro)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `pass "test-crash"`)
	require.Contains(t, errOut, "deliberate crash")
	_, statErr := os.Stat(out)
	require.True(t, errors.Is(statErr, os.ErrNotExist), "no output may be written on failure")
	// The reproducer replays the failure.
	_, errOut, code = fxport(t, "replay", repro)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, `pass "test-crash"`)
}

func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	_, errOut, code := fxport(t, "export", example, "--target", "tflite", "-o", filepath.Join(dir, "x.fxir"))
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unknown target "tflite"`)
	_, errOut, code = fxport(t, "export", example, "--target", "executorch-xnnpack", "-o", filepath.Join(dir, "x.onnx"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "want a .fxir or .pte file")
	_, errOut, code = fxport(t, "export", example, "--target", "onnx", "-o", filepath.Join(dir, "x.fxir"), "--disable", "onnx-node-fixes")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "onnx-node-fixes")
	_, errOut, code = fxport(t, "export", example, "--target", "onnx", "-o", filepath.Join(dir, "x.fxir"), "--pipeline", "onnx: onnx.fx-node-fixes(no-such-pass)")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no-such-pass")
}

// executorch-portable writes a .pte that the reader decodes.
func TestExportExecuTorchPortable(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.pte")
	_, errOut, code := fxport(t, "export", example, "--target", "executorch-portable", "-o", out)
	require.Equal(t, 0, code, errOut)
	f, err := pte.Read(out)
	require.NoError(t, err)
	require.Equal(t, "forward", f.Program.ExecutionPlan[0].Name)
	require.NotEmpty(t, f.Program.ExecutionPlan[0].Chains[0].Instructions)
}

// executorch-xnnpack writes a .pte with an XNNPACK delegate the reader
// decodes (the MLP's linear+relu layers are delegated).
func TestExportExecuTorchXNNPACK(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.pte")
	_, errOut, code := fxport(t, "export", example, "--target", "executorch-xnnpack", "-o", out)
	require.Equal(t, 0, code, errOut)
	f, err := pte.Read(out)
	require.NoError(t, err)
	require.NotEmpty(t, f.Methods[0].Delegates)
	require.Equal(t, pte.XNNPACKBackendID, f.Methods[0].Delegates[0].ID)
	require.NotNil(t, f.Methods[0].Delegates[0].XNNPACK)
}

func TestExportExcludePatch(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.fxir")
	_, errOut, code := fxport(t, "export", example, "--target", "onnx", "-o", out, "--exclude-patch", "ONNX-P01")
	require.Equal(t, 0, code, errOut)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.NotContains(t, string(b), "where-promote")
}

func TestExportAllWritesOneNativeFilePerTarget(t *testing.T) {
	dir := t.TempDir()
	_, errOut, code := fxport(t, "export", example, "--target", "all", "-o", dir)
	require.Equal(t, 0, code, errOut)
	for _, name := range []string{"program.pt2", "program.onnx", "program.executorch-portable.pte", "program.executorch-xnnpack.pte"} {
		_, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err, name)
	}
	portable, err := os.ReadFile(filepath.Join(dir, "program.executorch-portable.pte"))
	require.NoError(t, err)
	xnn, err := os.ReadFile(filepath.Join(dir, "program.executorch-xnnpack.pte"))
	require.NoError(t, err)
	require.NotEqual(t, portable, xnn, "the xnnpack file must not overwrite the portable one")
}
