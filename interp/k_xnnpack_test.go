package interp_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
)

// xnnpack.argmax_pool2d follows XNNPACK's argmax pooling reference
// (test/argmax-pooling-operator-tester.h): window position k = x·kh + y,
// padded positions read the clamped border element, the maximum starts at
// position 0 and moves only to a strictly greater element.
func TestXNNArgmaxPool2d(t *testing.T) {
	nan := math.NaN()
	seq := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i)
		}
		return xs
	}
	for _, c := range []struct {
		name       string
		shape      []int64 // [N, H, W, C]
		in         []float64
		k, pad     []int64
		vals       []float64
		idx        []int64
		valuesNaN0 bool
	}{
		// The two 5s tie: position 1 (x 0, y 1) comes before position 2
		// (x 1, y 0); a window of equal values reports position 0.
		{"column-order-ties", []int64{1, 2, 4, 1}, []float64{1, 5, 2, 2, 5, 1, 2, 2}, []int64{2, 2}, []int64{0, 0}, []float64{5, 2}, []int64{1, 0}, false},
		// Padding 1 on a 3×3 ramp: windows read clamped border elements.
		{"padding-clamps", []int64{1, 3, 3, 1}, seq(9), []int64{2, 2}, []int64{1, 1}, []float64{0, 2, 6, 8}, []int64{0, 2, 1, 3}, false},
		// Batches and channels (NHWC): the maximum of each 2×2 window is
		// at y 1, x 1, position 3.
		{"nhwc", []int64{2, 2, 2, 2}, seq(16), []int64{2, 2}, []int64{0, 0}, []float64{6, 7, 14, 15}, []int64{3, 3, 3, 3}, false},
		// Non-square window: 1×3, positions are x·1 + y = x.
		{"1x3", []int64{1, 1, 6, 1}, []float64{0, 4, 1, 3, 3, 2}, []int64{1, 3}, []int64{0, 0}, []float64{4, 3}, []int64{1, 0}, false},
		// A NaN after position 0 is never greater; at position 0 it stays.
		{"nan-later", []int64{1, 2, 2, 1}, []float64{1, nan, 2, 0}, []int64{2, 2}, []int64{0, 0}, []float64{2}, []int64{1}, false},
		{"nan-first", []int64{1, 2, 2, 1}, []float64{nan, 1, 2, 3}, []int64{2, 2}, []int64{0, 0}, nil, []int64{0}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := interp.FromFloat64(ir.Float32, c.shape, c.in)
			outs, err := interp.RunOp(ir.MustLookupOp("xnnpack.argmax_pool2d.default"), []interp.Value{x, ints(c.k), ints(c.pad)})
			if err != nil {
				t.Fatal(err)
			}
			v, i := outs[0].(*interp.Tensor), outs[1].(*interp.Tensor)
			if v.DType != ir.Float32 || i.DType != ir.Int32 {
				t.Fatalf("dtypes %s, %s; want f32, i32", v.DType, i.DType)
			}
			if c.valuesNaN0 {
				if !math.IsNaN(v.Float64s()[0]) {
					t.Fatalf("values %v, want NaN first", v.Float64s())
				}
			} else if fmt.Sprint(v.Float64s()) != fmt.Sprint(c.vals) {
				t.Errorf("values %v, want %v", v.Float64s(), c.vals)
			}
			if got := fmt.Sprint(i.Float64s()); got != fmt.Sprint(c.idx) {
				t.Errorf("indices %v, want %v", got, c.idx)
			}
		})
	}
	for _, bad := range []struct {
		shape  []int64
		k, pad []int64
	}{{[]int64{1, 2, 2, 1}, []int64{1, 1}, []int64{0, 0}}, {[]int64{2, 2, 1}, []int64{2, 2}, []int64{0, 0}}, {[]int64{1, 2, 2, 1}, []int64{2, 2}, []int64{-1, 0}}} {
		x := interp.FromFloat64(ir.Float32, bad.shape, make([]float64, 4))
		if _, err := interp.RunOp(ir.MustLookupOp("xnnpack.argmax_pool2d.default"), []interp.Value{x, ints(bad.k), ints(bad.pad)}); err == nil {
			t.Errorf("shape %v kernel %v padding %v: no error", bad.shape, bad.k, bad.pad)
		}
	}
}

func ints(xs []int64) []interp.Value {
	out := make([]interp.Value, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
