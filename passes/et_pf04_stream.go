package passes

import (
	"encoding/binary"
	"fmt"
	"io"
)

// slabBytes bounds what a streaming ContiguousSource reader holds: it
// produces the contiguous tensor one slab of about this many bytes at a
// time, reading only the storage runs the slab needs.
var slabBytes int64 = 8 << 20

// minRunBytes is the shortest storage run worth one ReadAt; views whose
// runs are shorter read their storage once into memory instead.
const minRunBytes = 256

// rcPair closes c after reading from r.
type rcPair struct {
	io.Reader
	c io.Closer
}

func (p rcPair) Close() error { return p.c.Close() }

// openStreaming returns a reader of the contiguous tensor that reads the
// inner storage through ra (the inner source's open reader rc, which it
// closes) a slab at a time, or nil when the view's layout does not allow
// it (short runs): then the caller reads the storage into memory.
func (s *ContiguousSource) openStreaming(rc io.ReadCloser, ra io.ReaderAt) io.ReadCloser {
	is := s.ItemSize
	if s.Size() == 0 {
		return rcPair{io.LimitReader(ra.(io.Reader), 0), rc}
	}
	// Row-major already (sizes-1 dims aside): one section of the storage.
	contiguous, want := true, int64(1)
	for d := len(s.Shape) - 1; d >= 0; d-- {
		if s.Shape[d] != 1 && s.Strides[d] != want {
			contiguous = false
		}
		want *= s.Shape[d]
	}
	if contiguous {
		return rcPair{io.NewSectionReader(ra, s.Offset*is, s.Size()), rc}
	}
	// The storage-innermost dim (stride 1) gives the runs: a slab fixes
	// the dims before it, takes a chunk of it and all dims after it, which
	// is one contiguous piece of the output.
	d := -1
	for k := len(s.Shape) - 1; k >= 0; k-- {
		if s.Shape[k] > 1 && s.Strides[k] == 1 {
			d = k
			break
		}
	}
	if d < 0 || s.Shape[d]*is < minRunBytes {
		return nil
	}
	inner := int64(1)
	for _, n := range s.Shape[d+1:] {
		inner *= n
	}
	chunk := slabBytes / is / inner
	if min := (minRunBytes + is - 1) / is; chunk < min {
		chunk = min
	}
	if chunk > s.Shape[d] {
		chunk = s.Shape[d]
	}
	return &streamReader{s: s, ra: ra, c: rc, d: d, inner: inner, chunk: chunk,
		outer: make([]int64, d), idx: make([]int64, len(s.Shape)-d-1),
		slab: make([]byte, 0, chunk*inner*is), run: make([]byte, chunk*is)}
}

// streamReader yields a strided view's elements in row-major order, one
// slab at a time (see openStreaming).
type streamReader struct {
	s     *ContiguousSource
	ra    io.ReaderAt
	c     io.Closer
	d     int     // the run dim
	inner int64   // elements of the dims after d
	chunk int64   // run length, in elements
	outer []int64 // index of the dims before d
	at    int64   // first index of dim d in the next slab
	done  bool
	idx   []int64 // scratch index of the dims after d
	slab  []byte  // the current slab; pos is what was read of it
	pos   int
	run   []byte
}

func (r *streamReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if r.pos == len(r.slab) {
			if r.done {
				break
			}
			if err := r.fill(); err != nil {
				return n, err
			}
		}
		k := copy(p[n:], r.slab[r.pos:])
		r.pos += k
		n += k
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// fill reads the next slab: for every index of the dims after d, one run
// of the storage, scattered to its elements' places.
func (r *streamReader) fill() error {
	s, is := r.s, r.s.ItemSize
	base := s.Offset + r.at*s.Strides[r.d]
	for k, i := range r.outer {
		base += i * s.Strides[k]
	}
	n := s.Shape[r.d] - r.at
	if n > r.chunk {
		n = r.chunk
	}
	r.slab, r.pos = r.slab[:n*r.inner*is], 0
	run := r.run[:n*is]
	for i := range r.idx {
		r.idx[i] = 0
	}
	off := int64(0) // storage offset of the dims after d at idx
	tail := s.Shape[r.d+1:]
	strides := s.Strides[r.d+1:]
	for j := int64(0); j < r.inner; j++ {
		if _, err := r.ra.ReadAt(run, (base+off)*is); err != nil {
			return fmt.Errorf("contiguous(...): reading %s: %w", s.Inner, err)
		}
		scatter(r.slab, run, j, r.inner, n, is)
		for t := len(r.idx) - 1; t >= 0; t-- {
			r.idx[t]++
			off += strides[t]
			if r.idx[t] < tail[t] {
				break
			}
			off -= r.idx[t] * strides[t]
			r.idx[t] = 0
		}
	}
	r.at += n
	if r.at == s.Shape[r.d] {
		r.at = 0
		r.done = true
		for t := len(r.outer) - 1; t >= 0; t-- {
			r.outer[t]++
			if r.outer[t] < s.Shape[t] {
				r.done = false
				break
			}
			r.outer[t] = 0
		}
	}
	return nil
}

func (r *streamReader) Close() error { return r.c.Close() }

// scatter puts the n elements of run (is bytes each) at elements j,
// j+inner, j+2·inner, … of slab.
func scatter(slab, run []byte, j, inner, n, is int64) {
	step := inner * is
	o := j * is
	switch is {
	case 4:
		for q := int64(0); q < n*4; q, o = q+4, o+step {
			binary.LittleEndian.PutUint32(slab[o:], binary.LittleEndian.Uint32(run[q:]))
		}
	case 2:
		for q := int64(0); q < n*2; q, o = q+2, o+step {
			binary.LittleEndian.PutUint16(slab[o:], binary.LittleEndian.Uint16(run[q:]))
		}
	case 8:
		for q := int64(0); q < n*8; q, o = q+8, o+step {
			binary.LittleEndian.PutUint64(slab[o:], binary.LittleEndian.Uint64(run[q:]))
		}
	default:
		for q := int64(0); q < n*is; q, o = q+is, o+step {
			copy(slab[o:o+is], run[q:q+is])
		}
	}
}
