// Package testenv finds the tools and data that fxport's tests judge with —
// the repository root, the project's Python environment (genuine torch,
// ExecuTorch, onnx, ONNX Runtime), the shared genuine files — and decides
// what a test does when one is missing: outside CI it skips with the install
// step to run; under CI (CI=true) it fails with the same words, so a test
// never passes by skipping there.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fxport/fxport/internal/checkout"
)

// InCI reports whether the tests run under CI (the environment variable CI
// is "true" or "1").
func InCI() bool {
	v := strings.ToLower(strings.TrimSpace(os.Getenv("CI")))
	return v == "true" || v == "1"
}

// Missing stops tb because what it needs is missing: a failure under CI, a
// skip elsewhere. install is the command that provides it (e.g. "make venv").
func Missing(tb testing.TB, what, install string) {
	tb.Helper()
	msg := fmt.Sprintf("%s is missing; `%s` installs it", what, install)
	if InCI() {
		tb.Fatalf("%s (CI=true: a missing tool or data file fails the test)", msg)
	}
	tb.Skip(msg)
}

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// RootDir returns the repository root: the nearest directory above the
// working directory that holds go.mod.
func RootDir() (string, error) {
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		if rootDir = checkout.Root(dir); rootDir == "" {
			rootErr = fmt.Errorf("no go.mod above the working directory")
		}
	})
	return rootDir, rootErr
}

// Root returns the repository root or fails tb.
func Root(tb testing.TB) string {
	tb.Helper()
	dir, err := RootDir()
	if err != nil {
		tb.Fatalf("repository root: %v", err)
	}
	return dir
}

// VenvPython is the interpreter of the project's Python environment:
// $FXPORT_PYTHON when set, else third_party/venv/bin/python under the
// repository root. It reports "" when neither exists.
func VenvPython() string {
	if p := os.Getenv("FXPORT_PYTHON"); p != "" {
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
		return ""
	}
	root, err := RootDir()
	if err != nil {
		return ""
	}
	return checkout.VenvPython(root)
}

// Python returns the project's Python environment or stops tb (Missing)
// with the step that makes it.
func Python(tb testing.TB) string {
	tb.Helper()
	p := VenvPython()
	if p == "" {
		Missing(tb, "the project's Python environment (third_party/venv: torch, executorch, onnx, onnxruntime)", "make venv")
	}
	return p
}

// SharedDir returns the shared folder beside the checkout ($FXPORT_SHARED,
// else ../shared or ./shared from the repository root) joined with sub, or
// "" when it is not there.
func SharedDir(sub string) string {
	var cands []string
	if s := os.Getenv("FXPORT_SHARED"); s != "" {
		cands = append(cands, s)
	}
	if root, err := RootDir(); err == nil {
		cands = append(cands, filepath.Join(root, "..", "shared"), filepath.Join(root, "shared"))
	}
	for _, c := range cands {
		p := filepath.Join(c, sub)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// Shared returns SharedDir(sub) or stops tb (Missing).
func Shared(tb testing.TB, sub string) string {
	tb.Helper()
	p := SharedDir(sub)
	if p == "" {
		Missing(tb, "the shared folder's "+sub+" (../shared beside the checkout)", "place the project's shared/ folder beside the checkout or set FXPORT_SHARED")
	}
	return p
}

// Tool returns the path of a command on PATH or stops tb (Missing).
func Tool(tb testing.TB, name, install string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(tb, name, install)
	}
	return p
}

// FreshFromPython runs script (a path under the checkout root) in the
// project's Python environment with "-o" and a temporary file, and fails tb
// unless what it writes equals committed (a path under the root): the check
// that a file generated from the installed packages is fresh. stale is the
// failure message (what to run to regenerate). It returns what the script
// wrote.
func FreshFromPython(tb testing.TB, script, committed, stale string) []byte {
	tb.Helper()
	py := Python(tb)
	root := Root(tb)
	out := filepath.Join(tb.TempDir(), filepath.Base(committed))
	cmd := exec.Command(py, filepath.Join(root, script), "-o", out)
	cmd.Env = append(os.Environ(), "PYTHONWARNINGS=ignore")
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%s: %v\n%s", script, err, msg)
	}
	fresh, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, committed))
	if err != nil {
		tb.Fatal(err)
	}
	if string(got) != string(fresh) {
		tb.Fatalf("%s: %s", committed, stale)
	}
	return fresh
}
