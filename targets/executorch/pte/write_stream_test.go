package pte

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// Write streams exactly the bytes Encode returns, for every genuine file
// (portable, delegated, inline-constant, the bundled program's embedded
// one), both with the segments in memory and with every segment split into
// lazy pieces at their original offsets.
func TestWriteMatchesEncodeOnGenuineFiles(t *testing.T) {
	files := append(genuineFiles(t, "*.pte"), genuineFiles(t, "*.bpte")...)
	for _, path := range files {
		name := filepath.Base(path)
		if name == corruptFile {
			continue
		}
		t.Run(name, func(t *testing.T) {
			f, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Encode(f)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := Write(&got, f); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("Write wrote %d bytes that differ from Encode's %d", got.Len(), len(want))
			}
			lazy := *f
			lazy.Segments = splitSegments(f.Segments)
			got.Reset()
			if err := Write(&got, &lazy); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("Write with lazy pieces differs from Encode")
			}
			enc, err := Encode(&lazy)
			if err != nil || !bytes.Equal(enc, want) {
				t.Fatalf("Encode with lazy pieces differs (err %v)", err)
			}
		})
	}
}

// splitSegments turns each non-empty segment into pieces: the bytes cut
// into up to three runs, the zero bytes between runs left as gaps.
func splitSegments(segs []Segment) []Segment {
	out := make([]Segment, len(segs))
	for i, s := range segs {
		if len(s.Data) == 0 {
			out[i] = s
			continue
		}
		var pieces []Piece
		n := uint64(len(s.Data))
		cuts := []uint64{0, n / 3, 2 * n / 3, n}
		for k := 0; k+1 < len(cuts); k++ {
			lo, hi := cuts[k], cuts[k+1]
			for lo < hi && s.Data[lo] == 0 { // a leading zero run becomes a gap
				lo++
			}
			if lo == hi {
				continue
			}
			pieces = append(pieces, Piece{Offset: lo, Lazy: LazyBytes("run", s.Data[lo:hi])})
		}
		out[i] = Segment{Offset: s.Offset, Size: n, Pieces: pieces}
		if pieces == nil {
			out[i].Pieces = []Piece{}
		}
	}
	return out
}

// A piece yielding fewer or more bytes than it declares, or failing to
// open, fails the write with an error naming the segment and the piece.
func TestWriteRejectsBadPieces(t *testing.T) {
	f, err := Read(filepath.Join(genuineDir(t), "rs_portable_add_f32x1.pte"))
	if err != nil {
		t.Fatal(err)
	}
	short := func(n uint64) Lazy {
		l := LazyBytes("w", make([]byte, n))
		l.Size = 64
		l.Name = "w"
		return l
	}
	for _, c := range []struct {
		name  string
		piece Lazy
		want  string
	}{
		{"short", short(10), "segment 0, piece 0 (w): yields 10 bytes, declared 64"},
		{"long", short(65), "segment 0, piece 0 (w): yields more than the declared 64 bytes"},
		{"open", Lazy{Name: "w", Size: 64, Open: func() (io.ReadCloser, error) { return nil, errors.New("gone") }}, "segment 0, piece 0 (w): gone"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := *f
			g.Segments = []Segment{{Pieces: []Piece{{Lazy: c.piece}}}}
			err := Write(io.Discard, &g)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
			if _, err := Encode(&g); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Encode err = %v, want %q", err, c.want)
			}
		})
	}
	g := *f
	g.Segments = []Segment{{Size: 4, Pieces: []Piece{{Offset: 0, Lazy: LazyBytes("a", make([]byte, 8))}}}}
	if err := Write(io.Discard, &g); err == nil || !strings.Contains(err.Error(), "size 4 but its pieces end at 8") {
		t.Errorf("err = %v", err)
	}
	g.Segments = []Segment{{Pieces: []Piece{{Offset: 4, Lazy: LazyBytes("a", make([]byte, 8))}, {Offset: 8, Lazy: LazyBytes("b", make([]byte, 8))}}}}
	if err := Write(io.Discard, &g); err == nil || !strings.Contains(err.Error(), "piece 1 (b): offset 8 overlaps") {
		t.Errorf("err = %v", err)
	}
}

