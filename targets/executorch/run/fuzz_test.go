package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/internal/testenv"
)

// FuzzRunPTE: loading and running a .pte (decode, summary, run.Load, the
// default inputs, Execute; a .bpte's test cases) never panics — a panic a
// recover turned into an error counts — and every error names the file.
// Seeded with every genuine .pte and .bpte.
func FuzzRunPTE(f *testing.F) {
	defer boundInterp()()
	dir := testenv.Shared(f, "testdata/pte")
	files, _ := filepath.Glob(filepath.Join(dir, "*.*pte"))
	if len(files) == 0 {
		f.Fatalf("no genuine .pte files in %s", dir)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) <= 64<<10 { // the large ones slow every iteration
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o := tryPTE("fuzz.pte", data, hostileOptions)
		switch {
		case o.panic != "":
			t.Fatalf("panic: %s", o.panic)
		case o.err != nil && strings.Contains(o.err.Error(), "panic"):
			t.Fatalf("%s: a recovered panic: %v", o.stage, o.err)
		case o.err != nil && !strings.Contains(o.err.Error(), "fuzz.pte"):
			t.Fatalf("%s: the error does not name the file: %v", o.stage, o.err)
		}
	})
}
