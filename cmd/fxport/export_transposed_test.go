package main

import (
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/internal/memstat"
)

// A portable export of a program whose large weight is used transposed
// (permute -> mm: the portable kernels take it contiguous, ET-PF04) streams
// that weight into the .pte: the process's peak memory grows by less than
// half the weight's size (before, the weight was read whole, with growing
// copies: about twice its size).
func TestPortableTransposedWeightStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 100 MB weight file")
	}
	dir := t.TempDir()
	const rows, cols = 4096, 6144
	size := int64(rows * cols * 4)
	bin := filepath.Join(dir, "w.bin")
	f, err := os.Create(bin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(f, rand.New(rand.NewSource(1)), size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "m.fxir")
	src := fmt.Sprintf(`input p_w: parameter "w"
input x: user_input
output user_output
weight "w": f32[%d, %d] = file(%q, offset=0, size=%d)

graph forward(%%p_w: f32[%d, %d], %%x: f32[1, %d]) {
  %%t: f32[%d, %d] = aten.permute.default(%%p_w, [1, 0])
  %%mm: f32[1, %d] = aten.mm.default(%%x, %%t)
  return %%mm
}
`, rows, cols, bin, size, rows, cols, cols, cols, rows, rows)
	if err := os.WriteFile(prog, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.pte")
	if err := memstat.ResetPeak(); err != nil {
		t.Skipf("peak memory cannot be measured here: %v", err)
	}
	base, err := memstat.PeakRSS()
	if err != nil {
		t.Skipf("peak memory cannot be measured here: %v", err)
	}
	if err := runExport([]string{prog, "--target", "executorch-portable", "-o", out}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	peak, err := memstat.PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() < size {
		t.Fatalf("the .pte has %d bytes, less than the weight's %d", st.Size(), size)
	}
	t.Logf("peak RSS rise %d MB for a %d MB weight", (peak-base)>>20, size>>20)
	if peak-base > size/2 {
		t.Errorf("peak RSS rose by %d MB exporting a %d MB transposed weight: it is not streamed", (peak-base)>>20, size>>20)
	}
}
