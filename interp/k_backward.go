package interp

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/fxport/fxport/ir"
)

// Backward ops that training graphs carry: gradients of convolution,
// pooling, normalization and embedding, computed in float64.

func init() {
	register(kConvolutionBackward, ir.OpAtenConvolutionBackward)
	register(kEmbeddingDenseBackward, ir.OpAtenEmbeddingDenseBackward)
	register(kMaxPoolBackward, ir.OpAtenMaxPool2dWithIndicesBackward)
	register(kAvgPoolBackward, ir.OpAtenAvgPool2dBackward)
	register(kAdaptiveAvgPoolBackward, ir.OpAten_AdaptiveAvgPool2dBackward)
	register(kLayerNormBackward, ir.OpAtenNativeLayerNormBackward)
	register(kGroupNormBackward, ir.OpAtenNativeGroupNormBackward)
}

// outputMask reads a bool[3] output_mask.
func outputMask(c *call) ([3]bool, error) {
	var m [3]bool
	l, err := c.list("output_mask")
	if err != nil {
		return m, err
	}
	if len(l) != 3 {
		return m, fmt.Errorf("output_mask must have 3 entries, got %d", len(l))
	}
	for i, v := range l {
		if m[i], err = toBool(v); err != nil {
			return m, fmt.Errorf("output_mask[%d]: %w", i, err)
		}
	}
	return m, nil
}

func maskedResults(m [3]bool, vals [3]Value) []Value {
	out := make([]Value, 3)
	for i := range out {
		if m[i] {
			out[i] = vals[i]
		}
	}
	return out
}

func kConvolutionBackward(c *call) ([]Value, error) {
	g, err := c.tensor("grad_output")
	if err != nil {
		return nil, err
	}
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	w, err := c.tensor("weight")
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
	m, err := outputMask(c)
	if err != nil {
		return nil, err
	}
	nsp := w.Rank() - 2
	if x.Rank() != nsp+2 || g.Rank() != nsp+2 {
		return nil, fmt.Errorf("convolution_backward expects batched %d-d inputs, got %v and %v", nsp, x.Shape, g.Shape)
	}
	for _, f := range []*[]int64{&p.stride, &p.padding, &p.dilation, &p.outPadding} {
		if *f, err = expandParam(*f, nsp, "convolution parameter"); err != nil {
			return nil, err
		}
	}
	var vals [3]Value
	if m[0] {
		// The adjoint of the forward map on the input.
		q := p
		q.transposed = !p.transposed
		if !p.transposed {
			// Pick output_padding so that the transposed convolution gives
			// back the input's size.
			q.outPadding = make([]int64, nsp)
			for i := 0; i < nsp; i++ {
				full := (g.Shape[2+i]-1)*p.stride[i] - 2*p.padding[i] + p.dilation[i]*(w.Shape[2+i]-1) + 1
				q.outPadding[i] = x.Shape[2+i] - full
			}
		}
		gi, err := convolution(g, w, nil, q)
		if err != nil {
			return nil, fmt.Errorf("grad_input: %w", err)
		}
		vals[0] = gi
	}
	if m[1] {
		gw, err := convWeightGrad(g, x, w, p)
		if err != nil {
			return nil, fmt.Errorf("grad_weight: %w", err)
		}
		vals[1] = gw
	}
	if m[2] {
		mask := make([]bool, g.Rank())
		for i := range mask {
			mask[i] = i != 1
		}
		vals[2] = reduceF(g, g.DType, mask, false, sumF)
	}
	return maskedResults(m, vals), nil
}

