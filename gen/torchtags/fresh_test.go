package torchtags

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/internal/testenv"
)

// TestTagListIsFresh regenerates gen/torchtags.spec from the installed
// torch and compares it with the committed file.
func TestTagListIsFresh(t *testing.T) {
	py := testenv.Python(t)
	root := testenv.Root(t)
	out := filepath.Join(t.TempDir(), "torchtags.spec")
	cmd := exec.Command(py, filepath.Join(root, "gen", "torchtags", "torchtags.py"), "-o", out)
	cmd.Env = append(os.Environ(), "PYTHONWARNINGS=ignore")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("torchtags.py: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "gen", "torchtags.spec"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("gen/torchtags.spec is stale for the installed torch: run make kernels (then go generate ./ir)")
	}
	for _, op := range [][]byte{[]byte("aten.mul.Scalar pointwise"), []byte("aten.add.Tensor pointwise")} {
		if !bytes.Contains(want, op) {
			t.Fatalf("%s missing: torch's pointwise tags not read", op)
		}
	}
}
