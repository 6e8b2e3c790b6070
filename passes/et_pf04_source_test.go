package passes

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/fxport/fxport/ir"
)

func TestContiguousSourceReorders(t *testing.T) {
	// Six 2-byte elements 0..5, viewed as shape [3, 2] with strides [1, 3]:
	// row-major element (i, j) is storage[i + 3j].
	inner := &ir.InlineSource{Data: []byte{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}}
	s, err := newContiguousSource(inner, 2, []int64{3, 2}, []int64{1, 3}, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 0, 3, 3, 1, 1, 4, 4, 2, 2, 5, 5}
	r, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	// One byte at a time: elements split across reads must come out whole.
	got, err := io.ReadAll(iotest.OneByteReader(r))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || s.Size() != int64(len(want)) {
		t.Fatalf("got %v (size %d), want %v", got, s.Size(), want)
	}
	// The spelling parses back to a source yielding the same bytes.
	back, err := ir.ParseWeightSource(s.String())
	if err != nil {
		t.Fatal(err)
	}
	if back.String() != s.String() {
		t.Fatalf("round trip: %s != %s", back, s)
	}
	r2, _ := back.Open()
	got2, _ := io.ReadAll(r2)
	if !bytes.Equal(got2, want) {
		t.Fatalf("parsed source gives %v", got2)
	}
}

func TestContiguousSourceRejectsOutOfBounds(t *testing.T) {
	inner := &ir.InlineSource{Data: make([]byte, 8)}
	_, err := newContiguousSource(inner, 4, []int64{2, 2}, []int64{1, 2}, 0)
	if err == nil || !strings.Contains(err.Error(), "needs 16 bytes") {
		t.Fatalf("want an out-of-bounds error, got %v", err)
	}
	if _, err := ir.ParseWeightSource(`contiguous(src="inline(\"00\")", itemsize=4)`); err == nil {
		t.Fatal("a spelling without shape parsed")
	}
}