// convWeightGrad is the gradient of a convolution with respect to its weight.
func convWeightGrad(g, x, w *Tensor, p convParams) (*Tensor, error) {
	n, grp := x.Shape[0], p.groups
	ksz := w.Shape[2:]
	kvol := numel(ksz)
	xv := x.To(ir.Float64).Contiguous().floats()
	gv := g.To(ir.Float64).Contiguous().floats()
	res := make([]float64, w.Numel())
	if !p.transposed {
		cin, cout := x.Shape[1], g.Shape[1]
		cinG, coutG := cin/grp, cout/grp
		insp, outsp := x.Shape[2:], g.Shape[2:]
		inVol, outVol := numel(insp), numel(outsp)
		cols := make([]float64, cinG*kvol*outVol)
		for b := int64(0); b < n; b++ {
			for gi := int64(0); gi < grp; gi++ {
				im2col(xv[(b*cin+gi*cinG)*inVol:], cinG, insp, ksz, outsp, p, cols)
				gg := gv[(b*cout+gi*coutG)*outVol : (b*cout+(gi+1)*coutG)*outVol]
				dst := res[gi*coutG*cinG*kvol : (gi+1)*coutG*cinG*kvol]
				blas64.Gemm(blas.NoTrans, blas.Trans, 1,
					blas64.General{Rows: int(coutG), Cols: int(outVol), Stride: int(outVol), Data: gg},
					blas64.General{Rows: int(cinG * kvol), Cols: int(outVol), Stride: int(outVol), Data: cols},
					1, blas64.General{Rows: int(coutG), Cols: int(cinG * kvol), Stride: int(cinG * kvol), Data: dst})
			}
		}
	} else {
		// y = conv_transpose(x, w): w is [cin, coutG, *k]; the columns come
		// from grad_output sampled at the input's positions.
		cin, cout := x.Shape[1], g.Shape[1]
		cinG, coutG := cin/grp, cout/grp
		insp, outsp := x.Shape[2:], g.Shape[2:]
		inVol, outVol := numel(insp), numel(outsp)
		cols := make([]float64, coutG*kvol*inVol)
		for b := int64(0); b < n; b++ {
			for gi := int64(0); gi < grp; gi++ {
				im2col(gv[(b*cout+gi*coutG)*outVol:], coutG, outsp, ksz, insp, p, cols)
				xg := xv[(b*cin+gi*cinG)*inVol : (b*cin+(gi+1)*cinG)*inVol]
				dst := res[gi*cinG*coutG*kvol : (gi+1)*cinG*coutG*kvol]
				blas64.Gemm(blas.NoTrans, blas.Trans, 1,
					blas64.General{Rows: int(cinG), Cols: int(inVol), Stride: int(inVol), Data: xg},
					blas64.General{Rows: int(coutG * kvol), Cols: int(inVol), Stride: int(inVol), Data: cols},
					1, blas64.General{Rows: int(cinG), Cols: int(coutG * kvol), Stride: int(coutG * kvol), Data: dst})
			}
		}
	}
	return FromFloat64(w.DType, w.Shape, res), nil
}

func kEmbeddingDenseBackward(c *call) ([]Value, error) {
	g, err := c.tensor("grad_output")
	if err != nil {
		return nil, err
	}
	ix, err := c.tensor("indices")
	if err != nil {
		return nil, err
	}
	nw, err := c.int("num_weights")
	if err != nil {
		return nil, err
	}
	pad, err := c.int("padding_idx")
	if err != nil {
		return nil, err
	}
	scale, err := c.bool("scale_grad_by_freq")
	if err != nil {
		return nil, err
	}
	if g.Rank() == 0 {
		return nil, fmt.Errorf("grad_output must have at least one dim")
	}
	d := g.Shape[g.Rank()-1]
	iv := ix.Contiguous().ints()
	gv := g.To(ir.Float64).Contiguous().floats()
	if int64(len(gv)) != int64(len(iv))*d {
		return nil, fmt.Errorf("grad_output %v does not match indices %v", g.Shape, ix.Shape)
	}
	counts := make([]float64, nw)
	for _, i := range iv {
		if i < 0 || i >= nw {
			return nil, domainErrorf("embedding_dense_backward: index %d out of range for %d embeddings", i, nw)
		}
		counts[i]++
	}
	res := make([]float64, nw*d)
	for k, i := range iv {
		if i == pad {
			continue
		}
		f := 1.0
		if scale {
			f = 1 / counts[i]
		}
		for j := int64(0); j < d; j++ {
			res[i*d+j] += f * gv[int64(k)*d+j]
		}
	}
	return one(FromFloat64(g.DType, []int64{nw, d}, res)), nil
}

func kMaxPoolBackward(c *call) ([]Value, error) {
	g, err := c.tensor("grad_output")
	if err != nil {
		return nil, err
	}
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	idx, err := c.tensor("indices")
	if err != nil {
		return nil, err
	}
	v, lead, err := poolInput(x, 2)
	if err != nil {
		return nil, err
	}
	planes, inVol := v.Shape[0], numel(v.Shape[1:])
	gv := g.To(ir.Float64).Contiguous().floats()
	iv := idx.Contiguous().ints()
	if len(gv) != len(iv) || int64(len(gv))%max(planes, 1) != 0 {
		return nil, fmt.Errorf("grad_output %v and indices %v do not match", g.Shape, idx.Shape)
	}
	outVol := int64(len(gv)) / max(planes, 1)
	res := make([]float64, planes*inVol)
	for pl := int64(0); pl < planes; pl++ {
		for k := int64(0); k < outVol; k++ {
			i := iv[pl*outVol+k]
			if i < 0 || i >= inVol {
				return nil, domainErrorf("max_pool2d_with_indices_backward: index %d out of range", i)
			}
			res[pl*inVol+i] += gv[pl*outVol+k]
		}
	}
	return one(FromFloat64(x.DType, append(lead, v.Shape[1:]...), res)), nil
}

