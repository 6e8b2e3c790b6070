package passes

import (
	"bytes"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"

	"github.com/fxport/fxport/ir"
)

// naiveContiguous is the definition: element i of the result is the
// storage element at Offset + Σ index_d·Strides[d].
func naiveContiguous(data []byte, is int64, shape, strides []int64, offset int64) []byte {
	var out []byte
	idx := make([]int64, len(shape))
	numel := int64(1)
	for _, d := range shape {
		numel *= d
	}
	for e := int64(0); e < numel; e++ {
		pos := offset
		for d, i := range idx {
			pos += i * strides[d]
		}
		out = append(out, data[pos*is:(pos+1)*is]...)
		for d := len(idx) - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

// Every view reads the same bytes through the streaming reader (a file
// source: random access, slab by slab) and the in-memory one (an inline
// source), whatever the read sizes; the streaming one holds one slab.
func TestContiguousSourceStreams(t *testing.T) {
	defer func(b int64) { slabBytes = b }(slabBytes)
	slabBytes = 1 << 12 // several slabs per view
	rng := rand.New(rand.NewSource(3))
	dir := t.TempDir()
	type view struct {
		is             int64
		shape, strides []int64
		offset         int64
	}
	views := []view{
		{4, []int64{300, 70}, []int64{1, 300}, 0},         // a transposed linear weight
		{4, []int64{70, 300}, []int64{300, 1}, 300},       // row-major at an offset
		{2, []int64{3, 200, 5}, []int64{1000, 1, 200}, 7}, // runs in the middle dim
		{8, []int64{2, 64, 3}, []int64{0, 1, 64}, 0},      // a broadcast (stride 0) dim
		{1, []int64{5, 300}, []int64{1, 5}, 0},            // one-byte elements
		{4, []int64{3, 5}, []int64{1, 3}, 0},              // short runs: read into memory
		{4, []int64{0, 300}, []int64{1, 0}, 0},            // empty
		{3, []int64{400, 2}, []int64{1, 400}, 1},          // odd item size
	}
	for i := 0; i < 20; i++ { // random permutations of a 3-d tensor
		s := []int64{int64(1 + rng.Intn(4)), int64(1 + rng.Intn(5)), int64(64 + rng.Intn(100))}
		perm := rng.Perm(3)
		row := []int64{s[1] * s[2], s[2], 1}
		v := view{is: 4, shape: make([]int64, 3), strides: make([]int64, 3)}
		for k, p := range perm {
			v.shape[k], v.strides[k] = s[p], row[p]
		}
		views = append(views, v)
	}
	streamed := 0
	for vi, v := range views {
		var need int64 = v.offset + 1
		for d := range v.shape {
			if v.shape[d] > 0 {
				need += (v.shape[d] - 1) * v.strides[d]
			}
		}
		data := make([]byte, need*v.is+5)
		rng.Read(data)
		want := naiveContiguous(data, v.is, v.shape, v.strides, v.offset)
		path := filepath.Join(dir, "w.bin")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, inner := range []ir.WeightSource{&ir.FileSource{Path: path, Len: int64(len(data))}, &ir.InlineSource{Data: data}} {
			s, err := newContiguousSource(inner, v.is, v.shape, v.strides, v.offset)
			if err != nil {
				t.Fatalf("view %d: %v", vi, err)
			}
			for _, wrap := range []func(io.Reader) io.Reader{func(r io.Reader) io.Reader { return r }, iotest.OneByteReader, iotest.HalfReader} {
				r, err := s.Open()
				if err != nil {
					t.Fatal(err)
				}
				if sr, ok := r.(*streamReader); ok {
					streamed++
					if int64(cap(sr.slab)) > slabBytes+minRunBytes*sr.inner {
						t.Errorf("view %d: slab of %d bytes", vi, cap(sr.slab))
					}
				}
				got, err := io.ReadAll(wrap(r))
				r.Close()
				if err != nil {
					t.Fatalf("view %d (%T): %v", vi, inner, err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("view %d %+v (%T): bytes differ from the definition", vi, v, inner)
				}
			}
		}
	}
	if streamed < 3*15 {
		t.Errorf("only %d of the reads streamed", streamed)
	}
}

// A transposed weight with long runs streams from a file source.
func TestContiguousSourceStreamsTransposes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.bin")
	if err := os.WriteFile(path, make([]byte, 4*256*64), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := newContiguousSource(&ir.FileSource{Path: path, Len: 4 * 256 * 64}, 4, []int64{256, 64}, []int64{1, 256}, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, ok := r.(*streamReader); !ok {
		t.Fatalf("a transposed file weight is read by %T, not streamed", r)
	}
}
