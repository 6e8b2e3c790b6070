package onnxfix

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes/edit"
	"github.com/fxport/fxport/pm"
)

// PatchONNXIrfft rewrites irfft as the inverse FFT of the Hermitian spectrum (ONNX-P23).
var PatchONNXIrfft = pm.RegisterPatch(&pm.Patch{
	ID:      "ONNX-P23",
	Name:    "irfft-hermitian-ifft",
	Backend: pm.BackendONNX,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.fft.irfft"},
	Doc: `rewrite irfft as the real part of an inverse c2c FFT of the full spectrum

onnxruntime's DFT rejects onesided together with inverse. For a one-sided
spectrum X of length m along dim and output length n (default 2*(m-1)),
the patch keeps the first n//2 + 1 bins, appends the conjugate mirror
conj(X[(n-1)//2 .. 1]) to get the full Hermitian spectrum of length n,
runs _fft_c2c inverse with the same normalization and takes the real part.
That is exact for every n, odd included (the Python patch assumed an even
n): the imaginary parts of the DC and (even n) Nyquist bins only reach the
discarded imaginary output, as c2r ignores them. Handled: aten.fft_irfft and
single-dim aten._fft_c2r on a complex input with static m and n and
m >= n//2 + 1. Left alone: a real input, several dims, symbolic sizes and a
spectrum shorter than n//2 + 1 (which irfft zero-pads).`,
	Rewrite: rewriteIrfft,
})

var (
	opFFTC2R   = ir.OpAten_FftC2r
	tpOpFFTC2C = ir.OpAten_FftC2c
	tpOpFlip   = ir.OpAtenFlip
	tpOpNeg    = ir.OpAtenNeg
)

func rewriteIrfft(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	za := n.Arg("self")
	if za.Kind != ir.ArgValue || za.Value.Tensor() == nil || !za.Value.Tensor().DType.IsComplex() {
		return nil, nil
	}
	zt := za.Value.Tensor()
	out := n.Result().Tensor()
	if out == nil || zt.Rank() == 0 {
		return nil, nil
	}
	var dim, norm, length int64
	haveLen := false
	if n.Op == opFFTC2R {
		dims := n.Arg("dim").List
		if len(dims) != 1 || dims[0].Kind != ir.ArgInt {
			return nil, nil
		}
		dim, norm = dims[0].Int, n.Arg("normalization").Int
		l, ok := edit.IntLit(n.Arg("last_dim_size"))
		if !ok {
			return nil, nil
		}
		length, haveLen = l, true
	} else {
		dim = n.Arg("dim").Int
		switch s := n.Arg("norm"); {
		case s.IsNone() || s.Str == "backward":
			norm = 2
		case s.Str == "ortho":
			norm = 1
		case s.Str == "forward":
			norm = 0
		default:
			return nil, n.Errorf("irfft: unknown norm %q", s.Str)
		}
		if l := n.Arg("n"); !l.IsNone() {
			v, ok := edit.IntLit(l)
			if !ok {
				return nil, nil
			}
			length, haveLen = v, true
		}
	}
	d, ok := edit.NormDimLit(dim, zt.Rank())
	if !ok {
		return nil, n.Errorf("irfft: dim %d out of range for %s", dim, zt)
	}
	m, ok := zt.Shape[d].Const()
	if !ok {
		return nil, nil
	}
	if !haveLen {
		length = 2 * (m - 1)
	}
	keep, mirror := length/2+1, (length-1)/2
	if length < 1 || m < keep {
		return nil, nil
	}
	t := edit.NewBuilder(b, n)
	dd := ir.IntArg(int64(d))
	re, im := t.RealImag(za.Value)
	reParts, imParts := []*ir.Value{re}, []*ir.Value{im}
	if m > keep {
		reParts[0] = t.V(edit.OpNarrow, ir.ValueArg(re), dd, ir.IntArg(0), ir.IntArg(keep))
		imParts[0] = t.V(edit.OpNarrow, ir.ValueArg(im), dd, ir.IntArg(0), ir.IntArg(keep))
	}
	if mirror > 0 {
		reM := t.V(tpOpFlip, ir.ValueArg(t.V(edit.OpNarrow, ir.ValueArg(re), dd, ir.IntArg(1), ir.IntArg(mirror))), ir.IntsArg(int64(d)))
		imM := t.V(tpOpFlip, ir.ValueArg(t.V(edit.OpNarrow, ir.ValueArg(im), dd, ir.IntArg(1), ir.IntArg(mirror))), ir.IntsArg(int64(d)))
		reParts = append(reParts, reM)
		imParts = append(imParts, t.V(tpOpNeg, ir.ValueArg(imM)))
	}
	fullRe, fullIm := reParts[0], imParts[0]
	if len(reParts) > 1 {
		fullRe = t.V(edit.OpCat, ir.ValuesArg(reParts...), dd)
		fullIm = t.V(edit.OpCat, ir.ValuesArg(imParts...), dd)
	}
	full := t.V(edit.OpComplex, ir.ValueArg(fullRe), ir.ValueArg(fullIm))
	y := t.V(tpOpFFTC2C, ir.ValueArg(full), ir.IntsArg(int64(d)), ir.IntArg(norm), ir.BoolArg(false))
	yr := t.V(edit.OpSelectInt, ir.ValueArg(t.V(edit.OpViewAsReal, ir.ValueArg(y))), ir.IntArg(-1), ir.IntArg(0))
	res := t.Cast(yr, out.DType)
	if t.Err != nil {
		return nil, t.Err
	}
	c.Fired(n, "inverse c2c of the Hermitian spectrum, n = "+ir.IntArg(length).String())
	return []*ir.Value{res}, nil
}
