package run

import (
	"fmt"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
)

// DefaultInputs returns deterministic inputs of the method's declared types
// (tensors at their declared sizes, the upper bound when dynamic; other
// values as declared): what `fxport run` uses without --inputs. A tensor
// over opts' MaxTensorBytes is refused.
func (m *Method) DefaultInputs(opts Options) ([]interp.Value, error) {
	var ins []interp.Value
	for i, in := range m.Inputs() {
		if in.Tensor == nil {
			ins = append(ins, in.Const)
			continue
		}
		dt, ok := ir.DTypeFromName(in.Tensor.DType)
		if !ok {
			return nil, fmt.Errorf("%s: method %s: input %d: dtype %s", m.file.Name, m.name, i, in.Tensor.DType)
		}
		if _, err := tensorBytes(in.Tensor.Sizes, dt, opts.maxTensorBytes()); err != nil {
			return nil, fmt.Errorf("%s: method %s: input %d (value %d): %w", m.file.Name, m.name, i, in.Value, err)
		}
		ins = append(ins, Seeded(dt, in.Tensor.Sizes, uint64(i)))
	}
	return ins, nil
}

// Seeded returns deterministic values in [-1, 1) (0/1 for bools, small
// integers for integer dtypes) from a linear congruential sequence.
func Seeded(dt ir.DType, shape []int64, seed uint64) *interp.Tensor {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	x := seed*0x9e3779b97f4a7c15 + 1
	vals := make([]float64, n)
	for i := range vals {
		x = x*6364136223846793005 + 1442695040888963407
		u := float64(x>>11) / float64(1<<53)
		switch {
		case dt == ir.Bool:
			vals[i] = float64(int(u * 2))
		case dt.IsInteger():
			vals[i] = float64(int(u * 8))
		default:
			vals[i] = 2*u - 1
		}
	}
	return interp.FromFloat64(dt, shape, vals)
}
