package ort

import (
	"encoding/binary"
	"math"
	"testing"
)

func npyBytes(descr, shape string, body []byte) []byte {
	h := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + shape + "), }"
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	out := []byte("\x93NUMPY\x01\x00")
	out = binary.LittleEndian.AppendUint16(out, uint16(len(h)))
	return append(append(out, h...), body...)
}

func TestParseNPY(t *testing.T) {
	body := make([]byte, 0, 24)
	for _, f := range []float32{1, -2.5, 3, 4, 5, 6} {
		body = binary.LittleEndian.AppendUint32(body, math.Float32bits(f))
	}
	tt, err := ParseNPY(npyBytes("<f4", "2, 3", body))
	if err != nil {
		t.Fatal(err)
	}
	xs, err := tt.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	if len(tt.Shape) != 2 || tt.Shape[1] != 3 || xs[1] != -2.5 {
		t.Fatalf("got %v %v", tt.Shape, xs)
	}
	if _, err := ParseNPY(npyBytes("<f4", "2, 4", body)); err == nil {
		t.Error("size mismatch accepted")
	}
	if _, err := ParseNPY([]byte("nope")); err == nil {
		t.Error("bad magic accepted")
	}
	if _, err := ParseNPY(npyBytes("<c8", "3", body)); err == nil {
		t.Error("complex accepted")
	}
}

func TestRunIdentityModel(t *testing.T) {
	if ok, why := Available(); !ok {
		t.Skipf("ONNX Runtime unavailable: %s", why)
	}
	// A hand-encoded ModelProto: ir_version 8, opset 18, graph Neg(x) -> y,
	// x and y float[2].
	model := encodeNegModel()
	in := Tensor{Name: "x", Type: TypeFloat, Shape: []int64{2}, Data: binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, math.Float32bits(1.5)), math.Float32bits(-2))}
	out, err := Run(model, []Tensor{in}, []string{"y"})
	if err != nil {
		t.Fatal(err)
	}
	xs, _ := out[0].Float64s()
	if len(xs) != 2 || xs[0] != -1.5 || xs[1] != 2 {
		t.Fatalf("got %v", xs)
	}
	if _, err := Run([]byte("garbage"), []Tensor{in}, []string{"y"}); err == nil {
		t.Error("garbage model loaded")
	}
}

// Minimal protobuf writer for the test model (no dependency on the target).
func encodeNegModel() []byte {
	tag := func(f, wt int) []byte { return binary.AppendUvarint(nil, uint64(f<<3|wt)) }
	bytesF := func(f int, b []byte) []byte {
		out := tag(f, 2)
		out = binary.AppendUvarint(out, uint64(len(b)))
		return append(out, b...)
	}
	varintF := func(f int, v uint64) []byte { return append(tag(f, 0), binary.AppendUvarint(nil, v)...) }
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	dim := bytesF(1, varintF(1, 2))
	tensorType := cat(varintF(1, 1), bytesF(2, dim))
	typ := bytesF(1, tensorType)
	vi := func(name string) []byte { return cat(bytesF(1, []byte(name)), bytesF(2, typ)) }
	node := cat(bytesF(1, []byte("x")), bytesF(2, []byte("y")), bytesF(4, []byte("Neg")))
	graph := cat(bytesF(1, node), bytesF(2, []byte("g")), bytesF(11, vi("x")), bytesF(12, vi("y")))
	opset := cat(bytesF(1, []byte("")), varintF(2, 18))
	return cat(varintF(1, 8), bytesF(8, opset), bytesF(7, graph))
}
