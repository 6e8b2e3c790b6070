package interp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/fxport/fxport/ir"
)

// FFTs through gonum's fourier package (any length).

func init() {
	register(kFftC2C, ir.OpAten_FftC2c)
	register(kFftR2C, ir.OpAten_FftR2c)
	register(kFftC2R, ir.OpAten_FftC2r)
	register(kFftRfft, ir.OpAtenFftRfft)
	register(kFftIrfft, ir.OpAtenFftIrfft)
	register(kComplex(false), ir.OpAtenComplex)
	register(kComplex(true), ir.OpAtenPolar)
}

// dft transforms dim d of a complex128 tensor (forward or inverse,
// unnormalized) to length n, zero-padding or trimming the input.
func dft(t *Tensor, d int, n int64, forward bool) *Tensor {
	p, perm, outer, m := moveLast(t, d)
	in := p.complexes()
	out := make([]complex128, outer*n)
	fft := fourier.NewCmplxFFT(int(n))
	buf := make([]complex128, n)
	for r := int64(0); r < outer; r++ {
		for i := range buf {
			buf[i] = 0
		}
		copy(buf, in[r*m:r*m+min(m, n)])
		dst := out[r*n : (r+1)*n]
		if forward {
			fft.Coefficients(dst, buf)
		} else {
			fft.Sequence(dst, buf)
		}
	}
	shape := append([]int64{}, p.Shape...)
	shape[len(shape)-1] = n
	return restore(FromComplex128(ir.Complex128, shape, out), perm)
}

// fftScale is the normalization factor: 0 none, 1 1/sqrt(n), 2 1/n.
func fftScale(mode int64, n int64) float64 {
	switch mode {
	case 1:
		return 1 / math.Sqrt(float64(n))
	case 2:
		return 1 / float64(n)
	}
	return 1
}

func scaleComplex(t *Tensor, s float64) *Tensor {
	if s == 1 {
		return t
	}
	return unaryC(t, t.DType, func(v complex128) complex128 { return v * complex(s, 0) })
}

func complexOf(dt ir.DType) ir.DType {
	if dt == ir.Float64 || dt == ir.Complex128 {
		return ir.Complex128
	}
	return ir.Complex64
}

func realOf(dt ir.DType) ir.DType {
	if dt == ir.Complex128 || dt == ir.Float64 {
		return ir.Float64
	}
	return ir.Float32
}

