package interp_test

import (
	"math"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
)

// torch's cummax/cummin take every new NaN as the running value, so the
// index is the latest NaN, and only a NaN replaces a NaN.
func TestCummaxCumminNaNIndex(t *testing.T) {
	nan := math.NaN()
	x := interp.FromFloat64(ir.Float32, []int64{5}, []float64{1, nan, 3, nan, 0})
	for _, c := range []struct {
		op   string
		want []int64
	}{
		{"aten.cummax.default", []int64{0, 1, 1, 3, 3}},
		{"aten.cummin.default", []int64{0, 1, 1, 3, 3}},
	} {
		outs, err := interp.RunOp(ir.MustLookupOp(c.op), []interp.Value{x, int64(0)})
		if err != nil {
			t.Fatalf("%s: %v", c.op, err)
		}
		idx := outs[1].(*interp.Tensor).Int64s()
		for i := range c.want {
			if idx[i] != c.want[i] {
				t.Fatalf("%s indices = %v, want %v", c.op, idx, c.want)
			}
		}
	}
}
