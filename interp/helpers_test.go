package interp

import (
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

// runIR parses an IR program and runs it on inputs.
func runIR(t *testing.T, src string, in ...Value) []Value {
	t.Helper()
	r, err := runIRErr(t, src, in...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func runIRErr(t *testing.T, src string, in ...Value) ([]Value, error) {
	t.Helper()
	p, err := ir.Parse([]byte(src), t.Name())
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(p, in, Options{Seed: 1})
	if err != nil {
		return nil, err
	}
	return r.Outputs, nil
}

func f32(shape []int64, vals ...float64) *Tensor { return FromFloat64(ir.Float32, shape, vals) }
func f64(shape []int64, vals ...float64) *Tensor { return FromFloat64(ir.Float64, shape, vals) }
func i64(shape []int64, vals ...int64) *Tensor   { return FromInt64(ir.Int64, shape, vals) }
func i32(shape []int64, vals ...int64) *Tensor   { return FromInt64(ir.Int32, shape, vals) }
func b8(shape []int64, vals ...int64) *Tensor    { return FromInt64(ir.Bool, shape, vals) }

func sh(dims ...int64) []int64 { return dims }

// wantT checks a tensor's dtype, shape and values (floats within 1e-6
// relative, NaN equal to NaN).
func wantT(t *testing.T, got Value, dt ir.DType, shape []int64, vals ...float64) {
	t.Helper()
	g, ok := got.(*Tensor)
	if !ok {
		t.Fatalf("got %s, want a tensor", Describe(got))
	}
	if g.DType != dt || !sameShape(g.Shape, shape) {
		t.Fatalf("got %s%v, want %s%v", g.DType, g.Shape, dt, shape)
	}
	gv := g.Float64s()
	if len(gv) != len(vals) {
		t.Fatalf("got %d values, want %d", len(gv), len(vals))
	}
	for i := range vals {
		a, b := gv[i], vals[i]
		switch {
		case math.IsNaN(b):
			if !math.IsNaN(a) {
				t.Fatalf("value %d: got %g, want NaN (all: %v)", i, a, gv)
			}
		case math.IsInf(b, 0):
			if a != b {
				t.Fatalf("value %d: got %g, want %g (all: %v)", i, a, b, gv)
			}
		case math.Abs(a-b) > 1e-6*math.Max(1, math.Abs(b)):
			t.Fatalf("value %d: got %.9g, want %.9g (all: %v)", i, a, b, gv)
		}
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not contain %q", err, p)
		}
	}
}

var nan = math.NaN()
var inf = math.Inf(1)
