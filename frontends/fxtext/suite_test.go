package fxtext

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/internal/testenv"
)

// minSuiteParseRate is the share of the public-suite dumps that must parse.
const minSuiteParseRate = 0.95

// TestPublicSuiteDumps prints, with the venv's torch, the programs of the
// public test suites that ship inside the installed wheels (torch's ExportDB
// examples, its higher-order-op OpInfo database, ExecuTorch's exir test
// models) in every form, at the stages those suites print (torch.export, its
// core-ATen decomposition, the unflattened module, Dynamo's graph), and parses
// every dump without types. The dumps are made at test time and not
// committed: the programs are not the project's. Untyped dumps are retyped
// from torch's shape propagation and must infer the same types.
func TestPublicSuiteDumps(t *testing.T) {
	if testing.Short() {
		t.Skip("prints the public suites with torch (two to five minutes)")
	}
	// FXPORT_SUITE_DUMPS names a directory gen.py --suite printed earlier,
	// to iterate on the parser without re-running torch.
	dir := os.Getenv("FXPORT_SUITE_DUMPS")
	var out []byte
	if dir == "" {
		py := testenv.Python(t)
		root := testenv.Root(t)
		dir = t.TempDir()
		cmd := exec.Command(py, filepath.Join(root, "tools", "fxdumps", "gen.py"),
			"--suite", "exportdb,hop,exir", "--stages", "export,core,module,dynamo", "--out", dir)
		var err error
		if out, err = cmd.CombinedOutput(); err != nil {
			t.Fatalf("tools/fxdumps/gen.py --suite: %v\n%s", err, out)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	if len(files) < 300 {
		t.Fatalf("gen.py --suite printed only %d dumps:\n%s", len(files), out)
	}
	m := measureDumps(t, files)
	if got := float64(m.total.ok) / float64(m.total.all); got < minSuiteParseRate {
		t.Errorf("public-suite parse rate %s is below %.0f%%; the unread dumps are logged above with the line and what is missing", m.total, 100*minSuiteParseRate)
	}
	if m.compared == 0 {
		t.Error("no inferred type was compared with torch's: gen.py wrote no sidecars")
	}
}