func kAvgPoolBackward(c *call) ([]Value, error) {
	g, err := c.tensor("grad_output")
	if err != nil {
		return nil, err
	}
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
	divisor, hasDiv, err := c.optInt("divisor_override")
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
		outsp[i] = poolOutSize(insp[i], p.k[i], p.s[i], p.pad[i], 1, p.ceil)
	}
	planes, inVol, outVol := v.Shape[0], numel(insp), numel(outsp)
	gv := g.To(ir.Float64).Contiguous().floats()
	if int64(len(gv)) != planes*outVol {
		return nil, fmt.Errorf("grad_output %v does not match the pooled shape %v", g.Shape, outsp)
	}
	inSt := contiguousStrides(insp)
	res := make([]float64, planes*inVol)
	start, end := make([]int64, nsp), make([]int64, nsp)
	for pl := int64(0); pl < planes; pl++ {
		forEachPos(outsp, func(op []int64, k int64) {
			poolSize, count := int64(1), int64(1)
			win := make([]int64, nsp)
			for d := 0; d < nsp; d++ {
				start[d] = op[d]*p.s[d] - p.pad[d]
				end[d] = min(start[d]+p.k[d], insp[d]+p.pad[d])
				poolSize *= end[d] - start[d]
				start[d], end[d] = max(start[d], 0), min(end[d], insp[d])
				win[d] = max(end[d]-start[d], 0)
				count *= win[d]
			}
			div := count
			switch {
			case hasDiv:
				div = divisor
			case include:
				div = poolSize
			}
			if count == 0 || div == 0 {
				return
			}
			share := gv[pl*outVol+k] / float64(div)
			forEachPos(win, func(wp []int64, _ int64) {
				off := int64(0)
				for d := 0; d < nsp; d++ {
					off += (start[d] + wp[d]) * inSt[d]
				}
				res[pl*inVol+off] += share
			})
		})
	}
	return one(FromFloat64(x.DType, append(lead, insp...), res)), nil
}

func kAdaptiveAvgPoolBackward(c *call) ([]Value, error) {
	g, err := c.tensor("grad_output")
	if err != nil {
		return nil, err
	}
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	v, lead, err := poolInput(x, 2)
	if err != nil {
		return nil, err
	}
	insp := v.Shape[1:]
	if g.Rank() < 2 {
		return nil, fmt.Errorf("grad_output must have at least 2 dims, got %v", g.Shape)
	}
	outsp := g.Shape[g.Rank()-2:]
	planes, inVol, outVol := v.Shape[0], numel(insp), numel(outsp)
	gv := g.To(ir.Float64).Contiguous().floats()
	if int64(len(gv)) != planes*outVol {
		return nil, fmt.Errorf("grad_output %v does not match input %v", g.Shape, x.Shape)
	}
	hs, he := adaptiveWindows(insp[0], outsp[0])
	ws, we := adaptiveWindows(insp[1], outsp[1])
	res := make([]float64, planes*inVol)
	for pl := int64(0); pl < planes; pl++ {
		for i := int64(0); i < outsp[0]; i++ {
			for j := int64(0); j < outsp[1]; j++ {
				share := gv[pl*outVol+i*outsp[1]+j] / float64((he[i]-hs[i])*(we[j]-ws[j]))
				for y := hs[i]; y < he[i]; y++ {
					for xx := ws[j]; xx < we[j]; xx++ {
						res[pl*inVol+y*insp[1]+xx] += share
					}
				}
			}
		}
	}
	return one(FromFloat64(x.DType, append(lead, insp...), res)), nil
}

// normBackward computes, for rows of length M normalized with mean and
// rstd, the input gradient given the gradient g of xhat (already scaled by
// the weight): rstd/M * (M*g - sum(g) - xhat*sum(g*xhat)).
func normBackward(x, gy []float64, mean, rstd float64, out []float64) {
	m := float64(len(x))
	var sg, sgx float64
	for i := range x {
		xh := (x[i] - mean) * rstd
		sg += gy[i]
		sgx += gy[i] * xh
	}
	for i := range x {
		xh := (x[i] - mean) * rstd
		out[i] = rstd / m * (m*gy[i] - sg - xh*sgx)
	}
}

