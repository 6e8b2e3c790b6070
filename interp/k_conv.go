package interp

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/fxport/fxport/ir"
)

// Convolutions of any spatial rank, as im2col + GEMM (gonum BLAS) for the
// forward direction and GEMM + col2im for transposed convolutions.

func init() {
	register(kConvolution, ir.OpAtenConvolution)
	register(kConvN(false, false), ir.OpAtenConv1d, ir.OpAtenConv2d, ir.OpAtenConv3d)
	register(kConvN(false, true), ir.OpAtenConv1dPadding, ir.OpAtenConv2dPadding, ir.OpAtenConv3dPadding)
	register(kConvN(true, false), ir.OpAtenConvTranspose1d, ir.OpAtenConvTranspose2dInput, ir.OpAtenConvTranspose3dInput)
	register(kIm2col, ir.OpAtenIm2col)
	register(kCol2im, ir.OpAtenCol2im)
}

type convParams struct {
	stride, padding, dilation, outPadding []int64
	transposed                            bool
	groups                                int64
}

// expandParam repeats a one-element list to n entries.
func expandParam(v []int64, n int, name string) ([]int64, error) {
	if len(v) == n {
		return v, nil
	}
	if len(v) == 1 {
		return repeatN(v[0], int64(n)), nil
	}
	return nil, fmt.Errorf("expected %s to be a single integer value or a list of %d values, got %v", name, n, v)
}

