package onnx

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
)

// Complex tensors. ONNX Runtime has almost no kernels for COMPLEX64, so the
// ONNX target represents a complex IR value the way torch.onnx does: as a
// real tensor of the matching precision (c64: float, c128: double) with a
// trailing dim of 2 holding (re, im). view_as_real and view_as_complex are
// then the identity; complex(re, im) stacks its operands; the FFTs are ONNX
// DFT (opset 17), which reads and writes that layout. A complex graph
// input or output is declared in that real form (valueInfo). Dims of a
// complex value are the IR's, normalized non-negative, so they never reach
// the trailing pair.

// complexReal is the real dtype of complex dtype dt's representation.
func complexReal(dt ir.DType) ir.DType {
	if dt == ir.Complex128 {
		return ir.Float64
	}
	return ir.Float32
}

// complexAware are the ops whose lowerings handle a complex operand or
// result in its real form; any other op touching a complex tensor is
// refused (an elementwise Mul of the real forms, say, is not a complex
// product).
var complexAware = map[ir.Op]bool{
	ir.OpAtenViewAsReal: true, ir.OpAtenViewAsComplex: true, ir.OpAtenComplex: true,
	ir.OpAtenNarrow: true, ir.OpAten_FftR2c: true, ir.OpAten_FftC2c: true,
}

// complexUnlowered is the reason n cannot be lowered when it touches a
// complex tensor without a complex-aware lowering, else nil.
func complexUnlowered(n *ir.Node) error {
	if complexAware[n.Op] {
		return nil
	}
	touches := func(v *ir.Value) bool { t := v.Tensor(); return t != nil && t.DType.IsComplex() }
	var vals []*ir.Value
	vals = append(vals, n.Results...)
	for _, a := range n.Args {
		vals = append(vals, a.Values()...)
	}
	for _, v := range vals {
		if touches(v) {
			return fmt.Errorf("%s on the complex tensor %%%s is not lowered: the ONNX target holds a complex tensor as a real one with a trailing (re, im) dim of 2 and lowers only view_as_real, view_as_complex, complex, narrow and the FFTs on it", n.Op, v.Name)
		}
	}
	return nil
}

func init() {
	lower(17, func(b *Builder, n *ir.Node) error {
		// view_as_real / view_as_complex: the same real [..., 2] tensor.
		r := reader(b, n)
		x := r.T("self")
		if r.err != nil {
			return r.err
		}
		b.Bind(n.Result(), x)
		return nil
	}, ir.OpAtenViewAsReal, ir.OpAtenViewAsComplex)
	lower(17, func(b *Builder, n *ir.Node) error {
		// complex(re, im): Concat of both, each unsqueezed at the end.
		r := reader(b, n)
		re, im := r.T("real"), r.T("imag")
		if r.err != nil {
			return r.err
		}
		last := b.I64s(-1)
		b.Emit(n.Result(), "Concat", []string{b.Tmp("Unsqueeze", []string{re, last}), b.Tmp("Unsqueeze", []string{im, last})}, AttrInt("axis", -1))
		return nil
	}, ir.OpAtenComplex)
	lower(17, func(b *Builder, n *ir.Node) error {
		// narrow(x, dim, start, length): Slice [start, start + length) of
		// dim (a complex x's dim is the same in its real form).
		r := reader(b, n)
		x := r.T("self")
		dim := normDim(r.Int("dim"), r.Rank("self"))
		if r.err != nil {
			return r.err
		}
		start, err := b.IntList(ir.ListArg(n.Arg("start")))
		if err != nil {
			return fmt.Errorf("narrow start: %w", err)
		}
		length, err := b.IntList(ir.ListArg(n.Arg("length")))
		if err != nil {
			return fmt.Errorf("narrow length: %w", err)
		}
		end := b.Tmp("Add", []string{start, length})
		b.Emit(n.Result(), "Slice", []string{x, start, end, b.I64s(dim)})
		return nil
	}, ir.OpAtenNarrow)
	lower(17, func(b *Builder, n *ir.Node) error {
		// _fft_r2c(x, dims, norm, onesided): DFT of the real x made
		// [..., 1] along the last dim (one-sided when asked), then complex
		// DFTs along the others; the norm scale at the end.
		r := reader(b, n)
		x := r.T("self")
		dims := r.Ints("dim")
		norm := r.Int("normalization")
		onesided := r.Bool("onesided")
		if r.err != nil {
			return r.err
		}
		t, err := ir.ArgTensor(n.Arg("self"), "self")
		if err != nil {
			return err
		}
		axes, size, err := fftAxes(t, dims)
		if err != nil {
			return err
		}
		v := b.Tmp("Unsqueeze", []string{x, b.I64s(-1)})
		last := len(axes) - 1
		one := int64(0)
		if onesided {
			one = 1
		}
		v = dft(b, v, axes[last], false, one)
		for _, a := range axes[:last] {
			v = dft(b, v, a, false, 0)
		}
		return fftScale(b, n, v, complexReal(n.Result().Tensor().DType), fftNorm(norm, size))
	}, ir.OpAten_FftR2c)
	lower(17, func(b *Builder, n *ir.Node) error {
		// _fft_c2c(z, dims, norm, forward): one DFT per dim, inverse when
		// not forward; ONNX's inverse divides by each dim's size, so the
		// scale then multiplies that back in.
		r := reader(b, n)
		z := r.T("self")
		norm := r.Int("normalization")
		forward := r.Bool("forward")
		if r.err != nil {
			return r.err
		}
		dims, ok := constInts(n.Arg("dim"))
		if !ok {
			return fmt.Errorf("_fft_c2c with symbolic dims is not lowered")
		}
		t, err := ir.ArgTensor(n.Arg("self"), "self")
		if err != nil {
			return err
		}
		axes, size, err := fftAxes(t, dims)
		if err != nil {
			return err
		}
		v := z
		for _, a := range axes {
			v = dft(b, v, a, !forward, 0)
		}
		scale := fftNorm(norm, size)
		if !forward {
			scale *= float64(size)
		}
		return fftScale(b, n, v, complexReal(t.DType), scale)
	}, ir.OpAten_FftC2c)
}