func kLayerNormBackward(c *call) ([]Value, error) {
	g, err := c.tensor("grad_out")
	if err != nil {
		return nil, err
	}
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	norm, err := c.ints("normalized_shape")
	if err != nil {
		return nil, err
	}
	axis, err := normAxis(x, norm)
	if err != nil {
		return nil, err
	}
	mt, err := c.tensor("mean")
	if err != nil {
		return nil, err
	}
	rt, err := c.tensor("rstd")
	if err != nil {
		return nil, err
	}
	w, err := c.optTensor("weight")
	if err != nil {
		return nil, err
	}
	b, err := c.optTensor("bias")
	if err != nil {
		return nil, err
	}
	m, err := outputMask(c)
	if err != nil {
		return nil, err
	}
	inner, outer := numel(x.Shape[axis:]), numel(x.Shape[:axis])
	xv := x.To(ir.Float64).Contiguous().floats()
	gv := g.To(ir.Float64).Contiguous().floats()
	mv, rv := mt.To(ir.Float64).Contiguous().floats(), rt.To(ir.Float64).Contiguous().floats()
	if int64(len(mv)) != outer || int64(len(rv)) != outer || len(gv) != len(xv) {
		return nil, fmt.Errorf("mean/rstd/grad_out do not match input %v", x.Shape)
	}
	var wv []float64
	if w != nil {
		wv = w.To(ir.Float64).Contiguous().floats()
	}
	gi := make([]float64, len(xv))
	gw, gb := make([]float64, inner), make([]float64, inner)
	gy := make([]float64, inner)
	for r := int64(0); r < outer; r++ {
		row, grow := xv[r*inner:(r+1)*inner], gv[r*inner:(r+1)*inner]
		for j := range gy {
			gy[j] = grow[j]
			if wv != nil {
				gy[j] *= wv[j]
			}
			gw[j] += grow[j] * (row[j] - mv[r]) * rv[r]
			gb[j] += grow[j]
		}
		normBackward(row, gy, mv[r], rv[r], gi[r*inner:(r+1)*inner])
	}
	var vals [3]Value
	vals[0] = FromFloat64(x.DType, x.Shape, gi)
	if w != nil {
		vals[1] = FromFloat64(w.DType, w.Shape, gw)
	}
	if b != nil {
		vals[2] = FromFloat64(b.DType, b.Shape, gb)
	} else if w != nil {
		vals[2] = FromFloat64(w.DType, w.Shape, gb)
	}
	return maskedResults(m, vals), nil
}

func kGroupNormBackward(c *call) ([]Value, error) {
	g, err := c.tensor("grad_out")
	if err != nil {
		return nil, err
	}
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	mt, err := c.tensor("mean")
	if err != nil {
		return nil, err
	}
	rt, err := c.tensor("rstd")
	if err != nil {
		return nil, err
	}
	w, err := c.optTensor("weight")
	if err != nil {
		return nil, err
	}
	grp, err := c.int("group")
	if err != nil {
		return nil, err
	}
	m, err := outputMask(c)
	if err != nil {
		return nil, err
	}
	if x.Rank() < 2 || grp <= 0 || x.Shape[1]%grp != 0 {
		return nil, fmt.Errorf("group norm backward: input %v does not split into %d groups", x.Shape, grp)
	}
	n, ch := x.Shape[0], x.Shape[1]
	hw := numel(x.Shape[2:])
	cg := ch / grp
	size := cg * hw
	xv := x.To(ir.Float64).Contiguous().floats()
	gv := g.To(ir.Float64).Contiguous().floats()
	mv, rv := mt.To(ir.Float64).Contiguous().floats(), rt.To(ir.Float64).Contiguous().floats()
	if int64(len(mv)) != n*grp || len(gv) != len(xv) {
		return nil, fmt.Errorf("mean/rstd/grad_out do not match input %v", x.Shape)
	}
	var wv []float64
	if w != nil {
		wv = w.To(ir.Float64).Contiguous().floats()
	}
	gi := make([]float64, len(xv))
	gw, gb := make([]float64, ch), make([]float64, ch)
	gy := make([]float64, size)
	for i := int64(0); i < n*grp; i++ {
		row, grow := xv[i*size:(i+1)*size], gv[i*size:(i+1)*size]
		gi0 := i % grp
		for j := range gy {
			chn := gi0*cg + int64(j)/hw
			gy[j] = grow[j]
			if wv != nil {
				gy[j] *= wv[chn]
			}
			gw[chn] += grow[j] * (row[j] - mv[i]) * rv[i]
			gb[chn] += grow[j]
		}
		normBackward(row, gy, mv[i], rv[i], gi[i*size:(i+1)*size])
	}
	dt := x.DType
	vals := [3]Value{FromFloat64(dt, x.Shape, gi), FromFloat64(dt, []int64{ch}, gw), FromFloat64(dt, []int64{ch}, gb)}
	return maskedResults(m, vals), nil
}
