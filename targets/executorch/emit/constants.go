package emit

import (
	"crypto/sha256"
	"fmt"
	"io"

	"github.com/fxport/fxport/ir"
)

// constantAlignment is the padding of each constant inside the constant
// segment (exir/tensor.py ALIGNMENT).
const constantAlignment = 16

// constants accumulates the constant segment: tensors deduplicated by the
// sha256 of their bytes, each padded to 16 except the last.
type constants struct {
	data    []byte
	offsets []uint64 // offsets[0] is the reserved "not a constant" slot
	index   map[[32]byte]uint32
}

func newConstants() *constants {
	return &constants{offsets: []uint64{0}, index: map[[32]byte]uint32{}}
}

// add returns the data_buffer_idx of b, adding it when new.
func (c *constants) add(b []byte) uint32 {
	key := sha256.Sum256(b)
	if i, ok := c.index[key]; ok {
		return i
	}
	if pad := len(c.data) % constantAlignment; pad != 0 {
		c.data = append(c.data, make([]byte, constantAlignment-pad)...)
	}
	c.offsets = append(c.offsets, uint64(len(c.data)))
	c.data = append(c.data, b...)
	i := uint32(len(c.offsets) - 1)
	c.index[key] = i
	return i
}

// weightBytes reads the contiguous bytes of w.
func weightBytes(w *ir.Weight) ([]byte, error) {
	if w.Source == nil {
		return nil, fmt.Errorf("weight %q has no data", w.Name)
	}
	if w.StorageOffset != 0 || !contiguousStrides(w) {
		return nil, fmt.Errorf("weight %q is not contiguous (strides %v, storage offset %d); run the contiguous-constants pass (ET-PF04)", w.Name, w.Strides, w.StorageOffset)
	}
	shape, ok := w.Type.StaticShape()
	if !ok {
		return nil, fmt.Errorf("weight %q has a symbolic shape %s", w.Name, w.Type)
	}
	n := int64(w.Type.DType.Size())
	for _, d := range shape {
		n *= d
	}
	r, err := w.Source.Open()
	if err != nil {
		return nil, fmt.Errorf("weight %q: %w", w.Name, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, n+1))
	if err != nil {
		return nil, fmt.Errorf("weight %q: %w", w.Name, err)
	}
	if int64(len(b)) != n {
		return nil, fmt.Errorf("weight %q: %d bytes of data, want %d for %s", w.Name, len(b), n, w.Type)
	}
	return b, nil
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
