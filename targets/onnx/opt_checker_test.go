package onnx

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/frontends/pt2"
)

const (
	debianPython = "/usr/bin/python3"
	onnxcheckDir = "../../tools/onnxcheck"
)

// needOnnxPython skips unless Debian's python3-onnx is importable
// (`make onnx-python` installs it).
func needOnnxPython(t testing.TB) {
	t.Helper()
	if out, err := exec.Command(debianPython, "-c", "import onnx").CombinedOutput(); err != nil {
		t.Skipf("python3-onnx unavailable (%v: %s); `make onnx-python` installs it", err, strings.TrimSpace(string(out)))
	}
}

// TestOnnxCheckerCorpus writes every corpus program at opset 17 (the newest
// Debian's onnx 1.12 knows), optimized, and runs the full onnx.checker on it.
func TestOnnxCheckerCorpus(t *testing.T) {
	needOnnxPython(t)
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Skipf("no corpus: %v", err)
	}
	tmp := t.TempDir()
	var models []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p, err := pt2.Read(filepath.Join(corpusDir, e.Name(), "program.pt2"))
		if err != nil {
			t.Logf("%s: skipped, frontend cannot read it: %v", e.Name(), err)
			continue
		}
		runPipeline(t, p)
		m, err := Emit(p, Options{Opset: 17, ExternalThreshold: 64 << 10})
		var missing *MissingOpsError
		if errors.As(err, &missing) {
			t.Logf("%s: skipped, needs a newer opset: %v", e.Name(), err)
			continue
		}
		if err != nil {
			t.Fatalf("%s: emit: %v", e.Name(), err)
		}
		path := filepath.Join(tmp, e.Name()+".onnx")
		if err := m.Write(path); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		models = append(models, path)
	}
	if len(models) == 0 {
		t.Skip("no corpus program could be read")
	}
	out, err := exec.Command(debianPython, append([]string{filepath.Join(onnxcheckDir, "check.py")}, models...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("onnx.checker: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), ": ok"); n != len(models) {
		t.Fatalf("checker passed %d of %d models:\n%s", n, len(models), out)
	}
}

// TestOnnxCheckerCatchesBrokenModel makes sure the checker run can fail: a
// model whose node reads an undefined value is rejected.
func TestOnnxCheckerCatchesBrokenModel(t *testing.T) {
	needOnnxPython(t)
	p := runPipeline(t, loadExample(t))
	m, err := Emit(p, Options{Opset: 17})
	if err != nil {
		t.Fatal(err)
	}
	m.Proto.Graph.Node[len(m.Proto.Graph.Node)-1].Input[0] = "no_such_value"
	data, err := marshal(m.Proto)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "broken.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(debianPython, filepath.Join(onnxcheckDir, "check.py"), path).CombinedOutput()
	if err == nil {
		t.Fatalf("checker accepted a broken model:\n%s", out)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("checker: %v\n%s", err, out)
	}
}
