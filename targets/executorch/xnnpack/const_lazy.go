package xnnpack

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// Constants without their bytes. The serializer names every constant it
// stores by the sha256 of the stored bytes, but keeps none of them: a raw
// constant is hashed as a stream from its source, and a transformed one (a
// filter permuted to OHWI, a transposed linear weight, a quantized bias,
// packed 4-bit weights) is computed from its source, hashed and dropped, so
// at most one constant's bytes are in memory at a time. Each Named entry
// carries a recipe that produces the bytes again when the file is written.

// Named is one constant the payload refers to by key (Program.named_data).
// Its bytes are not held: Data produces them on demand — a raw constant
// from its source, a transformed one by recomputing the transform from its
// source — and its reader fails, naming the constant, when the bytes no
// longer hash to Key (a source that changed since serialization).
type Named struct {
	Key  string   // lowercase sha256 hex of the bytes
	Data pte.Lazy // Size and Digest set
}

// ConstFunc returns a call operand that is a constant as lazy bytes over
// its source (ok false for an operand the runtime passes in). Digest may
// be nil: the serializer hashes, as a stream, only the constants it stores
// as they are (a transformed one is hashed after the transform).
type ConstFunc func(v *ir.Value) (data pte.Lazy, ok bool, err error)

// readLazy reads exactly l.Size bytes of l.
func readLazy(l pte.Lazy) ([]byte, error) {
	if l.Open == nil {
		return nil, fmt.Errorf("%s: no opener", l.Name)
	}
	r, err := l.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Name, err)
	}
	defer r.Close()
	b := make([]byte, l.Size)
	n, err := io.ReadFull(r, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return nil, fmt.Errorf("%s: %d bytes of data, declared %d", l.Name, n, l.Size)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Name, err)
	}
	var one [1]byte
	if k, _ := io.ReadFull(r, one[:]); k != 0 {
		return nil, fmt.Errorf("%s: more than the declared %d bytes of data", l.Name, l.Size)
	}
	return b, nil
}

// digestOf returns l with its Digest set, hashing its bytes as a stream
// when the producer did not.
func digestOf(l pte.Lazy) (pte.Lazy, error) {
	if l.Digest != nil {
		return l, nil
	}
	if l.Open == nil {
		return l, fmt.Errorf("%s: no opener", l.Name)
	}
	r, err := l.Open()
	if err != nil {
		return l, fmt.Errorf("%s: %w", l.Name, err)
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.CopyBuffer(h, io.LimitReader(r, int64(l.Size)+1), make([]byte, 64<<10))
	if err != nil {
		return l, fmt.Errorf("%s: %w", l.Name, err)
	}
	if uint64(n) != l.Size {
		return l, fmt.Errorf("%s: %d bytes of data, declared %d", l.Name, n, l.Size)
	}
	var sum [32]byte
	h.Sum(sum[:0])
	l.Digest = &sum
	return l, nil
}

// verified is l whose readers check, as the last byte is read, that the
// bytes hash to l.Digest (set).
func verified(l pte.Lazy) pte.Lazy {
	open, want := l.Open, *l.Digest
	l.Open = func() (io.ReadCloser, error) {
		r, err := open()
		if err != nil {
			return nil, err
		}
		return &hashCheck{r: r, h: sha256.New(), left: l.Size, want: want}, nil
	}
	return l
}

// hashCheck hashes what it reads and fails the read that completes the
// declared size when the sum differs (the writer names the constant).
type hashCheck struct {
	r    io.ReadCloser
	h    hash.Hash
	left uint64
	want [32]byte
}

func (c *hashCheck) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if n > 0 {
		k := min(uint64(n), c.left) // bytes past the declared size are the writer's to reject
		c.h.Write(b[:k])
		c.left -= k
		if c.left == 0 && k > 0 {
			var got [32]byte
			c.h.Sum(got[:0])
			if got != c.want {
				return n, fmt.Errorf("bytes no longer match their sha256 %s (the source changed since serialization)", hex.EncodeToString(c.want[:]))
			}
		}
	}
	return n, err
}

func (c *hashCheck) Close() error { return c.r.Close() }

// source is the lazy bytes of constant v, with their digest.
func (s *ser) source(v *ir.Value) (pte.Lazy, error) {
	l, ok := s.consts[v]
	if !ok {
		return pte.Lazy{}, fmt.Errorf("%s is not a constant", v)
	}
	return l, nil
}

// isConst reports a region input holding a constant.
func (s *ser) isConst(v *ir.Value) bool {
	_, ok := s.consts[v]
	return ok
}

// constBytes reads the bytes of constant v (quantization parameters and
// other small tensors the serializer inspects).
func (s *ser) constBytes(v *ir.Value) ([]byte, bool, error) {
	l, ok := s.consts[v]
	if !ok {
		return nil, false, nil
	}
	b, err := readLazy(l)
	return b, true, err
}

// raw is constant v stored as it is: its source, hashed as a stream when
// its digest is not known, and verified when written.
func (s *ser) raw(v *ir.Value) (pte.Lazy, error) {
	l, err := s.source(v)
	if err != nil {
		return pte.Lazy{}, err
	}
	if l.Digest == nil {
		if l, err = digestOf(l); err != nil {
			return pte.Lazy{}, err
		}
		s.consts[v] = l
	}
	return verified(l), nil
}

// derived is constant v stored transformed by f (a pure function of the
// bytes): f is applied once now to size and hash the result, which is then
// dropped, and again from the source each time the bytes are written (the
// reader fails when the result no longer hashes the same). what names the
// transform in errors.
func (s *ser) derived(v *ir.Value, what string, f func([]byte) ([]byte, error)) (pte.Lazy, error) {
	src, err := s.source(v)
	if err != nil {
		return pte.Lazy{}, err
	}
	compute := func() ([]byte, error) {
		b, err := readLazy(src)
		if err != nil {
			return nil, err
		}
		return f(b)
	}
	out, err := compute()
	if err != nil {
		return pte.Lazy{}, err
	}
	sum := sha256.Sum256(out)
	size := uint64(len(out))
	out = nil
	name := src.Name + " (" + what + ")"
	return pte.Lazy{Name: name, Size: size, Digest: &sum, Open: func() (io.ReadCloser, error) {
		b, err := compute()
		if err != nil {
			return nil, err
		}
		if sha256.Sum256(b) != sum {
			return nil, fmt.Errorf("bytes no longer match their sha256 %s (the source changed since serialization)", hex.EncodeToString(sum[:]))
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}}, nil
}

// permuted is constant v of dims permuted by perm (es bytes an element).
func (s *ser) permuted(v *ir.Value, dims []uint32, perm []int, es int) (pte.Lazy, error) {
	n := uint64(es)
	for _, d := range dims {
		n *= uint64(d)
	}
	return s.derived(v, fmt.Sprintf("permuted %v", perm), func(b []byte) ([]byte, error) {
		if uint64(len(b)) != n || len(perm) != len(dims) {
			return nil, fmt.Errorf("%d bytes for dims %v of %d-byte elements permuted by %v", len(b), dims, es, perm)
		}
		return permuteBytes(b, dims, perm, es), nil
	})
}
