package interp

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
)

// Upsampling (nearest, nearest-exact, linear, bilinear, trilinear, bicubic)
// as separable per-dim resampling, and grid_sampler_2d.

func init() {
	register(kUpsample("nearest", false), ir.OpAtenUpsampleNearest1dVec, ir.OpAtenUpsampleNearest2dVec, ir.OpAtenUpsampleNearest3dVec)
	register(kUpsample("nearest-exact", false), ir.OpAten_UpsampleNearestExact2dVec)
	register(kUpsample("linear", true), ir.OpAtenUpsampleLinear1dVec, ir.OpAtenUpsampleBilinear2dVec, ir.OpAtenUpsampleTrilinear3dVec)
	register(kUpsample("cubic", true), ir.OpAtenUpsampleBicubic2dVec)
	register(kUpsampleScales("nearest", false), ir.OpAtenUpsampleNearest2d)
	register(kUpsampleScales("linear", true), ir.OpAtenUpsampleBilinear2d)
	register(kGridSampler, ir.OpAtenGridSampler2d)
}

type tap struct {
	i int64
	w float64
}

// areaScale is torch's area_pixel_compute_scale.
func areaScale(in, out int64, align bool, scale float64, hasScale bool) float64 {
	if align {
		if out > 1 {
			return float64(in-1) / float64(out-1)
		}
		return 0
	}
	if hasScale && scale > 0 {
		return 1 / scale
	}
	return float64(in) / float64(out)
}

// resampleTaps returns, per output index, the weighted input indices.
func resampleTaps(mode string, in, out int64, align bool, scale float64, hasScale bool) [][]tap {
	taps := make([][]tap, out)
	switch mode {
	case "nearest", "nearest-exact":
		s := areaScale(in, out, false, scale, hasScale)
		for j := int64(0); j < out; j++ {
			var src int64
			if mode == "nearest" {
				src = int64(math.Floor(float64(j) * s))
			} else {
				src = int64(math.Floor((float64(j) + 0.5) * s))
			}
			taps[j] = []tap{{min(src, in-1), 1}}
		}
	case "linear":
		s := areaScale(in, out, align, scale, hasScale)
		for j := int64(0); j < out; j++ {
			var src float64
			if align {
				src = float64(j) * s
			} else {
				src = math.Max((float64(j)+0.5)*s-0.5, 0)
			}
			i0 := min(int64(src), in-1)
			i1 := min(i0+1, in-1)
			l := src - float64(i0)
			taps[j] = []tap{{i0, 1 - l}, {i1, l}}
		}
	case "cubic":
		s := areaScale(in, out, align, scale, hasScale)
		for j := int64(0); j < out; j++ {
			var src float64
			if align {
				src = float64(j) * s
			} else {
				src = (float64(j)+0.5)*s - 0.5
			}
			i0 := int64(math.Floor(src))
			t := src - float64(i0)
			ws := cubicWeights(t)
			for k := int64(-1); k <= 2; k++ {
				taps[j] = append(taps[j], tap{min(max(i0+k, 0), in-1), ws[k+1]})
			}
		}
	}
	return taps
}

// cubicWeights are the cubic convolution weights (A = -0.75) for the taps
// at offsets -1, 0, 1, 2 from floor(src).
func cubicWeights(t float64) [4]float64 {
	const a = -0.75
	c1 := func(x float64) float64 { return ((a+2)*x-(a+3))*x*x + 1 }
	c2 := func(x float64) float64 { return ((a*x-5*a)*x+8*a)*x - 4*a }
	return [4]float64{c2(t + 1), c1(t), c1(1 - t), c2(2 - t)}
}

// resampleDim applies taps along dim d of a float64 tensor.
func resampleDim(t *Tensor, d int, taps [][]tap) *Tensor {
	p, perm, outer, n := moveLast(t, d)
	in := p.floats()
	out := int64(len(taps))
	res := make([]float64, outer*out)
	for r := int64(0); r < outer; r++ {
		row := in[r*n : (r+1)*n]
		for j, tp := range taps {
			s := 0.0
			for _, x := range tp {
				s += x.w * row[x.i]
			}
			res[r*out+int64(j)] = s
		}
	}
	shape := append([]int64{}, p.Shape...)
	shape[len(shape)-1] = out
	return restore(FromFloat64(ir.Float64, shape, res), perm)
}

// upsample resamples the trailing len(outSize) dims of x.
func upsample(x *Tensor, mode string, outSize []int64, align bool, scales []float64) (*Tensor, error) {
	nsp := len(outSize)
	if x.Rank() < nsp+1 {
		return nil, fmt.Errorf("upsample expects an input with at least %d dims, got %v", nsp+1, x.Shape)
	}
	if !isFloatDT(x.DType) && mode != "nearest" && mode != "nearest-exact" {
		return nil, fmt.Errorf("upsample (%s) is not supported for %s", mode, x.DType)
	}
	cur := x.To(ir.Float64)
	for i := 0; i < nsp; i++ {
		d := x.Rank() - nsp + i
		if outSize[i] <= 0 {
			return nil, fmt.Errorf("upsample: output size %v must be positive", outSize)
		}
		s, has := 0.0, false
		if i < len(scales) {
			s, has = scales[i], true
		}
		cur = resampleDim(cur, d, resampleTaps(mode, x.Shape[d], outSize[i], align, s, has))
	}
	return cur.To(x.DType), nil
}