// fftAxes normalizes an FFT's dims against t (the IR operand) and returns
// them with the product of their static sizes (the signal size of the
// normalization). Duplicate, out-of-range or symbolic dims are refused.
func fftAxes(t *ir.TensorType, dims []int64) ([]int64, int64, error) {
	if len(dims) == 0 {
		return nil, 0, fmt.Errorf("an FFT over no dims is not lowered")
	}
	seen := map[int64]bool{}
	size := int64(1)
	var axes []int64
	for _, d := range dims {
		a := normDim(d, t.Rank())
		if a < 0 || a >= int64(t.Rank()) || seen[a] {
			return nil, 0, fmt.Errorf("FFT dim %d invalid for a rank-%d input", d, t.Rank())
		}
		seen[a] = true
		c, ok := t.Shape[a].Const()
		if !ok {
			return nil, 0, fmt.Errorf("FFT along the symbolic dim %d (%s) is not lowered: its normalization needs a static size", d, t.Shape[a])
		}
		size *= c
		axes = append(axes, a)
	}
	return axes, size, nil
}

// fftNorm is torch's FFT normalization factor: mode 0 none, 1 1/sqrt(n),
// 2 1/n.
func fftNorm(mode, n int64) float64 {
	switch mode {
	case 1:
		return 1 / math.Sqrt(float64(n))
	case 2:
		return 1 / float64(n)
	}
	return 1
}

// dft is one ONNX DFT of the real-form value v along axis (opset 20 takes
// the axis as an input, 17-19 as an attribute).
func dft(b *Builder, v string, axis int64, inverse bool, onesided int64) string {
	inv := int64(0)
	if inverse {
		inv = 1
	}
	if b.Opset() >= 20 {
		return b.Tmp("DFT", []string{v, "", b.I64(axis)}, AttrInt("inverse", inv), AttrInt("onesided", onesided))
	}
	return b.Tmp("DFT", []string{v}, AttrInt("axis", axis), AttrInt("inverse", inv), AttrInt("onesided", onesided))
}

// fftScale binds n's result to v times scale (no Mul when it is 1).
func fftScale(b *Builder, n *ir.Node, v string, real ir.DType, scale float64) error {
	if scale == 1 {
		b.Emit(n.Result(), "Identity", []string{v})
		return nil
	}
	s, err := b.Scalar(real, scale)
	if err != nil {
		return err
	}
	b.Emit(n.Result(), "Mul", []string{v, s})
	return nil
}
