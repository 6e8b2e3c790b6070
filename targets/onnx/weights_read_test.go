package onnx

import (
	"bytes"
	"io"
	"testing"
)

// readSized returns what io.ReadAll returns whatever the declared size:
// exact, larger or smaller than what the reader yields.
func TestReadSizedMatchesReadAll(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 1000)
	for _, n := range []int{0, 1, 4096, len(data)} {
		for _, declared := range []int64{0, -1, int64(n) - 1, int64(n), int64(n) + 1, int64(n) * 3} {
			got, err := readSized(bytes.NewReader(data[:n]), declared)
			want, _ := io.ReadAll(bytes.NewReader(data[:n]))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%d bytes declared %d: got %d bytes, err %v; want %d", n, declared, len(got), err, len(want))
			}
		}
	}
}
