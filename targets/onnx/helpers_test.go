package onnx

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/fxport/fxport/internal/ort"
	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
)

// needORT skips the test when ONNX Runtime is not installed.
func needORT(t *testing.T) {
	t.Helper()
	if ok, why := ort.Available(); !ok {
		t.Skipf("ONNX Runtime unavailable (%s); `make ort` installs it", why)
	}
}

// randInputs makes deterministic inputs for the program's user inputs,
// binding each symbol to its hint (or 3).
func randInputs(t *testing.T, p *ir.Program, seed int64) []interp.Value {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	var out []interp.Value
	for _, v := range interp.UserInputs(p) {
		tt := v.Tensor()
		if tt == nil {
			t.Fatalf("input %%%s is not a tensor", v.Name)
		}
		var shape []int64
		for _, d := range tt.Shape {
			c, ok := d.Const()
			if !ok {
				name, _ := d.Name()
				c = 3
				if h, ok := p.Env.Hint(name); ok {
					c = h
				}
			}
			shape = append(shape, c)
		}
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		switch {
		case tt.DType.IsFloat():
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = rng.Float64()*4 - 2
			}
			out = append(out, interp.FromFloat64(tt.DType, shape, xs))
		case tt.DType == ir.Bool:
			xs := make([]int64, n)
			for i := range xs {
				xs[i] = int64(rng.Intn(2))
			}
			out = append(out, interp.FromInt64(tt.DType, shape, xs))
		default:
			xs := make([]int64, n)
			for i := range xs {
				xs[i] = int64(rng.Intn(3))
			}
			out = append(out, interp.FromInt64(tt.DType, shape, xs))
		}
	}
	return out
}

func toORT(t *testing.T, v interp.Value) ort.Tensor {
	t.Helper()
	x, ok := v.(*interp.Tensor)
	if !ok {
		t.Fatalf("input %T is not a tensor", v)
	}
	et, err := elemType(x.DType)
	if err != nil {
		t.Fatal(err)
	}
	return ort.Tensor{Type: int32(et), Shape: append([]int64{}, x.Shape...), Data: x.Contiguous().Bytes()}
}

// checkInORT emits p at opset, runs it in ORT and in the interpreter on the
// same inputs, and compares every output within tol.
func checkInORT(t *testing.T, p *ir.Program, opset int, tol float64) *Model {
	t.Helper()
	inputs := randInputs(t, p, 1)
	want, err := interp.Run(p, inputs, interp.Options{})
	if err != nil {
		t.Fatalf("interpreter: %v", err)
	}
	m, err := Emit(p, Options{Opset: opset})
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	var ins []ort.Tensor
	for _, v := range inputs {
		ins = append(ins, toORT(t, v))
	}
	got, err := m.RunORT(ins)
	if err != nil {
		t.Fatalf("ORT: %v", err)
	}
	if len(got) != len(want.Outputs) {
		t.Fatalf("%d outputs, want %d", len(got), len(want.Outputs))
	}
	for i, w := range want.Outputs {
		wt, ok := w.(*interp.Tensor)
		if !ok {
			t.Fatalf("reference output %d is %T", i, w)
		}
		g, err := got[i].Float64s()
		if err != nil {
			t.Fatal(err)
		}
		d := Compare(got[i].Name, g, got[i].Shape, wt.Contiguous().Float64s(), wt.Shape)
		if !d.OK(tol) {
			t.Errorf("output %d %s: %s max abs %g max rel %g", i, d.Name, d.Err, d.MaxAbs, d.MaxRel)
		}
	}
	return m
}

func parse(t *testing.T, src string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), t.Name()+".fxir")
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(p); err != nil {
		t.Fatal(err)
	}
	return p
}

var _ = fmt.Sprint