// convolution runs a (possibly transposed, grouped) convolution. input is
// [N, C, *spatial] or unbatched [C, *spatial].
func convolution(x, w, bias *Tensor, p convParams) (*Tensor, error) {
	nsp := w.Rank() - 2
	if nsp < 1 {
		return nil, fmt.Errorf("weight should have at least three dimensions, got %v", w.Shape)
	}
	unbatched := x.Rank() == nsp+1
	if unbatched {
		x, _ = unsqueezeView(x, 0)
	}
	if x.Rank() != nsp+2 {
		return nil, fmt.Errorf("expected %dD (unbatched) or %dD (batched) input to conv, but got input of size %v", nsp+1, nsp+2, x.Shape)
	}
	if x.DType != w.DType || (bias != nil && bias.DType != x.DType) {
		return nil, fmt.Errorf("input type (%s) and weight type (%s) should be the same", x.DType, w.DType)
	}
	if !isFloatDT(x.DType) {
		return nil, fmt.Errorf("convolution is not supported for %s", x.DType)
	}
	var err error
	if p.stride, err = expandParam(p.stride, nsp, "stride"); err != nil {
		return nil, err
	}
	if p.padding, err = expandParam(p.padding, nsp, "padding"); err != nil {
		return nil, err
	}
	if p.dilation, err = expandParam(p.dilation, nsp, "dilation"); err != nil {
		return nil, err
	}
	if p.outPadding == nil {
		p.outPadding = []int64{0}
	}
	if p.outPadding, err = expandParam(p.outPadding, nsp, "output_padding"); err != nil {
		return nil, err
	}
	g := p.groups
	if g <= 0 {
		return nil, fmt.Errorf("non-positive groups is not supported")
	}
	for i := 0; i < nsp; i++ {
		switch {
		case p.stride[i] <= 0:
			return nil, fmt.Errorf("non-positive stride %v is not supported", p.stride)
		case p.dilation[i] <= 0:
			return nil, fmt.Errorf("dilation %v should be greater than zero", p.dilation)
		case p.padding[i] < 0:
			return nil, fmt.Errorf("negative padding %v is not supported", p.padding)
		}
	}
	n, cin := x.Shape[0], x.Shape[1]
	ksz := w.Shape[2:]
	kvol := numel(ksz)
	insp := x.Shape[2:]
	var cout, cinG, coutG int64
	if p.transposed {
		if w.Shape[0] != cin {
			return nil, fmt.Errorf("given transposed=1, weight of size %v, expected input %v to have %d channels, but got %d channels instead", w.Shape, x.Shape, w.Shape[0], cin)
		}
		coutG = w.Shape[1]
		cout = coutG * g
		cinG = cin / g
	} else {
		cout = w.Shape[0]
		cinG = w.Shape[1]
		if cinG*g != cin {
			return nil, fmt.Errorf("given groups=%d, weight of size %v, expected input %v to have %d channels, but got %d channels instead", g, w.Shape, x.Shape, cinG*g, cin)
		}
		if cout%g != 0 {
			return nil, fmt.Errorf("given groups=%d, expected weight to be divisible by %d at dimension 0, but got weight of size %v", g, g, w.Shape)
		}
		coutG = cout / g
	}
	if cin%g != 0 {
		return nil, fmt.Errorf("input channels %d not divisible by groups %d", cin, g)
	}
	outsp := make([]int64, nsp)
	for i := range outsp {
		if p.transposed {
			outsp[i] = (insp[i]-1)*p.stride[i] - 2*p.padding[i] + p.dilation[i]*(ksz[i]-1) + p.outPadding[i] + 1
		} else {
			outsp[i] = (insp[i]+2*p.padding[i]-p.dilation[i]*(ksz[i]-1)-1)/p.stride[i] + 1
		}
		if outsp[i] <= 0 {
			return nil, fmt.Errorf("calculated output size %v is too small for input %v", outsp, x.Shape)
		}
	}
	xv := x.To(ir.Float64).Contiguous().floats()
	wv := w.To(ir.Float64).Contiguous().floats()
	inVol, outVol := numel(insp), numel(outsp)
	res := make([]float64, n*cout*outVol)
	if !p.transposed {
		cols := make([]float64, cinG*kvol*outVol)
		for b := int64(0); b < n; b++ {
			for gi := int64(0); gi < g; gi++ {
				im2col(xv[(b*cin+gi*cinG)*inVol:], cinG, insp, ksz, outsp, p, cols)
				wg := wv[gi*coutG*cinG*kvol : (gi+1)*coutG*cinG*kvol]
				dst := res[(b*cout+gi*coutG)*outVol : (b*cout+(gi+1)*coutG)*outVol]
				blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
					blas64.General{Rows: int(coutG), Cols: int(cinG * kvol), Stride: int(cinG * kvol), Data: wg},
					blas64.General{Rows: int(cinG * kvol), Cols: int(outVol), Stride: int(outVol), Data: cols},
					0, blas64.General{Rows: int(coutG), Cols: int(outVol), Stride: int(outVol), Data: dst})
			}
		}
	} else {
		cols := make([]float64, coutG*kvol*inVol)
		for b := int64(0); b < n; b++ {
			for gi := int64(0); gi < g; gi++ {
				wg := wv[gi*cinG*coutG*kvol : (gi+1)*cinG*coutG*kvol] // [cinG, coutG*kvol]
				xg := xv[(b*cin+gi*cinG)*inVol : (b*cin+(gi+1)*cinG)*inVol]
				blas64.Gemm(blas.Trans, blas.NoTrans, 1,
					blas64.General{Rows: int(cinG), Cols: int(coutG * kvol), Stride: int(coutG * kvol), Data: wg},
					blas64.General{Rows: int(cinG), Cols: int(inVol), Stride: int(inVol), Data: xg},
					0, blas64.General{Rows: int(coutG * kvol), Cols: int(inVol), Stride: int(inVol), Data: cols})
				col2im(cols, coutG, outsp, ksz, insp, p, res[(b*cout+gi*coutG)*outVol:])
			}
		}
	}
	if bias != nil {
		if bias.Rank() != 1 || bias.Shape[0] != cout {
			return nil, fmt.Errorf("bias of shape %v does not match %d output channels", bias.Shape, cout)
		}
		bv := bias.To(ir.Float64).floats()
		for b := int64(0); b < n; b++ {
			for ch := int64(0); ch < cout; ch++ {
				row := res[(b*cout+ch)*outVol : (b*cout+ch+1)*outVol]
				for i := range row {
					row[i] += bv[ch]
				}
			}
		}
	}
	out := FromFloat64(x.DType, append([]int64{n, cout}, outsp...), res)
	if unbatched {
		out, _ = squeezeView(out, []int64{0}, false)
	}
	return out, nil
}

// im2col fills cols [c*kvol, outVol] from one image [c, *insp] (row-major).
func im2col(img []float64, c int64, insp, ksz, outsp []int64, p convParams, cols []float64) {
	nsp := len(insp)
	inVol, outVol, kvol := numel(insp), numel(outsp), numel(ksz)
	inSt := contiguousStrides(insp)
	row := int64(0)
	src := make([]int64, nsp)
	for ch := int64(0); ch < c; ch++ {
		base := ch * inVol
		forEachPos(ksz, func(kp []int64, _ int64) {
			dst := cols[row*outVol : (row+1)*outVol]
			forEachPos(outsp, func(op []int64, k int64) {
				off := base
				for d := 0; d < nsp; d++ {
					src[d] = op[d]*p.stride[d] - p.padding[d] + kp[d]*p.dilation[d]
					if src[d] < 0 || src[d] >= insp[d] {
						dst[k] = 0
						return
					}
					off += src[d] * inSt[d]
				}
				dst[k] = img[off]
			})
			row++
		})
	}
	_ = kvol
}

