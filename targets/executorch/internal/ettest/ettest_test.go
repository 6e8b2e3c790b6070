package ettest_test

import (
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/internal/ettest"
)

func TestHex(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{ettest.HexF32(1, -2), "0000803f000000c0"},
		{ettest.HexF64(1), "000000000000f03f"},
		{ettest.HexI64(-1, 2), "ffffffffffffffff0200000000000000"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	b, err := hex.DecodeString(ettest.HexI8(64))
	if err != nil || len(b) != 64 {
		t.Fatalf("HexI8(64): %d bytes, %v", len(b), err)
	}
	lo, hi := 0, 0
	for _, x := range b {
		v := int(int8(x))
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo < -127 || hi > 127 || lo > -100 || hi < 100 {
		t.Errorf("HexI8 spans [%d, %d], want most of [-127, 127]", lo, hi)
	}
}

func TestInput(t *testing.T) {
	x := ettest.Input(2, 3)
	if x.DType != ir.Float32 || fmt.Sprint(x.Shape) != "[2 3]" {
		t.Fatalf("Input(2, 3) is %s%v", x.DType, x.Shape)
	}
	xs := x.Float64s()
	if want := float64(float32(math.Sin(3) * 1.2)); xs[0] != want {
		t.Errorf("x[0] = %g, want %g", xs[0], want)
	}
	if again := ettest.Input(2, 3).Float64s(); fmt.Sprint(again) != fmt.Sprint(xs) {
		t.Errorf("Input is not deterministic")
	}
	p := ettest.Parse(t, `graph forward(%a: f32[2], %b: i64[3]) {
  return %a, %b
}
`, "inputs.fxir")
	ins := ettest.Inputs(t, p, func(i, k int) float64 { return float64(10*i + k) })
	if len(ins) != 2 || fmt.Sprint(ins[0].(*interp.Tensor).Float64s()) != "[0 1]" || ins[1].(*interp.Tensor).DType != ir.Int64 || fmt.Sprint(ins[1].(*interp.Tensor).Float64s()) != "[10 11 12]" {
		t.Errorf("Inputs = %v", ins)
	}
}

func TestXNNPACKExclude(t *testing.T) {
	plain := ettest.XNNPACKExclude(t, "")
	s := ettest.XNNPACKExclude(t, "AddConfig")
	if !strings.Contains(s, "xnnpack-partition{partition-exclude=AddConfig}") || strings.Replace(s, "{partition-exclude=AddConfig}", "", 1) != plain {
		t.Errorf("pipeline %s, plain %s", s, plain)
	}
}

// QS8Linear exports for the portable backend; the lowered program's
// interpreter outputs equal the unlowered one's (Same), and Emit gives a
// file with one method.
func TestQS8LinearExports(t *testing.T) {
	src := ettest.QS8Linear()
	in := []interp.Value{ettest.Input(5, 4)}
	ref := ettest.Parse(t, src, "q.fxir")
	want, err := interp.Run(ref, in, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := ettest.Parse(t, src, "q.fxir")
	ettest.Lower(t, p, "executorch.portable", "")
	got, err := interp.Run(p, in, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ettest.Same(t, "lowered", got.Outputs, want.Outputs)
	f, b := ettest.Emit(t, p, "q.pte", emit.Options{NoMetadataMethod: true})
	if len(f.Methods) != 1 || len(b) == 0 {
		t.Errorf("%d methods, %d bytes", len(f.Methods), len(b))
	}
	if _, d, db := ettest.EmitWithData(t, p, "q.pte", emit.Options{}); d != nil || db != nil {
		t.Errorf("data file without external constants")
	}
}

// recorder notes failures instead of failing the test.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	panic(r)
}

// Same reports a changed element, a changed dtype and degenerate outputs.
func TestSameCatchesDifferences(t *testing.T) {
	x := interp.FromFloat64(ir.Float32, []int64{5}, []float64{1, 2, 3, 4, 5})
	y := interp.FromFloat64(ir.Float32, []int64{5}, []float64{1, 2, 3, 4, 6})
	z := interp.FromFloat64(ir.Float64, []int64{5}, []float64{1, 2, 3, 4, 5})
	flat := interp.FromFloat64(ir.Float32, []int64{5}, []float64{1, 1, 1, 1, 2})
	for _, c := range []struct {
		name      string
		got, want interp.Value
		err       string
	}{
		{"same", x, x, ""},
		{"element", y, x, "[4] = 6, interpreter 5"},
		{"dtype", z, x, "float64[5], interpreter float32[5]"},
		{"degenerate", flat, flat, "degenerate"},
	} {
		r := &recorder{TB: t}
		func() {
			defer func() {
				if v := recover(); v != nil && v != r {
					panic(v)
				}
			}()
			ettest.Same(r, c.name, []interp.Value{c.got}, []interp.Value{c.want})
		}()
		all := strings.Join(r.errs, "\n")
		if c.err == "" && all != "" || c.err != "" && !strings.Contains(all, c.err) {
			t.Errorf("%s: errors %q, want one containing %q", c.name, all, c.err)
		}
	}
}
