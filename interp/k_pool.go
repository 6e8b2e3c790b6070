package interp

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
)

// Pooling of any spatial rank: max (with indices), average and adaptive.

func init() {
	register(kMaxPool(false), ir.OpAtenMaxPool1d, ir.OpAtenMaxPool2d, ir.OpAtenMaxPool3d)
	register(kMaxPool(true), ir.OpAtenMaxPool2dWithIndices, ir.OpAtenMaxPool3dWithIndices)
	register(kAvgPool, ir.OpAtenAvgPool1d, ir.OpAtenAvgPool2d, ir.OpAtenAvgPool3d)
	register(kAdaptiveAvgPool, ir.OpAtenAdaptiveAvgPool1d, ir.OpAten_AdaptiveAvgPool2d, ir.OpAtenAdaptiveAvgPool2d, ir.OpAten_AdaptiveAvgPool3d)
	register(kAdaptiveMaxPool, ir.OpAtenAdaptiveMaxPool2d)
}

// poolInput views x as [planes, *spatial] for nsp spatial dims; it returns
// the leading shape to restore.
func poolInput(x *Tensor, nsp int) (*Tensor, []int64, error) {
	if x.Rank() != nsp+1 && x.Rank() != nsp+2 {
		return nil, nil, fmt.Errorf("expected %dD or %dD input for %d-d pooling, got %v", nsp+1, nsp+2, nsp, x.Shape)
	}
	lead := x.Shape[:x.Rank()-nsp]
	v, err := viewAs(x, append([]int64{numel(lead)}, x.Shape[x.Rank()-nsp:]...), true)
	return v, append([]int64{}, lead...), err
}

// poolOutSize is the pooled size of one dim.
func poolOutSize(in, k, s, pad, dil int64, ceil bool) int64 {
	num := in + 2*pad - dil*(k-1) - 1
	var out int64
	if ceil {
		out = (num+s-1)/s + 1
		if (out-1)*s >= in+pad {
			out--
		}
	} else {
		out = num/s + 1
	}
	return out
}

type poolArgs struct {
	k, s, pad, dil []int64
	ceil           bool
}

func readPoolArgs(c *call, withDil bool) (poolArgs, int, error) {
	var p poolArgs
	var err error
	if p.k, err = c.ints("kernel_size"); err != nil {
		return p, 0, err
	}
	nsp := c.schema.Info().Schema.Args[c.schema.ArgIndex("kernel_size")].Type.ListLen
	if nsp == 0 {
		nsp = len(p.k)
	}
	if p.k, err = expandParam(p.k, nsp, "kernel_size"); err != nil {
		return p, 0, err
	}
	if p.s, err = c.ints("stride"); err != nil {
		return p, 0, err
	}
	if len(p.s) == 0 {
		p.s = p.k
	} else if p.s, err = expandParam(p.s, nsp, "stride"); err != nil {
		return p, 0, err
	}
	if p.pad, err = c.ints("padding"); err != nil {
		return p, 0, err
	}
	if p.pad, err = expandParam(p.pad, nsp, "padding"); err != nil {
		return p, 0, err
	}
	p.dil = repeatN(1, int64(nsp))
	if withDil {
		if p.dil, err = c.ints("dilation"); err != nil {
			return p, 0, err
		}
		if p.dil, err = expandParam(p.dil, nsp, "dilation"); err != nil {
			return p, 0, err
		}
	}
	if p.ceil, err = c.bool("ceil_mode"); err != nil {
		return p, 0, err
	}
	for i := 0; i < nsp; i++ {
		if p.pad[i] > p.k[i]/2 {
			return p, 0, fmt.Errorf("pad should be at most half of effective kernel size, but got pad=%d, kernel_size=%d", p.pad[i], p.k[i])
		}
		if p.s[i] <= 0 || p.k[i] <= 0 || p.dil[i] <= 0 {
			return p, 0, fmt.Errorf("kernel size, stride and dilation must be positive")
		}
	}
	return p, nsp, nil
}

