package passes

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir"
)

// ContiguousSource is a weight source that yields another source's strided
// storage in row-major order: element i of the result is the element of
// the inner storage at Offset + Σ index_d·Strides[d], each ItemSize bytes.
// Nothing is read until Open. Its IR spelling is
//
//	contiguous(src="inline(\"…\")", itemsize=4, shape=[3, 2], strides=[1, 3], offset=0)
type ContiguousSource struct {
	Inner    ir.WeightSource
	ItemSize int64
	Shape    []int64
	Strides  []int64
	Offset   int64
}

func init() { ir.RegisterWeightSource("contiguous", parseContiguousSource) }

// newContiguousSource checks that every element the view reaches lies in
// the inner source's bytes.
func newContiguousSource(inner ir.WeightSource, itemSize int64, shape, strides []int64, offset int64) (*ContiguousSource, error) {
	s := &ContiguousSource{Inner: inner, ItemSize: itemSize, Shape: append([]int64(nil), shape...),
		Strides: append([]int64(nil), strides...), Offset: offset}
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *ContiguousSource) check() error {
	if s.Inner == nil {
		return fmt.Errorf("contiguous(...): no inner source")
	}
	if s.ItemSize < 1 || s.ItemSize > 16 {
		return fmt.Errorf("contiguous(...): bad itemsize %d", s.ItemSize)
	}
	if len(s.Shape) != len(s.Strides) {
		return fmt.Errorf("contiguous(...): %d strides for %d dims", len(s.Strides), len(s.Shape))
	}
	if s.Offset < 0 {
		return fmt.Errorf("contiguous(...): negative offset %d", s.Offset)
	}
	last, numel := s.Offset, int64(1)
	for i, d := range s.Shape {
		if d < 0 || s.Strides[i] < 0 {
			return fmt.Errorf("contiguous(...): negative size or stride in shape %v strides %v", s.Shape, s.Strides)
		}
		if d == 0 {
			return nil
		}
		numel *= d
		last += (d - 1) * s.Strides[i]
		if numel > 1<<40 || last > 1<<40 {
			return fmt.Errorf("contiguous(...): shape %v strides %v too large", s.Shape, s.Strides)
		}
	}
	if need := (last + 1) * s.ItemSize; need > s.Inner.Size() {
		return fmt.Errorf("contiguous(...): the view (shape %v, strides %v, offset %d) needs %d bytes, the source has %d",
			s.Shape, s.Strides, s.Offset, need, s.Inner.Size())
	}
	return nil
}

// Size is the number of bytes of the contiguous tensor.
func (s *ContiguousSource) Size() int64 {
	n := s.ItemSize
	for _, d := range s.Shape {
		n *= d
	}
	return n
}

// Open streams the reordered elements. When the inner source's reader has
// random access (a file, a stored .pt2 entry) and the view's storage runs
// are long (a transposed weight), it reads the runs of one slab at a time
// (et_pf04_stream.go), holding a few MB whatever the tensor's size;
// otherwise it reads the inner storage into memory once.
func (s *ContiguousSource) Open() (io.ReadCloser, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	rc, err := s.Inner.Open()
	if err != nil {
		return nil, err
	}
	if ra, ok := rc.(io.ReaderAt); ok {
		if r := s.openStreaming(rc, ra); r != nil {
			return r, nil
		}
	}
	data, err := readAllOf("contiguous", s.Inner, rc)
	rc.Close()
	if err != nil {
		return nil, err
	}
	r := &contiguousReader{s: s, data: data, idx: make([]int64, len(s.Shape)), left: s.Size() / s.ItemSize, pos: s.Offset}
	return r, nil
}

func (s *ContiguousSource) String() string {
	return fmt.Sprintf("contiguous(src=%s, itemsize=%d, shape=%s, strides=%s, offset=%d)",
		strconv.Quote(s.Inner.String()), s.ItemSize, etIntList(s.Shape), etIntList(s.Strides), s.Offset)
}

