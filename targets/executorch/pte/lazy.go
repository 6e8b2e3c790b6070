package pte

import (
	"bytes"
	"fmt"
	"io"
)

// Lazy is a run of bytes produced on demand — a weight read from its
// archive, for instance — so that writing a file never holds every weight
// in memory at once. Open returns a fresh reader over exactly Size bytes on
// every call; the writers check the count and fail, naming Name, when a
// reader yields more or fewer.
type Lazy struct {
	Name string // labels errors (a weight or key name)
	Size uint64
	Open func() (io.ReadCloser, error)
	// Digest is the sha256 of the bytes when the producer already knows it
	// (WritePTD's ShareSegments uses it instead of reading the bytes).
	Digest *[32]byte
}

// Piece is lazy bytes at Offset from the start of their segment.
type Piece struct {
	Offset uint64
	Lazy
}

// LazyBytes is a Lazy over b (tests, small in-memory data).
func LazyBytes(name string, b []byte) Lazy {
	return Lazy{Name: name, Size: uint64(len(b)), Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}}
}

// copyBufferSize bounds the memory a writer uses to copy lazy bytes.
const copyBufferSize = 1 << 20

// segmentLen is the length of segment s (index i labels errors): len(Data),
// or Size (at least the end of the last piece) for a segment of pieces,
// whose pieces must be in offset order without overlapping.
func segmentLen(i int, s Segment) (uint64, error) {
	if s.Pieces == nil {
		if s.Size != 0 && s.Size != uint64(len(s.Data)) {
			return 0, fmt.Errorf("segment %d: size %d but %d bytes of data", i, s.Size, len(s.Data))
		}
		return uint64(len(s.Data)), nil
	}
	if s.Data != nil {
		return 0, fmt.Errorf("segment %d: both data and lazy pieces", i)
	}
	var end uint64
	for j, p := range s.Pieces {
		if p.Open == nil {
			return 0, fmt.Errorf("segment %d, piece %d (%s): no opener", i, j, p.Name)
		}
		if p.Offset < end {
			return 0, fmt.Errorf("segment %d, piece %d (%s): offset %d overlaps the previous piece, which ends at %d", i, j, p.Name, p.Offset, end)
		}
		if p.Offset+p.Size < p.Offset {
			return 0, fmt.Errorf("segment %d, piece %d (%s): offset %d + size %d overflows", i, j, p.Name, p.Offset, p.Size)
		}
		end = p.Offset + p.Size
	}
	if s.Size == 0 {
		return end, nil
	}
	if s.Size < end {
		return 0, fmt.Errorf("segment %d: size %d but its pieces end at %d", i, s.Size, end)
	}
	return s.Size, nil
}

// copyLazy copies exactly l.Size bytes of l to w through buf; where labels
// errors (the segment and piece, or the .ptd entry).
func copyLazy(w io.Writer, l Lazy, buf []byte, where string) error {
	r, err := l.Open()
	if err != nil {
		return fmt.Errorf("%s (%s): %w", where, l.Name, err)
	}
	defer r.Close()
	n, err := io.CopyBuffer(w, io.LimitReader(readerOnly{r}, int64(l.Size)), buf)
	if err != nil {
		return fmt.Errorf("%s (%s): %w", where, l.Name, err)
	}
	if uint64(n) != l.Size {
		return fmt.Errorf("%s (%s): yields %d bytes, declared %d", where, l.Name, n, l.Size)
	}
	var one [1]byte
	if k, _ := io.ReadFull(r, one[:]); k != 0 {
		return fmt.Errorf("%s (%s): yields more than the declared %d bytes", where, l.Name, l.Size)
	}
	return nil
}

// readerOnly hides a reader's WriterTo so that io.CopyBuffer copies through
// the bounded buffer it is given.
type readerOnly struct{ io.Reader }

// writeZeros writes n zero bytes.
func writeZeros(w io.Writer, n uint64, buf []byte) error {
	clear(buf[:min(n, uint64(len(buf)))])
	for n > 0 {
		k := min(n, uint64(len(buf)))
		if _, err := w.Write(buf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// writeSegment writes the length bytes of segment s (index i): its Data,
// or its pieces at their offsets with zero gaps.
func writeSegment(w io.Writer, i int, s Segment, length uint64, buf []byte) error {
	if s.Pieces == nil {
		_, err := w.Write(s.Data)
		return err
	}
	var at uint64
	for j, p := range s.Pieces {
		if err := writeZeros(w, p.Offset-at, buf); err != nil {
			return err
		}
		if err := copyLazy(w, p.Lazy, buf, fmt.Sprintf("segment %d, piece %d", i, j)); err != nil {
			return err
		}
		at = p.Offset + p.Size
	}
	return writeZeros(w, length-at, buf)
}

// materialize returns the bytes of segment s (index i), reading its pieces.
func materialize(i int, s Segment) ([]byte, error) {
	if s.Pieces == nil {
		return s.Data, nil
	}
	n, err := segmentLen(i, s)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(int(n))
	if err := writeSegment(&b, i, s, n, make([]byte, 4096)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// SegmentLazy is a Lazy over the whole of segment s — its Data or its
// pieces with the zero gaps — for moving a segment's bytes elsewhere (a
// .ptd entry) without reading them.
func SegmentLazy(name string, s Segment) (Lazy, error) {
	n, err := segmentLen(0, s)
	if err != nil {
		return Lazy{}, fmt.Errorf("%s: %w", name, err)
	}
	if s.Pieces == nil {
		return LazyBytes(name, s.Data), nil
	}
	if len(s.Pieces) == 1 && s.Pieces[0].Offset == 0 && s.Pieces[0].Size == n {
		l := s.Pieces[0].Lazy
		l.Name = name + " (" + l.Name + ")"
		return l, nil
	}
	return Lazy{Name: name, Size: n, Open: func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() {
			pw.CloseWithError(writeSegment(pw, 0, s, n, make([]byte, copyBufferSize)))
		}()
		return pr, nil
	}}, nil
}