func kMaxPool(withIndices bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		p, nsp, err := readPoolArgs(c, true)
		if err != nil {
			return nil, err
		}
		v, lead, err := poolInput(x, nsp)
		if err != nil {
			return nil, err
		}
		insp := v.Shape[1:]
		outsp := make([]int64, nsp)
		for i := range outsp {
			outsp[i] = poolOutSize(insp[i], p.k[i], p.s[i], p.pad[i], p.dil[i], p.ceil)
			if outsp[i] <= 0 {
				return nil, fmt.Errorf("max_pool: output size is too small for input %v", x.Shape)
			}
		}
		planes := v.Shape[0]
		inVol, outVol := numel(insp), numel(outsp)
		inSt := contiguousStrides(insp)
		vals := v.To(ir.Float64).Contiguous().floats()
		res := make([]float64, planes*outVol)
		idx := make([]int64, planes*outVol)
		pos := make([]int64, nsp)
		for pl := int64(0); pl < planes; pl++ {
			img := vals[pl*inVol : (pl+1)*inVol]
			forEachPos(outsp, func(op []int64, k int64) {
				best, bestIdx := math.Inf(-1), int64(-1)
				forEachPos(p.k, func(kp []int64, _ int64) {
					off := int64(0)
					for d := 0; d < nsp; d++ {
						pos[d] = op[d]*p.s[d] - p.pad[d] + kp[d]*p.dil[d]
						if pos[d] < 0 || pos[d] >= insp[d] {
							return
						}
						off += pos[d] * inSt[d]
					}
					if bestIdx < 0 {
						bestIdx = off
					}
					if val := img[off]; val > best || math.IsNaN(val) {
						best, bestIdx = val, off
					}
				})
				res[pl*outVol+k], idx[pl*outVol+k] = best, bestIdx
			})
		}
		outShape := append(append([]int64{}, lead...), outsp...)
		out := FromFloat64(x.DType, outShape, res)
		if !withIndices {
			return one(out), nil
		}
		return []Value{out, FromInt64(ir.Int64, outShape, idx)}, nil
	}
}

func kAvgPool(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	p, nsp, err := readPoolArgs(c, false)
	if err != nil {
		return nil, err
	}
	include, err := c.bool("count_include_pad")
	if err != nil {
		return nil, err
	}
	divisor, hasDiv := int64(0), false
	if c.has("divisor_override") {
		if divisor, hasDiv, err = c.optInt("divisor_override"); err != nil {
			return nil, err
		}
		if hasDiv && divisor == 0 {
			return nil, fmt.Errorf("divisor must be not zero")
		}
	}
	if !isFloatDT(x.DType) {
		return nil, fmt.Errorf("avg_pool is not supported for %s", x.DType)
	}
	v, lead, err := poolInput(x, nsp)
	if err != nil {
		return nil, err
	}
	insp := v.Shape[1:]
	outsp := make([]int64, nsp)
	for i := range outsp {
		outsp[i] = poolOutSize(insp[i], p.k[i], p.s[i], p.pad[i], 1, p.ceil)
		if outsp[i] <= 0 {
			return nil, fmt.Errorf("avg_pool: output size is too small for input %v", x.Shape)
		}
	}
	planes := v.Shape[0]
	inVol, outVol := numel(insp), numel(outsp)
	inSt := contiguousStrides(insp)
	vals := v.Contiguous().floats()
	res := make([]float64, planes*outVol)
	start, end := make([]int64, nsp), make([]int64, nsp)
	for pl := int64(0); pl < planes; pl++ {
		img := vals[pl*inVol : (pl+1)*inVol]
		forEachPos(outsp, func(op []int64, k int64) {
			poolSize := int64(1)
			for d := 0; d < nsp; d++ {
				start[d] = op[d]*p.s[d] - p.pad[d]
				end[d] = min(start[d]+p.k[d], insp[d]+p.pad[d])
				poolSize *= end[d] - start[d]
				start[d] = max(start[d], 0)
				end[d] = min(end[d], insp[d])
			}
			win := make([]int64, nsp)
			count := int64(1)
			for d := range win {
				win[d] = end[d] - start[d]
				count *= max(win[d], 0)
			}
			sum := 0.0
			if count > 0 {
				forEachPos(win, func(wp []int64, _ int64) {
					off := int64(0)
					for d := 0; d < nsp; d++ {
						off += (start[d] + wp[d]) * inSt[d]
					}
					sum += img[off]
				})
			}
			div := count
			switch {
			case hasDiv:
				div = divisor
			case include:
				div = poolSize
			}
			res[pl*outVol+k] = sum / float64(div)
		})
	}
	return one(FromFloat64(x.DType, append(append([]int64{}, lead...), outsp...), res)), nil
}

