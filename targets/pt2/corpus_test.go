package pt2

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fxport/fxport/ir"
)

// TestCorpus reads every tests/corpus/*/program.pt2 (real archives written
// by tools/fxgen), verifies it (result types re-inferred) and prints it, checks that the IR text parses
// back, writes it with this package and reads it again: the IR must not
// change (weights compared by their bytes).
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob("../../tests/corpus/*/program.pt2")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no tests/corpus/*/program.pt2: the corpus is committed, this must not happen")
	}
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(file)), func(t *testing.T) {
			p := read(t, file)
			// Types too: every recorded result type must agree with the op
			// table's shape/dtype rules.
			if err := ir.VerifyWith(p, ir.VerifyOptions{Types: true}); err != nil {
				t.Fatal(err)
			}
			text := ir.Print(p)
			q, err := ir.Parse([]byte(text), file)
			if err != nil {
				t.Fatalf("printed IR does not parse: %v", err)
			}
			if d := cmp.Diff(text, ir.Print(q)); d != "" {
				t.Fatalf("printed IR does not round-trip:\n%s", d)
			}
			out := filepath.Join(t.TempDir(), "program.pt2")
			write(t, p, out)
			p2 := read(t, out)
			if d := cmp.Diff(canonical(t, p, true), canonical(t, p2, true)); d != "" {
				t.Fatalf("pt2 → IR → pt2 → IR changed the program (-before +after):\n%s", d)
			}
		})
	}
}