func fftDims(c *call, x *Tensor) ([]int, error) {
	ds, err := c.ints("dim")
	if err != nil {
		return nil, err
	}
	out := make([]int, len(ds))
	for i, d := range ds {
		if out[i], err = normDim(d, x.Rank()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func kFftC2C(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	dims, err := fftDims(c, x)
	if err != nil {
		return nil, err
	}
	norm, err := c.int("normalization")
	if err != nil {
		return nil, err
	}
	fwd, err := c.bool("forward")
	if err != nil {
		return nil, err
	}
	cur := x.To(ir.Complex128)
	total := int64(1)
	for _, d := range dims {
		cur = dft(cur, d, x.Shape[d], fwd)
		total *= x.Shape[d]
	}
	return one(scaleComplex(cur, fftScale(norm, total)).To(complexOf(x.DType))), nil
}

func kFftR2C(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	dims, err := fftDims(c, x)
	if err != nil {
		return nil, err
	}
	norm, err := c.int("normalization")
	if err != nil {
		return nil, err
	}
	onesided, err := c.bool("onesided")
	if err != nil {
		return nil, err
	}
	cur := x.To(ir.Complex128)
	total := int64(1)
	for _, d := range dims {
		cur = dft(cur, d, x.Shape[d], true)
		total *= x.Shape[d]
	}
	if onesided && len(dims) > 0 {
		last := dims[len(dims)-1]
		end := x.Shape[last]/2 + 1
		if cur, err = sliceView(cur, int64(last), nil, &end, 1); err != nil {
			return nil, err
		}
	}
	return one(scaleComplex(cur.Clone(), fftScale(norm, total)).To(complexOf(x.DType))), nil
}

// hermitianFull rebuilds a full spectrum of length n along dim d from its
// one-sided half.
func hermitianFull(t *Tensor, d int, n int64) *Tensor {
	p, perm, outer, m := moveLast(t, d)
	in := p.complexes()
	out := make([]complex128, outer*n)
	for r := int64(0); r < outer; r++ {
		for k := int64(0); k < n; k++ {
			switch {
			case k < m && k <= n/2:
				out[r*n+k] = in[r*m+k]
			case n-k < m:
				v := in[r*m+n-k]
				out[r*n+k] = complex(real(v), -imag(v))
			}
		}
	}
	shape := append([]int64{}, p.Shape...)
	shape[len(shape)-1] = n
	return restore(FromComplex128(ir.Complex128, shape, out), perm)
}

func kFftC2R(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	dims, err := fftDims(c, x)
	if err != nil {
		return nil, err
	}
	norm, err := c.int("normalization")
	if err != nil {
		return nil, err
	}
	lastSize, err := c.int("last_dim_size")
	if err != nil {
		return nil, err
	}
	if len(dims) == 0 {
		return nil, fmt.Errorf("_fft_c2r needs at least one dim")
	}
	cur := x.To(ir.Complex128)
	total := int64(1)
	for _, d := range dims[:len(dims)-1] {
		cur = dft(cur, d, x.Shape[d], false)
		total *= x.Shape[d]
	}
	last := dims[len(dims)-1]
	cur = dft(hermitianFull(cur, last, lastSize), last, lastSize, false)
	total *= lastSize
	return one(scaleComplex(cur, fftScale(norm, total)).To(realOf(x.DType))), nil
}

// normMode maps fft's norm string to the forward/backward scaling mode.
func normMode(norm string, has, forward bool) (int64, error) {
	if !has {
		norm = "backward"
	}
	switch norm {
	case "backward":
		if forward {
			return 0, nil
		}
		return 2, nil
	case "ortho":
		return 1, nil
	case "forward":
		if forward {
			return 2, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("invalid normalization mode %q", norm)
}

func kFftRfft(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	d, err := c.dim("dim", x.Rank())
	if err != nil {
		return nil, err
	}
	n, hasN, err := c.optInt("n")
	if err != nil {
		return nil, err
	}
	if !hasN {
		n = x.Shape[d]
	}
	norm, hasNorm, err := c.optStr("norm")
	if err != nil {
		return nil, err
	}
	mode, err := normMode(norm, hasNorm, true)
	if err != nil {
		return nil, err
	}
	if domainOf(x.DType) == domComplex {
		return nil, fmt.Errorf("rfft expects a real input tensor, got %s", x.DType)
	}
	cur := dft(x.To(ir.Complex128), d, n, true)
	end := n/2 + 1
	if cur, err = sliceView(cur, int64(d), nil, &end, 1); err != nil {
		return nil, err
	}
	return one(scaleComplex(cur.Clone(), fftScale(mode, n)).To(complexOf(toFloatDType(x.DType)))), nil
}

func kFftIrfft(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	d, err := c.dim("dim", x.Rank())
	if err != nil {
		return nil, err
	}
	n, hasN, err := c.optInt("n")
	if err != nil {
		return nil, err
	}
	if !hasN {
		n = 2 * (x.Shape[d] - 1)
	}
	if n < 1 {
		return nil, fmt.Errorf("invalid number of data points (%d) specified", n)
	}
	norm, hasNorm, err := c.optStr("norm")
	if err != nil {
		return nil, err
	}
	mode, err := normMode(norm, hasNorm, false)
	if err != nil {
		return nil, err
	}
	cur := dft(hermitianFull(x.To(ir.Complex128), d, n), d, n, false)
	return one(scaleComplex(cur, fftScale(mode, n)).To(realOf(x.DType))), nil
}

func kComplex(polar bool) kernel {
	return func(c *call) ([]Value, error) {
		an, bn := "real", "imag"
		if polar {
			an, bn = "abs", "angle"
		}
		a, err := c.tensor(an)
		if err != nil {
			return nil, err
		}
		b, err := c.tensor(bn)
		if err != nil {
			return nil, err
		}
		if a.DType != b.DType || (a.DType != ir.Float32 && a.DType != ir.Float64) {
			return nil, fmt.Errorf("expected both inputs to be float32 or float64 of one dtype, got %s and %s", a.DType, b.DType)
		}
		ts, shape, err := broadcastAll(a, b)
		if err != nil {
			return nil, err
		}
		av, bv := ts[0].Clone().floats(), ts[1].Clone().floats()
		out := make([]complex128, len(av))
		for i := range av {
			if polar {
				out[i] = complex(av[i]*math.Cos(bv[i]), av[i]*math.Sin(bv[i]))
			} else {
				out[i] = complex(av[i], bv[i])
			}
		}
		return one(FromComplex128(a.DType.ToComplex(), shape, out)), nil
	}
}