func kUpsample(mode string, withAlign bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("input")
		if err != nil {
			return nil, err
		}
		align := false
		if withAlign {
			if align, err = c.bool("align_corners"); err != nil {
				return nil, err
			}
		}
		size, hasSize, err := c.optInts("output_size")
		if err != nil {
			return nil, err
		}
		scales, hasScales, err := c.optFloats("scale_factors")
		if err != nil {
			return nil, err
		}
		switch {
		case hasSize && hasScales:
			return nil, fmt.Errorf("must specify exactly one of output_size and scale_factors")
		case hasSize:
			scales = nil
		case hasScales:
			nsp := len(scales)
			if x.Rank() < nsp {
				return nil, fmt.Errorf("upsample: %d scale factors for an input of rank %d", nsp, x.Rank())
			}
			size = make([]int64, nsp)
			for i, s := range scales {
				size[i] = int64(math.Floor(float64(x.Shape[x.Rank()-nsp+i]) * s))
			}
		default:
			return nil, fmt.Errorf("must specify exactly one of output_size and scale_factors")
		}
		return one0(upsample(x, mode, size, align, scales))
	}
}

func kUpsampleScales(mode string, withAlign bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("self")
		if err != nil {
			return nil, err
		}
		align := false
		if withAlign {
			if align, err = c.bool("align_corners"); err != nil {
				return nil, err
			}
		}
		size, err := c.ints("output_size")
		if err != nil {
			return nil, err
		}
		var scales []float64
		sh, okh, err := c.optFloat("scales_h")
		if err != nil {
			return nil, err
		}
		sw, okw, err := c.optFloat("scales_w")
		if err != nil {
			return nil, err
		}
		if okh && okw {
			scales = []float64{sh, sw}
		}
		return one0(upsample(x, mode, size, align, scales))
	}
}

// gridCoord unnormalizes a grid coordinate and applies the padding mode.
func gridCoord(x float64, size int64, pad int64, align bool) float64 {
	var c float64
	if align {
		c = (x + 1) / 2 * float64(size-1)
	} else {
		c = ((x+1)*float64(size) - 1) / 2
	}
	clip := func(v float64) float64 { return math.Min(math.Max(v, 0), float64(size-1)) }
	switch pad {
	case 1: // border
		c = clip(c)
	case 2: // reflection
		if align {
			c = reflectCoord(c, 0, 2*float64(size-1))
		} else {
			c = reflectCoord(c, -1, 2*float64(size)-1)
		}
		c = clip(c)
	}
	return c
}

// reflectCoord reflects x into [lo/2, hi/2] (bounds given doubled, as torch does).
func reflectCoord(x, twiceLo, twiceHi float64) float64 {
	if twiceLo == twiceHi {
		return 0
	}
	mn := twiceLo / 2
	span := (twiceHi - twiceLo) / 2
	x = math.Abs(x - mn)
	extra := math.Mod(x, span)
	flips := math.Floor(x / span)
	if int64(flips)%2 == 0 {
		return extra + mn
	}
	return span - extra + mn
}

func kGridSampler(c *call) ([]Value, error) {
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	grid, err := c.tensor("grid")
	if err != nil {
		return nil, err
	}
	mode, err := c.int("interpolation_mode")
	if err != nil {
		return nil, err
	}
	pad, err := c.int("padding_mode")
	if err != nil {
		return nil, err
	}
	align, err := c.bool("align_corners")
	if err != nil {
		return nil, err
	}
	if x.Rank() != 4 || grid.Rank() != 4 || grid.Shape[3] != 2 || grid.Shape[0] != x.Shape[0] {
		return nil, fmt.Errorf("grid_sampler_2d expects input [N, C, H, W] and grid [N, Ho, Wo, 2], got %v and %v", x.Shape, grid.Shape)
	}
	if mode > 1 {
		return nil, fmt.Errorf("grid_sampler_2d: bicubic interpolation is not supported by the interpreter")
	}
	n, ch, h, w := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	ho, wo := grid.Shape[1], grid.Shape[2]
	xv := x.To(ir.Float64).Contiguous().floats()
	gv := grid.To(ir.Float64).Contiguous().floats()
	res := make([]float64, n*ch*ho*wo)
	at := func(b, cc, yy, xx int64) float64 {
		if yy < 0 || yy >= h || xx < 0 || xx >= w {
			return 0
		}
		return xv[((b*ch+cc)*h+yy)*w+xx]
	}
	for b := int64(0); b < n; b++ {
		for i := int64(0); i < ho; i++ {
			for j := int64(0); j < wo; j++ {
				g := gv[((b*ho+i)*wo+j)*2:]
				gx := gridCoord(g[0], w, pad, align)
				gy := gridCoord(g[1], h, pad, align)
				for cc := int64(0); cc < ch; cc++ {
					var v float64
					if mode == 1 {
						v = at(b, cc, int64(math.RoundToEven(gy)), int64(math.RoundToEven(gx)))
					} else {
						x0, y0 := math.Floor(gx), math.Floor(gy)
						dx, dy := gx-x0, gy-y0
						xi, yi := int64(x0), int64(y0)
						v = at(b, cc, yi, xi)*(1-dx)*(1-dy) + at(b, cc, yi, xi+1)*dx*(1-dy) +
							at(b, cc, yi+1, xi)*(1-dx)*dy + at(b, cc, yi+1, xi+1)*dx*dy
					}
					res[((b*ch+cc)*ho+i)*wo+j] = v
				}
			}
		}
	}
	return one(FromFloat64(x.DType, []int64{n, ch, ho, wo}, res)), nil
}