// col2im adds cols [c*kvol, inVol] (one column per input position of a
// transposed convolution) into out [c, *outsp].
func col2im(cols []float64, c int64, outsp, ksz, insp []int64, p convParams, out []float64) {
	nsp := len(insp)
	inVol, outVol := numel(insp), numel(outsp)
	outSt := contiguousStrides(outsp)
	row := int64(0)
	for ch := int64(0); ch < c; ch++ {
		base := ch * outVol
		forEachPos(ksz, func(kp []int64, _ int64) {
			src := cols[row*inVol : (row+1)*inVol]
			forEachPos(insp, func(ip []int64, k int64) {
				off := base
				for d := 0; d < nsp; d++ {
					o := ip[d]*p.stride[d] - p.padding[d] + kp[d]*p.dilation[d]
					if o < 0 || o >= outsp[d] {
						return
					}
					off += o * outSt[d]
				}
				out[off] += src[k]
			})
			row++
		})
	}
}

func kConvolution(c *call) ([]Value, error) {
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	w, err := c.tensor("weight")
	if err != nil {
		return nil, err
	}
	bias, err := c.optTensor("bias")
	if err != nil {
		return nil, err
	}
	var p convParams
	if p.stride, err = c.ints("stride"); err != nil {
		return nil, err
	}
	if p.padding, err = c.ints("padding"); err != nil {
		return nil, err
	}
	if p.dilation, err = c.ints("dilation"); err != nil {
		return nil, err
	}
	if p.transposed, err = c.bool("transposed"); err != nil {
		return nil, err
	}
	if p.outPadding, err = c.ints("output_padding"); err != nil {
		return nil, err
	}
	if p.groups, err = c.int("groups"); err != nil {
		return nil, err
	}
	return one0(convolution(x, w, bias, p))
}

func kConvN(transposed, strPadding bool) kernel {
	return func(c *call) ([]Value, error) {
		x, err := c.tensor("input")
		if err != nil {
			return nil, err
		}
		w, err := c.tensor("weight")
		if err != nil {
			return nil, err
		}
		bias, err := c.optTensor("bias")
		if err != nil {
			return nil, err
		}
		p := convParams{transposed: transposed}
		if p.stride, err = c.ints("stride"); err != nil {
			return nil, err
		}
		if p.dilation, err = c.ints("dilation"); err != nil {
			return nil, err
		}
		if p.groups, err = c.int("groups"); err != nil {
			return nil, err
		}
		if transposed {
			if p.outPadding, err = c.ints("output_padding"); err != nil {
				return nil, err
			}
		}
		if !strPadding {
			if p.padding, err = c.ints("padding"); err != nil {
				return nil, err
			}
			return one0(convolution(x, w, bias, p))
		}
		mode, err := c.str("padding")
		if err != nil {
			return nil, err
		}
		nsp := w.Rank() - 2
		switch mode {
		case "valid":
			p.padding = repeatN(0, int64(nsp))
			return one0(convolution(x, w, bias, p))
		case "same":
		default:
			return nil, fmt.Errorf("invalid padding string %q", mode)
		}
		// 'same': symmetric padding where possible, the odd remainder added
		// on the right by padding the input first (as torch does).
		dil, err := expandParam(p.dilation, nsp, "dilation")
		if err != nil {
			return nil, err
		}
		p.padding = make([]int64, nsp)
		extra := make([]int64, 2*nsp)
		for i := 0; i < nsp; i++ {
			total := dil[i] * (w.Shape[2+i] - 1)
			left := total / 2
			p.padding[i] = left
			if total-left != left {
				extra[2*(nsp-1-i)+1] = total - 2*left
			}
		}
		for _, e := range extra {
			if e != 0 {
				if x, err = constantPad(x, extra, NewTensor(x.DType)); err != nil {
					return nil, err
				}
				break
			}
		}
		return one0(convolution(x, w, bias, p))
	}
}

