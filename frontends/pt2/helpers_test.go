package pt2

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fxport/fxport/ir"
)

var update = flag.Bool("update", false, "rewrite the .golden files")

// originKeys are the metadata keys that say where a program was read from;
// they differ between layouts of the same program.
var originKeys = []string{MetaLayout, MetaSchemaVersion, MetaTorchVersion}

// canonical prints p with each weight source replaced by a hash of its
// bytes (sources name files, which differ between copies of a program) and,
// with dropOrigin, without the origin metadata.
func canonical(t testing.TB, p *ir.Program, dropOrigin bool) string {
	t.Helper()
	if dropOrigin {
		p = p.Clone()
		for _, k := range originKeys {
			p.Meta.Delete(k)
		}
	}
	hashes := map[string]string{}
	for _, w := range p.Weights {
		if w.Source == nil {
			continue
		}
		rc, err := w.Source.Open()
		if err != nil {
			t.Fatalf("weight %q: %v", w.Name, err)
		}
		h := sha256.New()
		n, err := io.Copy(h, rc)
		rc.Close()
		if err != nil {
			t.Fatalf("weight %q: %v", w.Name, err)
		}
		if n != w.Source.Size() {
			t.Fatalf("weight %q: source yielded %d bytes, declares %d", w.Name, n, w.Source.Size())
		}
		hashes[w.Source.String()] = "bytes(sha256=" + hex.EncodeToString(h.Sum(nil))[:16] + ")"
	}
	text := ir.Print(p)
	for src, h := range hashes {
		text = strings.ReplaceAll(text, src, h)
	}
	return text
}

// checkGolden compares got with a golden file (rewritten with -update).
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, d)
	}
}

// mustRead reads a .pt2 file or fails the test.
func mustRead(t testing.TB, path string) *ir.Program {
	t.Helper()
	p, err := Read(path)
	if err != nil {
		t.Fatalf("Read(%s): %v", path, err)
	}
	return p
}
