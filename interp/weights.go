package interp

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"reflect"
	"sync"

	"github.com/fxport/fxport/ir"
)

// LoadWeight reads a weight's bytes through its source and returns it as a
// tensor: the storage decoded little-endian, viewed with the weight's shape,
// strides and storage offset.
func LoadWeight(w *ir.Weight) (*Tensor, error) {
	st, err := loadStorage(w)
	if err != nil {
		return nil, err
	}
	return weightView(w, st)
}

func loadStorage(w *ir.Weight) (*storage, error) {
	if w.Type == nil {
		return nil, fmt.Errorf("weight %q has no type", w.Name)
	}
	if w.Source == nil {
		return nil, fmt.Errorf("weight %q has no data (no source)", w.Name)
	}
	dt := w.Type.DType
	if err := checkDType(dt); err != nil {
		return nil, fmt.Errorf("weight %q: %w", w.Name, err)
	}
	r, err := w.Source.Open()
	if err != nil {
		return nil, fmt.Errorf("weight %q: %w", w.Name, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("weight %q: reading %s: %w", w.Name, w.Source, err)
	}
	size := dt.Size()
	if len(data)%size != 0 {
		return nil, fmt.Errorf("weight %q: %d bytes is not a whole number of %s elements", w.Name, len(data), dt)
	}
	st, err := DecodeStorage(dt, data)
	if err != nil {
		return nil, fmt.Errorf("weight %q: %w", w.Name, err)
	}
	return st, nil
}

func weightView(w *ir.Weight, st *storage) (*Tensor, error) {
	shape, ok := w.Type.StaticShape()
	if !ok {
		return nil, fmt.Errorf("weight %q has a symbolic shape %s", w.Name, w.Type)
	}
	strides := w.Strides
	if strides == nil {
		strides = contiguousStrides(shape)
	}
	if len(strides) != len(shape) {
		return nil, fmt.Errorf("weight %q: %d strides for %d dims", w.Name, len(strides), len(shape))
	}
	t := &Tensor{DType: w.Type.DType, Shape: shape, Strides: append([]int64(nil), strides...), Offset: w.StorageOffset, st: st}
	if err := checkBounds(shape, t.Strides, t.Offset, t.storageLen()); err != nil {
		return nil, fmt.Errorf("weight %q: %w", w.Name, err)
	}
	return t, nil
}

// DecodeStorage decodes little-endian element bytes of dtype dt.
func DecodeStorage(dt ir.DType, data []byte) (*storage, error) {
	if err := checkDType(dt); err != nil {
		return nil, err
	}
	size := dt.Size()
	n := int64(len(data) / size)
	if n > MaxElements {
		return nil, errTooLarge{n}
	}
	st := newStorage(dt, n)
	le := binary.LittleEndian
	for k := int64(0); k < n; k++ {
		b := data[k*int64(size):]
		switch dt {
		case ir.Float32:
			st.f[k] = float64(math.Float32frombits(le.Uint32(b)))
		case ir.Float64:
			st.f[k] = math.Float64frombits(le.Uint64(b))
		case ir.Float16:
			st.f[k] = float64(F16Float(le.Uint16(b)))
		case ir.BFloat16:
			st.f[k] = float64(BF16Float(le.Uint16(b)))
		case ir.Bool:
			if b[0] != 0 {
				st.i[k] = 1
			}
		case ir.Uint8:
			st.i[k] = int64(b[0])
		case ir.Int8:
			st.i[k] = int64(int8(b[0]))
		case ir.Int16:
			st.i[k] = int64(int16(le.Uint16(b)))
		case ir.Uint16:
			st.i[k] = int64(le.Uint16(b))
		case ir.Int32:
			st.i[k] = int64(int32(le.Uint32(b)))
		case ir.Uint32:
			st.i[k] = int64(le.Uint32(b))
		case ir.Int64, ir.Uint64:
			st.i[k] = int64(le.Uint64(b))
		case ir.Complex64:
			st.c[k] = complex(float64(math.Float32frombits(le.Uint32(b))), float64(math.Float32frombits(le.Uint32(b[4:]))))
		case ir.Complex128:
			st.c[k] = complex(math.Float64frombits(le.Uint64(b)), math.Float64frombits(le.Uint64(b[8:])))
		}
	}
	return st, nil
}

// FromBytes builds a contiguous tensor from little-endian element bytes.
func FromBytes(dt ir.DType, shape []int64, data []byte) (*Tensor, error) {
	if err := checkDType(dt); err != nil {
		return nil, err
	}
	n := numel(shape)
	if int64(len(data)) != n*int64(dt.Size()) {
		return nil, fmt.Errorf("%d bytes for %d elements of %s", len(data), n, dt)
	}
	st, err := DecodeStorage(dt, data)
	if err != nil {
		return nil, err
	}
	shape = append([]int64{}, shape...)
	return &Tensor{DType: dt, Shape: shape, Strides: contiguousStrides(shape), st: st}, nil
}

// Bytes encodes the elements in row-major order, little-endian.
func (t *Tensor) Bytes() []byte {
	size := t.DType.Size()
	out := make([]byte, t.Numel()*int64(size))
	le := binary.LittleEndian
	k := int64(0)
	st := t.st
	t.forEachOffset(func(off int64) {
		b := out[k*int64(size):]
		k++
		switch t.DType {
		case ir.Float32:
			le.PutUint32(b, math.Float32bits(float32(st.f[off])))
		case ir.Float64:
			le.PutUint64(b, math.Float64bits(st.f[off]))
		case ir.Float16:
			le.PutUint16(b, F16Bits(float32(st.f[off])))
		case ir.BFloat16:
			le.PutUint16(b, BF16Bits(float32(st.f[off])))
		case ir.Bool, ir.Uint8, ir.Int8:
			b[0] = byte(st.i[off])
		case ir.Int16, ir.Uint16:
			le.PutUint16(b, uint16(st.i[off]))
		case ir.Int32, ir.Uint32:
			le.PutUint32(b, uint32(st.i[off]))
		case ir.Int64, ir.Uint64:
			le.PutUint64(b, uint64(st.i[off]))
		case ir.Complex64:
			le.PutUint32(b, math.Float32bits(float32(real(st.c[off]))))
			le.PutUint32(b[4:], math.Float32bits(float32(imag(st.c[off]))))
		case ir.Complex128:
			le.PutUint64(b, math.Float64bits(real(st.c[off])))
			le.PutUint64(b[8:], math.Float64bits(imag(st.c[off])))
		}
	})
	return out
}

// WeightCache keeps decoded weight storages so that repeated runs read each
// weight's bytes once. Runs get fresh copies, so in-place updates of
// buffers never leak from one run into the next. It is safe for concurrent use.
type WeightCache struct {
	mu sync.Mutex
	m  map[weightKey]*storage
}

type weightKey struct {
	src ir.WeightSource
	dt  ir.DType
}

// NewWeightCache returns an empty cache.
func NewWeightCache() *WeightCache { return &WeightCache{m: map[weightKey]*storage{}} }

// Load returns the weight as a tensor with its own copy of the storage.
func (c *WeightCache) Load(w *ir.Weight) (*Tensor, error) {
	if w.Source == nil || w.Type == nil || !reflect.TypeOf(w.Source).Comparable() {
		return LoadWeight(w)
	}
	key := weightKey{w.Source, w.Type.DType}
	c.mu.Lock()
	st, ok := c.m[key]
	c.mu.Unlock()
	if !ok {
		var err error
		if st, err = loadStorage(w); err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.m[key] = st
		c.mu.Unlock()
	}
	cp := &storage{f: append([]float64(nil), st.f...), i: append([]int64(nil), st.i...), c: append([]complex128(nil), st.c...)}
	if st.f == nil {
		cp.f = nil
	}
	if st.i == nil {
		cp.i = nil
	}
	if st.c == nil {
		cp.c = nil
	}
	return weightView(w, cp)
}