func kIm2col(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	var p convParams
	ksz, err := c.ints("kernel_size")
	if err != nil {
		return nil, err
	}
	if p.dilation, err = c.ints("dilation"); err != nil {
		return nil, err
	}
	if p.padding, err = c.ints("padding"); err != nil {
		return nil, err
	}
	if p.stride, err = c.ints("stride"); err != nil {
		return nil, err
	}
	if err := checkWindow2d(ksz, p); err != nil {
		return nil, err
	}
	batched := x.Rank() == 4
	if !batched {
		x, _ = unsqueezeView(x, 0)
	}
	if x.Rank() != 4 {
		return nil, fmt.Errorf("im2col expects a 3-D or 4-D input, got %v", x.Shape)
	}
	n, ch := x.Shape[0], x.Shape[1]
	insp := x.Shape[2:]
	outsp := make([]int64, 2)
	for i := range outsp {
		outsp[i] = (insp[i]+2*p.padding[i]-p.dilation[i]*(ksz[i]-1)-1)/p.stride[i] + 1
	}
	xv := x.To(ir.Float64).Contiguous().floats()
	kvol, inVol, outVol := numel(ksz), numel(insp), numel(outsp)
	res := make([]float64, n*ch*kvol*outVol)
	for b := int64(0); b < n; b++ {
		im2col(xv[b*ch*inVol:], ch, insp, ksz, outsp, p, res[b*ch*kvol*outVol:])
	}
	out := FromFloat64(x.DType, []int64{n, ch * kvol, outVol}, res)
	if !batched {
		out, _ = squeezeView(out, []int64{0}, false)
	}
	return one(out), nil
}

func kCol2im(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	outsp, err := c.ints("output_size")
	if err != nil {
		return nil, err
	}
	if len(outsp) != 2 {
		return nil, fmt.Errorf("output_size %v must have two elements", outsp)
	}
	var p convParams
	ksz, err := c.ints("kernel_size")
	if err != nil {
		return nil, err
	}
	if p.dilation, err = c.ints("dilation"); err != nil {
		return nil, err
	}
	if p.padding, err = c.ints("padding"); err != nil {
		return nil, err
	}
	if p.stride, err = c.ints("stride"); err != nil {
		return nil, err
	}
	if err := checkWindow2d(ksz, p); err != nil {
		return nil, err
	}
	batched := x.Rank() == 3
	if !batched {
		x, _ = unsqueezeView(x, 0)
	}
	kvol := numel(ksz)
	if x.Rank() != 3 || x.Shape[1]%kvol != 0 {
		return nil, fmt.Errorf("col2im expects a [N, C*prod(kernel), L] input, got %v", x.Shape)
	}
	n, ch := x.Shape[0], x.Shape[1]/kvol
	// The blocks' grid is the output grid of the equivalent convolution.
	grid := make([]int64, 2)
	for i := range grid {
		grid[i] = (outsp[i]+2*p.padding[i]-p.dilation[i]*(ksz[i]-1)-1)/p.stride[i] + 1
	}
	if numel(grid) != x.Shape[2] {
		return nil, fmt.Errorf("col2im: %d blocks given, %v expected from output_size %v", x.Shape[2], grid, outsp)
	}
	xv := x.To(ir.Float64).Contiguous().floats()
	outVol := numel(outsp)
	res := make([]float64, n*ch*outVol)
	for b := int64(0); b < n; b++ {
		col2im(xv[b*ch*kvol*x.Shape[2]:], ch, outsp, ksz, grid, p, res[b*ch*outVol:])
	}
	out := FromFloat64(x.DType, append([]int64{n, ch}, outsp...), res)
	if !batched {
		out, _ = squeezeView(out, []int64{0}, false)
	}
	return one(out), nil
}

// checkWindow2d checks im2col's and col2im's window: two dims each, a
// positive kernel size, stride and dilation, and no negative padding.
func checkWindow2d(ksz []int64, p convParams) error {
	if len(ksz) != 2 || len(p.dilation) != 2 || len(p.padding) != 2 || len(p.stride) != 2 {
		return fmt.Errorf("kernel_size %v, dilation %v, padding %v and stride %v must have two elements each", ksz, p.dilation, p.padding, p.stride)
	}
	for i := 0; i < 2; i++ {
		if ksz[i] <= 0 || p.stride[i] <= 0 || p.dilation[i] <= 0 || p.padding[i] < 0 {
			return fmt.Errorf("kernel_size %v, stride %v and dilation %v must be positive and padding %v not negative", ksz, p.stride, p.dilation, p.padding)
		}
	}
	return nil
}