func etIntList(xs []int64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// contiguousReader walks the row-major index of the view over storage
// in memory.
type contiguousReader struct {
	s    *ContiguousSource
	data []byte
	idx  []int64
	left int64
	pos  int64 // storage element at idx
	// pend is the rest of the element being copied.
	pend []byte
}

func (r *contiguousReader) Read(p []byte) (int, error) {
	s, is := r.s, r.s.ItemSize
	n := 0
	for n < len(p) {
		var elem []byte
		switch {
		case len(r.pend) > 0:
			k := copy(p[n:], r.pend)
			r.pend = r.pend[k:]
			n += k
			continue
		case r.left == 0:
		default:
			elem = r.data[r.pos*is : (r.pos+1)*is]
			r.left--
			for d := len(r.idx) - 1; d >= 0; d-- {
				r.idx[d]++
				r.pos += s.Strides[d]
				if r.idx[d] < s.Shape[d] {
					break
				}
				r.pos -= r.idx[d] * s.Strides[d]
				r.idx[d] = 0
			}
		}
		if elem == nil {
			break
		}
		k := copy(p[n:], elem)
		r.pend = elem[k:]
		n += k
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (r *contiguousReader) Close() error { r.data = nil; return nil }

func parseContiguousSource(pos []ir.Arg, kw map[string]ir.Arg) (ir.WeightSource, error) {
	if len(pos) != 0 {
		return nil, fmt.Errorf("contiguous(...) takes keyword arguments only")
	}
	s := &ContiguousSource{}
	for _, k := range []string{"src", "itemsize", "shape", "strides", "offset"} {
		if _, ok := kw[k]; !ok {
			return nil, fmt.Errorf("contiguous(...): missing %s", k)
		}
	}
	if len(kw) != 5 {
		return nil, fmt.Errorf("contiguous(...) takes src, itemsize, shape, strides and offset")
	}
	if a := kw["src"]; a.Kind != ir.ArgString {
		return nil, fmt.Errorf("contiguous(...): src must be a string")
	} else {
		inner, err := ir.ParseWeightSource(a.Str)
		if err != nil {
			return nil, fmt.Errorf("contiguous(...): src: %w", err)
		}
		s.Inner = inner
	}
	ints := func(k string) ([]int64, error) {
		a := kw[k]
		if a.Kind != ir.ArgList {
			return nil, fmt.Errorf("contiguous(...): %s must be a list of ints", k)
		}
		out := make([]int64, len(a.List))
		for i, e := range a.List {
			if e.Kind != ir.ArgInt {
				return nil, fmt.Errorf("contiguous(...): %s must be a list of ints", k)
			}
			out[i] = e.Int
		}
		return out, nil
	}
	var err error
	if s.Shape, err = ints("shape"); err != nil {
		return nil, err
	}
	if s.Strides, err = ints("strides"); err != nil {
		return nil, err
	}
	for _, k := range []string{"itemsize", "offset"} {
		if kw[k].Kind != ir.ArgInt {
			return nil, fmt.Errorf("contiguous(...): %s must be an int", k)
		}
	}
	s.ItemSize, s.Offset = kw["itemsize"].Int, kw["offset"].Int
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}

// readSource reads all of a wrapped weight source's bytes, for the lazy
// sources that transform another one on Open (contiguous, bf16); kind names
// the wrapper in errors.
func readSource(kind string, src ir.WeightSource) ([]byte, error) {
	r, err := src.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readAllOf(kind, src, r)
}

// readAllOf reads src's bytes from its open reader r into one buffer of
// src.Size() bytes (no growing copies: a large weight is held once).
func readAllOf(kind string, src ir.WeightSource, r io.Reader) ([]byte, error) {
	data := make([]byte, src.Size())
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("%s(...): reading %s: %w", kind, src, err)
	}
	return data, nil
}
