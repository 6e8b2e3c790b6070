package npy

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
)

func TestRoundTrip(t *testing.T) {
	for _, tc := range []*interp.Tensor{
		interp.FromFloat64(ir.Float32, []int64{2, 3}, []float64{1, -2.5, 3, 4, 5, math.Inf(1)}),
		interp.FromFloat64(ir.Float64, []int64{}, []float64{math.Pi}),
		interp.FromFloat64(ir.Float16, []int64{3}, []float64{0.5, -1, 65504}),
		interp.FromInt64(ir.Int64, []int64{2, 1}, []int64{-7, 1 << 40}),
		interp.FromInt64(ir.Bool, []int64{3}, []int64{1, 0, 1}),
		interp.FromInt64(ir.Uint8, []int64{2}, []int64{255, 3}),
		interp.FromInt64(ir.Int32, []int64{0, 4}, nil),
		interp.FromComplex128(ir.Complex64, []int64{2}, []complex128{1 + 2i, -3i}),
	} {
		var b bytes.Buffer
		if err := Write(&b, tc); err != nil {
			t.Fatal(err)
		}
		if b.Len()%64 != 0 && tc.Numel() == 0 {
			t.Fatalf("header not padded to 64 bytes: %d", b.Len())
		}
		got, err := Read(&b)
		if err != nil {
			t.Fatalf("%s: %v", tc, err)
		}
		if got.DType != tc.DType || got.String() != tc.String() {
			t.Fatalf("round trip of %s gave %s", tc, got)
		}
	}
}

// handMade builds a version 1.0 file with the given header and payload.
func handMade(header string, payload []byte) []byte {
	var b bytes.Buffer
	b.Write(magic)
	b.Write([]byte{1, 0})
	binary.Write(&b, binary.LittleEndian, uint16(len(header)))
	b.WriteString(header)
	b.Write(payload)
	return b.Bytes()
}

func TestBigEndianFortranOrder(t *testing.T) {
	// A 2x3 int16 array [[1, 2, 3], [4, 5, 6]] stored column-major, big-endian.
	var payload []byte
	for _, v := range []int16{1, 4, 2, 5, 3, 6} {
		payload = binary.BigEndian.AppendUint16(payload, uint16(v))
	}
	data := handMade("{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }\n", payload)
	got, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got.DType != ir.Int16 || got.String() != "i16[2 3] [1 2 3 4 5 6]" {
		t.Fatalf("got %s", got)
	}
}

func TestBadFiles(t *testing.T) {
	for _, tc := range []struct {
		data []byte
		want string
	}{
		{[]byte("not numpy"), "magic"},
		{handMade("{'descr': '<V8', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)), "unsupported dtype"},
		{handMade("{'descr': '<f4', 'shape': (2,), }", make([]byte, 8)), "missing key"},
		{handMade("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", make([]byte, 8)), "reading 3 elements"},
	} {
		_, err := Read(bytes.NewReader(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
}
