package openvino

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeAtomic leaves neither the file nor a temporary file behind when the
// streaming writer fails, and leaves an existing file untouched.
func TestWriteAtomicLeavesNothingOnFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.pte")
	err := writeAtomic(path, func(w io.Writer) error {
		io.WriteString(w, "half a file")
		return errors.New("source went away")
	})
	if err == nil || !strings.Contains(err.Error(), "source went away") {
		t.Fatalf("err = %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %d files behind (%s)", len(ents), ents[0].Name())
	}
	if err := writeAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "old"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(path, func(w io.Writer) error { return errors.New("fails") }); err == nil {
		t.Fatal("a failing writer succeeded")
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "old" {
		t.Errorf("after a failed write the file is %q, %v; want the old bytes", got, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the directory, want 1", len(ents))
	}
}
