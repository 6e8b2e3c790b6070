package interp

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// xnnpack.argmax_pool2d is XNNPACK's argmax pooling as its kernels compute
// it (the XNNPACK partitioner puts it in delegate regions, and the .pte
// runner executes XNNArgMaxPooling2d with this kernel).
func init() {
	register(kXNNArgmaxPool2d, ir.OpXnnpackArgmaxPool2d)
}

// kXNNArgmaxPool2d pools an [N, H, W, C] input over kh×kw windows at
// stride kh×kw that start at −padding. A window is read in XNNPACK's
// indirection order, k = x·kh + y (column by column), with each padded
// position reading the nearest border element (the clamp XNNPACK's
// indirection buffer applies); the maximum starts at position 0 and is
// replaced only by a strictly greater element, so the first maximum wins
// and a NaN is reported only at position 0. Indices are int32 positions k.
func kXNNArgmaxPool2d(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	k, err := c.ints("kernel_size")
	if err != nil {
		return nil, err
	}
	pad, err := c.ints("padding")
	if err != nil {
		return nil, err
	}
	if k, err = expandParam(k, 2, "kernel_size"); err != nil {
		return nil, err
	}
	if pad, err = expandParam(pad, 2, "padding"); err != nil {
		return nil, err
	}
	if x.Rank() != 4 {
		return nil, fmt.Errorf("argmax_pool2d: expected a 4-D [N, H, W, C] input, got %v", x.Shape)
	}
	if k[0] < 1 || k[1] < 1 || k[0]*k[1] < 2 || pad[0] < 0 || pad[1] < 0 {
		return nil, fmt.Errorf("argmax_pool2d: kernel %v (at least 2 elements) and padding %v (non-negative)", k, pad)
	}
	n, h, w, ch := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	kh, kw := k[0], k[1]
	oh, ow := (h+2*pad[0])/kh, (w+2*pad[1])/kw
	if oh <= 0 || ow <= 0 || h == 0 || w == 0 {
		return nil, fmt.Errorf("argmax_pool2d: %v padded by %v holds no %v window", x.Shape, pad, k)
	}
	clamp := func(v, hi int64) int64 { return max(0, min(v, hi-1)) }
	vals := x.To(ir.Float64).Contiguous().floats()
	outV := make([]float64, n*oh*ow*ch)
	outI := make([]int64, n*oh*ow*ch)
	for b := int64(0); b < n; b++ {
		for oy := int64(0); oy < oh; oy++ {
			for ox := int64(0); ox < ow; ox++ {
				o := ((b*oh+oy)*ow + ox) * ch
				for cc := int64(0); cc < ch; cc++ {
					best, bestK := 0.0, int64(0)
					for pos := int64(0); pos < kh*kw; pos++ {
						px, py := pos/kh, pos%kh
						iy := clamp(oy*kh+py-pad[0], h)
						ix := clamp(ox*kw+px-pad[1], w)
						v := vals[((b*h+iy)*w+ix)*ch+cc]
						if pos == 0 || v > best {
							best, bestK = v, pos
						}
					}
					outV[o+cc], outI[o+cc] = best, bestK
				}
			}
		}
	}
	shape := []int64{n, oh, ow, ch}
	return []Value{FromFloat64(x.DType, shape, outV), FromInt64(ir.Int32, shape, outI)}, nil
}
