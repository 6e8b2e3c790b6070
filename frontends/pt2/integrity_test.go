package pt2

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A flipped byte in a stored weight payload fails the CRC check when the
// weight is read, with an error naming the archive and the entry.
func TestWeightCRCChecked(t *testing.T) {
	const a9 = "testdata/archive_2_9.pt2"
	p, err := Read(a9)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Weights) == 0 {
		t.Fatal("no weights in the fixture")
	}
	data, err := os.ReadFile(a9)
	if err != nil {
		t.Fatal(err)
	}
	w := p.Weights[0]
	src, ok := w.Source.(*Source)
	if !ok {
		t.Fatalf("weight source %T", w.Source)
	}
	// The intact archive reads.
	rc, err := src.Open()
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, rc)
	rc.Close()
	a, err := openZip(bytesReaderAt(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	off, _, err := a.stored(src.Entry)
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), data...)
	bad[off+src.Offset] ^= 0x40
	path := filepath.Join(t.TempDir(), "flipped.pt2")
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	q, err := Read(path)
	if err != nil {
		t.Fatal(err) // the program reads; the weight bytes are checked when read
	}
	_, err = q.Weight(w.Name).Source.Open()
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), src.Entry) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("flipped payload byte: %v, want a checksum error naming %s and %s", err, path, src.Entry)
	}
}

// An archive without its weights config is refused, naming the parameter.
func TestMissingWeightsConfigRefused(t *testing.T) {
	const root = "archive_2_9/"
	var kept []zentry
	for _, e := range entriesOf(t, "testdata/archive_2_9.pt2") {
		if strings.HasPrefix(e.name, root+"data/weights/") {
			continue
		}
		kept = append(kept, e)
	}
	path := filepath.Join(t.TempDir(), "noweights.pt2")
	if err := os.WriteFile(path, buildZip(t, kept), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Read(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "no stored data") {
		t.Fatalf("archive without weights: %v", err)
	}
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
