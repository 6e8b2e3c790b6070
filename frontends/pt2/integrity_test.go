package pt2

import (
	"archive/zip"
	"fmt"
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
	// A source spelled in IR text knows no CRC: its check reads the
	// archive's directory, and fails the same way.
	path2 := filepath.Join(t.TempDir(), "flipped2.pt2")
	if err := os.WriteFile(path2, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	parsed := &Source{Archive: path2, Entry: src.Entry, Offset: src.Offset, Len: src.Len}
	if _, err := parsed.Open(); err == nil || !strings.Contains(err.Error(), path2) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("flipped payload byte, source from IR text: %v, want a checksum error naming %s", err, path2)
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

// The span check of the sources the reader makes agrees with archive/zip's
// on every weight entry of a torch-written archive (entries with data
// descriptors), intact and with a byte flipped in the data or in the
// descriptor.
func TestSpanCRCMatchesArchiveZip(t *testing.T) {
	descriptors := 0
	for _, fixture := range []string{"testdata/archive_2_9.pt2", "testdata/releases/torch-2.14.1/state.pt2"} {
		descriptors += spanCRCMatchesArchiveZip(t, fixture)
	}
	if descriptors == 0 {
		t.Fatal("no entry with a data descriptor in the fixtures")
	}
}

func spanCRCMatchesArchiveZip(t *testing.T, fixture string) (descriptors int) {
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	a, err := openZip(bytesReaderAt(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	checked := 0
	for i, name := range a.order {
		f := a.files[name]
		if f.Method != zip.Store || f.UncompressedSize64 == 0 {
			continue
		}
		off, end := a.data[name], a.data[name]+int64(f.UncompressedSize64)
		flips := []int64{-1, off, end - 1}
		if f.Flags&0x8 != 0 {
			// Past the data only where a descriptor lies there (else the
			// flip hits the next header, and the archive does not read).
			descriptors++
			flips = append(flips, end, end+1, end+4, end+5, end+8)
		}
		for j, at := range flips {
			bad := append([]byte(nil), data...)
			if at >= 0 {
				bad[at] ^= 0x10
			}
			path := filepath.Join(dir, fmt.Sprintf("a%d_%d.pt2", i, j))
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			src := a.withCRC(&Source{}, name)
			if !src.hasCRC {
				t.Fatalf("%s: stored entry without a span check", name)
			}
			got := checkSpanCRC(path, name, src.entryAt, src.entrySize, src.crc, src.descriptor)
			want := checkCRC(path, name)
			if (got == nil) != (want == nil) {
				t.Errorf("%s, byte %d flipped: span check %v, archive/zip %v", name, at, got, want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatalf("%s: no stored entries", fixture)
	}
	return descriptors
}
