package ettest

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/interp/npy"
	"github.com/fxport/fxport/ir"
)

// HexF32 is v as little-endian float32s in hex (an IR inline weight).
func HexF32(v ...float64) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
	}
	return hex.EncodeToString(b)
}

// HexF64 is v as little-endian float64s in hex.
func HexF64(v ...float64) string {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return hex.EncodeToString(b)
}

// HexI64 is v as little-endian int64s in hex.
func HexI64(v ...int64) string {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return hex.EncodeToString(b)
}

// HexI8 is n int8 weights spread over [-127, 127], in hex.
func HexI8(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(int8(math.Round(127 * math.Sin(float64(i*13+5)))))
	}
	return hex.EncodeToString(b)
}

// Input is a deterministic float32 tensor of shape: element i is
// 1.2·sin(7i+3), so |x| ≤ 1.2 and no two neighbours are equal.
func Input(shape ...int64) *interp.Tensor {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = math.Sin(float64(i*7+3)) * 1.2
	}
	return interp.FromFloat64(ir.Float32, shape, xs)
}

// Inputs makes a tensor for each user input of p, of its dtype and static
// shape, element k of input i being gen(i, k); a dynamic shape fails the
// test.
func Inputs(t testing.TB, p *ir.Program, gen func(i, k int) float64) []interp.Value {
	t.Helper()
	var ins []interp.Value
	for i, v := range interp.UserInputs(p) {
		shape, ok := v.Tensor().StaticShape()
		if !ok {
			t.Fatalf("input %s: static shapes only", v)
		}
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		xs := make([]float64, n)
		for k := range xs {
			xs[k] = gen(i, k)
		}
		ins = append(ins, interp.FromFloat64(v.Tensor().DType, shape, xs))
	}
	return ins
}

// CorpusInputs reads a corpus case's inputs, dir/io/input_0.npy,
// input_1.npy, … up to the first one missing.
func CorpusInputs(t testing.TB, dir string) []interp.Value {
	t.Helper()
	var ins []interp.Value
	for i := 0; ; i++ {
		x, err := npy.ReadFile(filepath.Join(dir, "io", fmt.Sprintf("input_%d.npy", i)))
		if os.IsNotExist(err) {
			return ins
		} else if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, x)
	}
}
