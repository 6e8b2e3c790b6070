package etkernels

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/internal/testenv"
)

// TestKernelListIsFresh regenerates gen/etkernels.spec from the installed
// executorch and torch and compares it with the committed file.
func TestKernelListIsFresh(t *testing.T) {
	py := testenv.Python(t)
	root := testenv.Root(t)
	out := filepath.Join(t.TempDir(), "etkernels.spec")
	cmd := exec.Command(py, filepath.Join(root, "gen", "etkernels", "etkernels.py"), "-o", out)
	cmd.Env = append(os.Environ(), "PYTHONWARNINGS=ignore")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("etkernels.py: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "gen", "etkernels.spec"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("gen/etkernels.spec is stale for the installed executorch: run make kernels (then go generate ./ir)")
	}
	if n := bytes.Count(want, []byte("lib=portable")); n < 150 {
		t.Fatalf("only %d portable kernels listed", n)
	}
}
