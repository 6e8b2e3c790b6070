package torchtags

import (
	"bytes"
	"testing"

	"github.com/fxport/fxport/internal/testenv"
)

// TestTagListIsFresh regenerates gen/torchtags.spec from the installed
// torch and compares it with the committed file.
func TestTagListIsFresh(t *testing.T) {
	want := testenv.FreshFromPython(t, "gen/torchtags/torchtags.py", "gen/torchtags.spec",
		"stale for the installed torch: run make kernels (then go generate ./ir)")
	for _, op := range [][]byte{[]byte("aten.mul.Scalar pointwise"), []byte("aten.add.Tensor pointwise")} {
		if !bytes.Contains(want, op) {
			t.Fatalf("%s missing: torch's pointwise tags not read", op)
		}
	}
}
