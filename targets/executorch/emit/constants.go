package emit

import (
	"crypto/sha256"
	"fmt"
	"io"
	"sync"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// constantAlignment is the padding of each constant inside the constant
// segment (exir/tensor.py ALIGNMENT).
const constantAlignment = 16

// constants accumulates the constant segment: tensors deduplicated by the
// sha256 of their bytes, each padded to 16 except the last. The bytes stay
// in the weights' sources: the segment is a list of lazy pieces that
// pte.Write copies one at a time.
type constants struct {
	pieces  []pte.Piece
	size    uint64   // the end of the last piece
	offsets []uint64 // offsets[0] is the reserved "not a constant" slot
	index   map[[32]byte]uint32
}

func newConstants() *constants {
	return &constants{offsets: []uint64{0}, index: map[[32]byte]uint32{}}
}

// add returns the data_buffer_idx of the bytes of l (whose Digest is set),
// adding them when new.
func (c *constants) add(l pte.Lazy) uint32 {
	if i, ok := c.index[*l.Digest]; ok {
		return i
	}
	off := c.size
	if len(c.pieces) > 0 {
		off = alignUp(c.size, constantAlignment)
	}
	c.offsets = append(c.offsets, off)
	c.pieces = append(c.pieces, pte.Piece{Offset: off, Lazy: l})
	c.size = off + l.Size
	i := uint32(len(c.offsets) - 1)
	c.index[*l.Digest] = i
	return i
}

// segment is the constant segment (segment 0).
func (c *constants) segment() pte.Segment {
	if len(c.pieces) == 0 {
		return pte.Segment{Data: []byte{}}
	}
	return pte.Segment{Size: c.size, Pieces: c.pieces}
}

func alignUp(x, a uint64) uint64 { return (x + a - 1) / a * a }

// hashBufs holds the buffers weightLazy hashes through: a fresh 64 KiB
// buffer per weight was 640 MB of garbage for the 10,000 weights of a
// 100k-node program.
var hashBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// weightLazy checks that w is a contiguous tensor with data and returns
// its bytes as a pte.Lazy over its source, with their sha256 (read once, as
// a stream, so that identical constants can share a slot).
func weightLazy(w *ir.Weight) (pte.Lazy, error) {
	n, err := weightSize(w)
	if err != nil {
		return pte.Lazy{}, err
	}
	src, name := w.Source, w.Name
	open := func() (io.ReadCloser, error) {
		r, err := src.Open()
		if err != nil {
			return nil, fmt.Errorf("weight %q: %w", name, err)
		}
		return r, nil
	}
	r, err := open()
	if err != nil {
		return pte.Lazy{}, err
	}
	defer r.Close()
	h := sha256.New()
	buf := hashBufs.Get().(*[]byte)
	got, err := io.CopyBuffer(h, io.LimitReader(r, n+1), *buf)
	hashBufs.Put(buf)
	if err != nil {
		return pte.Lazy{}, fmt.Errorf("weight %q: %w", name, err)
	}
	if got != n {
		return pte.Lazy{}, fmt.Errorf("weight %q: %d bytes of data, want %d for %s", name, got, n, w.Type)
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return pte.Lazy{Name: fmt.Sprintf("weight %q", name), Size: uint64(n), Open: open, Digest: &sum}, nil
}

// weightSize checks that w can be emitted as it is stored — it has a
// source, a static shape and contiguous strides — and returns its size in
// bytes. The emitter never converts weights: dtype casts and contiguous
// copies are passes (ET-PF04), so every constant is copied verbatim.
func weightSize(w *ir.Weight) (int64, error) {
	if w.Source == nil {
		return 0, fmt.Errorf("weight %q has no data", w.Name)
	}
	if w.StorageOffset != 0 || !contiguousStrides(w) {
		return 0, fmt.Errorf("weight %q is not contiguous (strides %v, storage offset %d); run the contiguous-constants pass (ET-PF04)", w.Name, w.Strides, w.StorageOffset)
	}
	shape, ok := w.Type.StaticShape()
	if !ok {
		return 0, fmt.Errorf("weight %q has a symbolic shape %s", w.Name, w.Type)
	}
	n := int64(w.Type.DType.Size())
	for _, d := range shape {
		n *= d
	}
	return n, nil
}

func contiguousStrides(w *ir.Weight) bool {
	if w.Strides == nil {
		return true
	}
	shape, ok := w.Type.StaticShape()
	if !ok || len(shape) != len(w.Strides) {
		return false
	}
	want := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] != 1 && w.Strides[i] != want {
			return false
		}
		want *= shape[i]
	}
	return true
}
