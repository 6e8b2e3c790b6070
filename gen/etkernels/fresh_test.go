package etkernels

import (
	"bytes"
	"testing"

	"github.com/fxport/fxport/internal/testenv"
)

// TestKernelListIsFresh regenerates gen/etkernels.spec from the installed
// executorch and torch and compares it with the committed file.
func TestKernelListIsFresh(t *testing.T) {
	want := testenv.FreshFromPython(t, "gen/etkernels/etkernels.py", "gen/etkernels.spec",
		"stale for the installed executorch: run make kernels (then go generate ./ir)")
	if n := bytes.Count(want, []byte("lib=portable")); n < 150 {
		t.Fatalf("only %d portable kernels listed", n)
	}
}
