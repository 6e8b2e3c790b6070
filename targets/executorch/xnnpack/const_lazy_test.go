package xnnpack

import (
	"bytes"
	"crypto/sha256"
	"io"
	"math/rand"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// permuteNaive is the definition: out[i0..ir] = in[j] with j[perm[k]] = i[k].
func permuteNaive(b []byte, dims []uint32, perm []int, es int) []byte {
	nd := permDims(dims, perm)
	n := len(b) / es
	out := make([]byte, 0, len(b))
	for k := 0; k < n; k++ {
		rem, idx := k, make([]int, len(nd))
		for i := len(nd) - 1; i >= 0; i-- {
			idx[i] = rem % int(nd[i])
			rem /= int(nd[i])
		}
		src := make([]int, len(dims))
		for i, p := range perm {
			src[p] = idx[i]
		}
		off := 0
		for i := range dims {
			off = off*int(dims[i]) + src[i]
		}
		out = append(out, b[off*es:(off+1)*es]...)
	}
	return out
}

func TestPermuteBytesMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 200; trial++ {
		rank := 1 + rng.Intn(5)
		dims := make([]uint32, rank)
		n := 1
		for i := range dims {
			dims[i] = uint32(1 + rng.Intn(4))
			n *= int(dims[i])
		}
		perm := rng.Perm(rank)
		es := []int{1, 2, 4, 8}[rng.Intn(4)]
		b := make([]byte, n*es)
		rng.Read(b)
		if got, want := permuteBytes(b, dims, perm, es), permuteNaive(b, dims, perm, es); !bytes.Equal(got, want) {
			t.Fatalf("dims %v perm %v es %d: permuteBytes differs from the definition", dims, perm, es)
		}
	}
}

// changing serves data, or data with its first byte flipped once flip is set.
type changing struct {
	data  []byte
	flip  bool
	opens int
}

func (c *changing) lazy(name string) pte.Lazy {
	return pte.Lazy{Name: name, Size: uint64(len(c.data)), Open: func() (io.ReadCloser, error) {
		c.opens++
		b := c.data
		if c.flip {
			b = append([]byte{b[0] ^ 0xff}, b[1:]...)
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}}
}

func readAllLazy(t *testing.T, l pte.Lazy) ([]byte, error) {
	t.Helper()
	r, err := l.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, int64(l.Size)))
}

// A raw constant is hashed as a stream; its reader checks the digest as the
// last byte is read.
func TestRawConstantIsVerified(t *testing.T) {
	src := &changing{data: []byte("0123456789abcdef")}
	l, err := digestOf(src.lazy("w"))
	if err != nil {
		t.Fatal(err)
	}
	if *l.Digest != sha256.Sum256(src.data) {
		t.Fatal("digest is not the sha256 of the bytes")
	}
	v := verified(l)
	if got, err := readAllLazy(t, v); err != nil || !bytes.Equal(got, src.data) {
		t.Fatalf("read %q, %v", got, err)
	}
	src.flip = true
	if _, err := readAllLazy(t, v); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("changed source read without error (%v)", err)
	}
	short := pte.Lazy{Name: "w", Size: 17, Open: src.lazy("w").Open}
	if _, err := digestOf(short); err == nil || !strings.Contains(err.Error(), "declared 17") {
		t.Fatalf("short source: %v", err)
	}
}

// A transformed constant keeps no bytes: it is sized and hashed from one
// computation, recomputed from its source on every open, and rejected
// when the source changed.
func TestDerivedConstantRecomputes(t *testing.T) {
	v := &ir.Value{Name: "w"}
	src := &changing{data: []byte{1, 2, 3, 4, 5, 6}}
	l, err := digestOf(src.lazy(`weight "w"`))
	if err != nil {
		t.Fatal(err)
	}
	s := &ser{consts: map[*ir.Value]pte.Lazy{v: l}}
	d, err := s.permuted(v, []uint32{2, 3}, []int{1, 0}, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{1, 4, 2, 5, 3, 6}
	if d.Size != 6 || *d.Digest != sha256.Sum256(want) || !strings.Contains(d.Name, `weight "w"`) {
		t.Fatalf("recipe %s: size %d, digest %x", d.Name, d.Size, *d.Digest)
	}
	opens := src.opens
	for i := 0; i < 2; i++ {
		if got, err := readAllLazy(t, d); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("open %d: %v, %v", i, got, err)
		}
	}
	if src.opens != opens+2 {
		t.Fatalf("source opened %d times for two reads, want 2", src.opens-opens)
	}
	src.flip = true
	if _, err := d.Open(); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("changed source opened without error (%v)", err)
	}
	if _, err := s.permuted(v, []uint32{4, 2}, []int{1, 0}, 1); err == nil {
		t.Fatal("dims that do not match the bytes were permuted")
	}
	if _, err := s.derived(&ir.Value{Name: "x"}, "t", nil); err == nil {
		t.Fatal("a non-constant was transformed")
	}
}