// The program is checked before the first byte is written: a file the
// reader would reject leaves w untouched.
func TestWriteChecksBeforeWriting(t *testing.T) {
	f, err := Read(filepath.Join(genuineDir(t), "rs_portable_add_f32x1.pte"))
	if err != nil {
		t.Fatal(err)
	}
	g := *f
	prog := *f.Program
	g.Program = &prog
	prog.ConstantSegment = &etfb.SubsegmentOffsetsT{SegmentIndex: 3, Offsets: []uint64{0, 0}} // no segment 3
	var out bytes.Buffer
	err = Write(&out, &g)
	if err == nil || !strings.Contains(err.Error(), "does not read back") {
		t.Fatalf("err = %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("%d bytes written before the check failed", out.Len())
	}
	if _, encErr := Encode(&g); encErr == nil {
		t.Errorf("Encode accepted what Write rejected")
	}
}

// WritePTD streams exactly what EncodePTDWith returns, with in-memory and
// lazy entries, shared or not, lazy digests given or hashed.
func TestWritePTDMatchesEncode(t *testing.T) {
	blob := func(n int, seed byte) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = seed + byte(i*7)
		}
		return b
	}
	in := []NamedTensor{
		{Key: "a", Data: blob(100, 1), HasLayout: true, Sizes: []int32{25}, DimOrder: []byte{0}},
		{Key: "b", Data: blob(3, 2), Alignment: 64},
		{Key: "c", Data: blob(100, 1)},
		{Key: "d", Data: blob(300, 9)},
	}
	for _, o := range []PTDOptions{{}, {SegmentAlignment: 16, ShareSegments: true}} {
		want, err := EncodePTDWith(in, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{"memory", "lazy", "lazy+digest"} {
			entries := append([]NamedTensor{}, in...)
			if mode != "memory" {
				for i := range entries {
					l := LazyBytes(entries[i].Key, entries[i].Data)
					if mode == "lazy+digest" {
						d, _ := entryDigest(entries[i])
						l.Digest = &d
					}
					entries[i].Data, entries[i].Lazy = nil, &l
				}
			}
			var got bytes.Buffer
			if err := WritePTD(&got, entries, o); err != nil {
				t.Fatalf("%s %+v: %v", mode, o, err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s %+v: WritePTD differs from EncodePTDWith", mode, o)
			}
			if enc, err := EncodePTDWith(entries, o); err != nil || !bytes.Equal(enc, want) {
				t.Errorf("%s %+v: EncodePTDWith of lazy entries differs (err %v)", mode, o, err)
			}
		}
	}
	bad := LazyBytes("d", blob(10, 0))
	bad.Size = 11
	err := WritePTD(io.Discard, []NamedTensor{{Key: "d", Lazy: &bad}}, PTDOptions{})
	if err == nil || !strings.Contains(err.Error(), `entry "d", segment 0 (d): yields 10 bytes, declared 11`) {
		t.Errorf("err = %v", err)
	}
}

// SegmentLazy reads a segment of pieces back with its gaps.
func TestSegmentLazy(t *testing.T) {
	s := Segment{Size: 12, Pieces: []Piece{{Offset: 2, Lazy: LazyBytes("a", []byte{1, 2})}, {Offset: 6, Lazy: LazyBytes("b", []byte{3})}}}
	l, err := SegmentLazy("seg", s)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := copyLazy(&b, l, make([]byte, 3), "seg"); err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 0, 1, 2, 0, 0, 3, 0, 0, 0, 0, 0}; !bytes.Equal(b.Bytes(), want) {
		t.Errorf("got %v, want %v", b.Bytes(), want)
	}
}
