package ort

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func touch(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFindLibraryOutsideTheCheckout: the library is found next to the
// executable, in ../lib, in an active virtual environment's onnxruntime,
// and in a checkout's venv; with none, the error says what to do and where
// it looked.
func TestFindLibraryOutsideTheCheckout(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "work")
	touch(t, filepath.Join(outside, "model.pt2"))

	exe := filepath.Join(dir, "a", "bin", "fxport")
	want := touch(t, filepath.Join(dir, "a", "bin", "libonnxruntime.so.1.31.1"))
	if got, err := findLibrary(exe, outside, ""); err != nil || got != want {
		t.Errorf("next to the executable: got %q, %v; want %q", got, err, want)
	}
	exe = filepath.Join(dir, "b", "bin", "fxport")
	want = touch(t, filepath.Join(dir, "b", "lib", "libonnxruntime.so"))
	if got, err := findLibrary(exe, outside, ""); err != nil || got != filepath.Join(dir, "b", "bin", "..", "lib", "libonnxruntime.so") {
		t.Errorf("in ../lib: got %q, %v; want %q", got, err, want)
	}
	venv := filepath.Join(dir, "venv")
	want = touch(t, filepath.Join(venv, "lib", "python3.12", "site-packages", "onnxruntime", "capi", "libonnxruntime.so.1.31.1"))
	if got, err := findLibrary(filepath.Join(dir, "c", "fxport"), outside, venv); err != nil || got != want {
		t.Errorf("in $VIRTUAL_ENV: got %q, %v; want %q", got, err, want)
	}
	checkout := filepath.Join(dir, "checkout")
	touch(t, filepath.Join(checkout, "go.mod"))
	want = touch(t, filepath.Join(checkout, "third_party", "venv", "lib", "python3.11", "site-packages", "onnxruntime", "capi", "libonnxruntime.so.1.31.1"))
	if got, err := findLibrary(filepath.Join(checkout, "bin", "fxport"), outside, ""); err != nil || got != want {
		t.Errorf("in the executable's checkout venv: got %q, %v; want %q", got, err, want)
	}
	_, err := findLibrary(filepath.Join(dir, "d", "fxport"), outside, "")
	if err == nil || !strings.Contains(err.Error(), "$"+EnvLibrary) || !strings.Contains(err.Error(), filepath.Join(dir, "d", "libonnxruntime.so*")) {
		t.Errorf("nothing installed: got %v", err)
	}
}