// adaptiveWindows returns, per output position of one dim, the input range.
func adaptiveWindows(in, out int64) ([]int64, []int64) {
	s, e := make([]int64, out), make([]int64, out)
	for i := int64(0); i < out; i++ {
		s[i] = (i * in) / out
		e[i] = ((i+1)*in + out - 1) / out
	}
	return s, e
}

func adaptivePool(c *call, isMax bool) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	outsp, err := c.ints("output_size")
	if err != nil {
		return nil, err
	}
	nsp := len(outsp)
	v, lead, err := poolInput(x, nsp)
	if err != nil {
		return nil, err
	}
	if !isFloatDT(x.DType) && !isMax {
		return nil, fmt.Errorf("adaptive_avg_pool is not supported for %s", x.DType)
	}
	insp := v.Shape[1:]
	for i, o := range outsp {
		if o <= 0 && insp[i] > 0 {
			return nil, fmt.Errorf("adaptive pooling output size must be positive, got %v", outsp)
		}
	}
	starts, ends := make([][]int64, nsp), make([][]int64, nsp)
	for d := range outsp {
		starts[d], ends[d] = adaptiveWindows(insp[d], outsp[d])
	}
	planes := v.Shape[0]
	inVol, outVol := numel(insp), numel(outsp)
	inSt := contiguousStrides(insp)
	vals := v.To(ir.Float64).Contiguous().floats()
	res := make([]float64, planes*outVol)
	idx := make([]int64, planes*outVol)
	for pl := int64(0); pl < planes; pl++ {
		img := vals[pl*inVol : (pl+1)*inVol]
		forEachPos(outsp, func(op []int64, k int64) {
			win := make([]int64, nsp)
			for d := range win {
				win[d] = ends[d][op[d]] - starts[d][op[d]]
			}
			sum, best, bestIdx := 0.0, math.Inf(-1), int64(-1)
			forEachPos(win, func(wp []int64, _ int64) {
				off := int64(0)
				for d := 0; d < nsp; d++ {
					off += (starts[d][op[d]] + wp[d]) * inSt[d]
				}
				val := img[off]
				sum += val
				if bestIdx < 0 {
					bestIdx = off
				}
				if val > best || math.IsNaN(val) {
					best, bestIdx = val, off
				}
			})
			if isMax {
				res[pl*outVol+k], idx[pl*outVol+k] = best, bestIdx
			} else {
				res[pl*outVol+k] = sum / float64(numel(win))
			}
		})
	}
	outShape := append(append([]int64{}, lead...), outsp...)
	out := FromFloat64(x.DType, outShape, res)
	if !isMax {
		return one(out), nil
	}
	return []Value{out, FromInt64(ir.Int64, outShape, idx)}, nil
}

func kAdaptiveAvgPool(c *call) ([]Value, error) { return adaptivePool(c, false) }
func kAdaptiveMaxPool(c *call) ([]Value, error) { return adaptivePool(c, true) }
