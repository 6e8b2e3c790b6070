package cuda

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writePair streams both files and renames them into place; when either
// writer fails, neither file nor any temporary file is left behind.
func TestWritePairStreamsAndLeavesNothingOnFailure(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "m.pte"), filepath.Join(dir, "m.ptd")
	text := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	broken := func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("source went away")
	}
	for _, c := range []struct {
		name   string
		wa, wb func(io.Writer) error
	}{{"pte fails", broken, text("ptd")}, {"ptd fails", text("pte"), broken}} {
		err := writePair(a, c.wa, b, c.wb)
		if err == nil || !strings.Contains(err.Error(), "source went away") {
			t.Fatalf("%s: err = %v", c.name, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("%s: left %d files behind (%s)", c.name, len(ents), ents[0].Name())
		}
	}
	if err := writePair(a, text("pte bytes"), b, text("ptd bytes")); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{a: "pte bytes", b: "ptd bytes"} {
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", path, got, err, want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d files in the directory, want the two outputs", len(ents))
	}
}
