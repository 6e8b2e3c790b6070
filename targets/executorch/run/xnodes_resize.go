package run

import (
	"fmt"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// XNNPACK's XNN_FLAG_ALIGN_CORNERS and XNN_FLAG_TENSORFLOW_LEGACY_MODE.
const (
	xflagAlignCorners     = 0x00000008
	xflagTensorflowLegacy = 0x00000004
	xflagKeepDims         = 0x00000040 // XNN_FLAG_KEEP_DIMS
)

// resize runs XNNStaticResizeBilinear2D (NHWC) as torch's
// upsample_bilinear2d on NCHW with an explicit output size: XNNPACK's
// default is half-pixel centers with the scale in/out (out−1/in−1 with
// align corners), which is torch's rule when no scale factor is given.
func (r *xrun) resize(n *xnnfb.XNodeT, x *xnnfb.XNNStaticResizeBilinear2DT) error {
	if x.Flags&xflagTensorflowLegacy != 0 {
		return fmt.Errorf("TensorFlow legacy resize mode is not supported")
	}
	in, err := r.get(x.InputId)
	if err != nil {
		return err
	}
	if in.Rank() != 4 {
		return fmt.Errorf("resize of a rank-%d tensor (want 4, NHWC)", in.Rank())
	}
	if x.NewHeight == 0 || x.NewWidth == 0 {
		return fmt.Errorf("resize to %dx%d", x.NewHeight, x.NewWidth)
	}
	if in, err = aten(ir.OpAtenPermute, in, nhwcToNCHW); err != nil {
		return err
	}
	out, err := aten(ir.OpAtenUpsampleBilinear2dVec, in, toValues([]int64{int64(x.NewHeight), int64(x.NewWidth)}),
		x.Flags&xflagAlignCorners != 0, nil)
	if err != nil {
		return err
	}
	if out, err = aten(ir.OpAtenPermute, out, nchwToNHWC); err != nil {
		return err
	}
	return r.define(n, x.OutputId, out)
}

// deconv runs XNNConvTranspose2d (NHWC; filter [groups·O, kh, kw, I] per
// group) as torch's transposed convolution: the filter is rearranged to
// torch's [groups·I, O, kh, kw], the convolution runs unpadded with the
// adjustment as output_padding, and the padding then crops the output
// (which also covers asymmetric padding).
func (r *xrun) deconv(n *xnnfb.XNodeT, x *xnnfb.XNNNodeConvT, in, w *interp.Tensor, b interp.Value) error {
	g, oc, ic := int64(max(1, x.Groups)), int64(x.GroupOutputChannels), int64(x.GroupInputChannels)
	if w.Shape[0] != g*oc || w.Shape[3] != ic || w.Shape[1] != int64(x.KernelHeight) || w.Shape[2] != int64(x.KernelWidth) {
		return fmt.Errorf("filter shape %v does not match groups %d × [%d, %d, %d, %d]", w.Shape, g, oc, x.KernelHeight, x.KernelWidth, ic)
	}
	if in.Shape[3] != g*ic {
		return fmt.Errorf("input has %d channels, want %d", in.Shape[3], g*ic)
	}
	kh, kw := int64(x.KernelHeight), int64(x.KernelWidth)
	var err error
	if w, err = aten(ir.OpAtenReshape, w, toValues([]int64{g, oc, kh, kw, ic})); err != nil {
		return err
	}
	if w, err = aten(ir.OpAtenPermute, w, toValues([]int64{0, 4, 1, 2, 3})); err != nil {
		return err
	}
	if w, err = aten(ir.OpAtenReshape, w, toValues([]int64{g * ic, oc, kh, kw})); err != nil {
		return err
	}
	if in, err = aten(ir.OpAtenPermute, in, nhwcToNCHW); err != nil {
		return err
	}
	sh, sw := max(1, int64(x.SubsamplingHeight)), max(1, int64(x.SubsamplingWidth))
	out, err := aten(ir.OpAtenConvolution, in, w, b, toValues([]int64{sh, sw}), toValues([]int64{0, 0}),
		toValues([]int64{max(1, int64(x.DilationHeight)), max(1, int64(x.DilationWidth))}), true,
		toValues([]int64{int64(x.AdjustmentHeight), int64(x.AdjustmentWidth)}), g)
	if err != nil {
		return err
	}
	crop := [][3]int64{{2, int64(x.PaddingTop), int64(x.PaddingBottom)}, {3, int64(x.PaddingLeft), int64(x.PaddingRight)}}
	for _, c := range crop {
		size := out.Shape[c[0]]
		if c[1]+c[2] >= size {
			return fmt.Errorf("padding %d+%d crops all of an output dim of %d", c[1], c[2], size)
		}
		if c[1] == 0 && c[2] == 0 {
			continue
		}
		if out, err = aten(ir.OpAtenSliceTensor, out, c[0], c[1], size-c[2], int64(1)); err != nil {
			return err
		}
	}
	if out, err = aten(ir.OpAtenPermute, out.Clone(), nchwToNHWC); err != nil {
		return err
	}
	return r.define(n, x.OutputId, out)
}
