package difftest

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/interp"
)

// The CUDA backend prepare (ET-B03, passes/et_b03_cuda.go) casts float
// weights and inputs to bfloat16 on purpose; the other backend prepares
// change no values, so the allowance on the shared "backend-prepare" driver
// applies to executorch.cuda exports only.
func init() {
	Declare(Allowance{
		Pass:    "backend-prepare",
		Backend: "executorch.cuda",
		Reason:  "the executorch.cuda prepare (ET-B03) computes in bfloat16, as the Python prepare_for_cuda does; outputs agree within bfloat16 precision (abs and rel 3e-2)",
		Check:   withinBF16,
	})
}

func withinBF16(before, after []interp.Value) error {
	if len(before) != len(after) {
		return fmt.Errorf("%d user outputs, want %d", len(after), len(before))
	}
	for i := range before {
		w, ok1 := before[i].(*interp.Tensor)
		g, ok2 := after[i].(*interp.Tensor)
		if !ok1 || !ok2 || !w.DType.IsFloat() {
			if err := Compare(after[i], before[i], nil); err != nil {
				return fmt.Errorf("user output %d: %w", i, err)
			}
			continue
		}
		wv, gv := w.Float64s(), g.Float64s()
		if len(wv) != len(gv) {
			return fmt.Errorf("user output %d: %d values, want %d", i, len(gv), len(wv))
		}
		for j := range wv {
			if d := math.Abs(gv[j] - wv[j]); d > 3e-2+3e-2*math.Abs(wv[j]) || math.IsNaN(d) != math.IsNaN(wv[j]) {
				return fmt.Errorf("user output %d value %d: got %v, want %v (beyond bfloat16 precision)", i, j, gv[j], wv[j])
			}
		}
	}
	return nil
}
