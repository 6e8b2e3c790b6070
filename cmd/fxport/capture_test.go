package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/internal/testenv"
)

// One command takes a model from its Python factory to ONNX and to .pte:
// fxport capture --target runs the export after the capture, and its report
// lists the capture steps that fired.
func TestCaptureThenExport(t *testing.T) {
	testenv.Python(t)
	root := testenv.Root(t)
	dir := t.TempDir()
	var stdout, stderr strings.Builder
	rc := run([]string{"capture", "--model", filepath.Join(root, "capture", "testdata", "tiny_attention.py") + ":tiny_attention",
		"-o", dir, "--target", "onnx,executorch-portable,executorch-xnnpack"}, &stdout, &stderr)
	if rc != 0 {
		t.Fatalf("exit %d\n%s\n%s", rc, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "capture steps:") || !strings.Contains(stdout.String(), "DYN-S09  torch-export-call        fired") {
		t.Errorf("the capture report does not list the steps that fired:\n%s", stdout.String())
	}
	for _, f := range []string{"program.pt2", "model.onnx", "model.executorch-portable.pte", "model.executorch-xnnpack.pte"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

// A bad --target is refused before anything is captured.
func TestCaptureTargetRefused(t *testing.T) {
	if _, err := captureTargets("onnx,nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("captureTargets(onnx,nope) = %v, want the unknown target named", err)
	}
	rest, target, err := captureTarget([]string{"--hf", "gpt2", "--target=onnx", "-o", "d"})
	if err != nil || target != "onnx" || strings.Join(rest, " ") != "--hf gpt2 -o d" {
		t.Errorf("captureTarget = %v %q %v", rest, target, err)
	}
	if _, _, err := captureTarget([]string{"--target"}); err == nil {
		t.Error("--target without a value accepted")
	}
}
