package xnnpack

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// Visitors for bilinear resizing and transposed convolution
// (support_resize.go holds their rules).

// flagAlignCorners is XNNPACK's XNN_FLAG_ALIGN_CORNERS; without it the
// resize uses half-pixel centers (not TensorFlow's legacy mode).
const flagAlignCorners = 0x00000008

// flagKeepDims is XNNPACK's XNN_FLAG_KEEP_DIMS (xnnpack.h): a reduction or
// global pooling keeps its reduced dims with length 1. exir sets it on
// every XNNGlobalAvgPooling2d (mean.dim with keepdim=True); without it the
// output has 2 dims and a 4-D consumer fails to define.
const flagKeepDims = 0x00000040

func (s *ser) resizeNode(n *ir.Node, name ir.Op) error {
	switch name {
	case ir.OpAtenUpsampleBilinear2dVec, ir.OpAtenUpsampleBilinear2d:
		return s.resize(n)
	}
	return fmt.Errorf("no XNNPACK visitor for %s", name)
}

// resize runs in NHWC; the new size is the result's static spatial size.
func (s *ser) resize(n *ir.Node) error {
	in, err := s.getNHWC(n.Args[0].Value)
	if err != nil {
		return err
	}
	out, err := s.outputNHWC(n.Results[0])
	if err != nil {
		return err
	}
	d := dimsOf(n.Results[0], s.env)
	flags := uint32(0)
	if n.Arg("align_corners").Bool() {
		flags = flagAlignCorners
	}
	s.add(xnnfb.XNodeUnionXNNStaticResizeBilinear2D, &xnnfb.XNNStaticResizeBilinear2DT{
		NewHeight: d[2], NewWidth: d[3], InputId: in, OutputId: out, Flags: flags,
	}, s.handle, nil)
	return nil
}

// deconv writes a transposed convolution: torch's weight
// [groups·I, O, kh, kw] becomes XNNPACK's per-group filter
// [groups·O, kh, kw, I] (viewed as [groups, I, O, kh, kw] and permuted to
// [groups, O, kh, kw, I]; OHWI for groups 1), padding crops the output on
// both sides and output_padding is the adjustment.
func (s *ser) deconv(n *ir.Node) error {
	if m := s.qconvs[n]; m != nil {
		return s.quantDeconv(n, m) // quant_deconv.go
	}
	x, w := n.Arg("input").Value, n.Arg("weight").Value
	g := n.Arg("groups").Int
	wd := dimsOf(w, s.env) // [groups·I, O, kh, kw]
	if g < 1 || len(wd) != 4 || int64(wd[0])%g != 0 {
		return fmt.Errorf("transposed convolution with groups %d and weight dims %v", g, wd)
	}
	in, err := s.getNHWC(x)
	if err != nil {
		return err
	}
	stride, _ := ints(n.Arg("stride"), 2)
	pad, _ := ints(n.Arg("padding"), 2)
	dil, _ := ints(n.Arg("dilation"), 2)
	adj, _ := ints(n.Arg("output_padding"), 2)
	gi := wd[0] / uint32(g)
	gd := []uint32{uint32(g), gi, wd[1], wd[2], wd[3]}
	perm := []int{0, 2, 3, 4, 1} // [groups, O, kh, kw, I]
	fd := []uint32{uint32(g) * wd[1], wd[2], wd[3], gi}
	l, err := s.permuted(w, gd, perm, elemSize(w))
	if err != nil {
		return err
	}
	filter, err := s.constValue(w, fd, l)
	if err != nil {
		return err
	}
	r, mm := s.result(n)
	out, err := s.outputNHWC(r)
	if err != nil {
		return err
	}
	bias := uint32(internal)
	if b := n.Arg("bias"); b.Kind == ir.ArgValue {
		if bias, err = s.get(b.Value); err != nil {
			return err
		}
	}
	s.add(xnnfb.XNodeUnionXNNConvTranspose2d, &xnnfb.XNNNodeConvT{
		PaddingTop: uint32(pad[0]), PaddingRight: uint32(pad[1]), PaddingBottom: uint32(pad[0]), PaddingLeft: uint32(pad[1]),
		KernelHeight: wd[2], KernelWidth: wd[3], SubsamplingHeight: uint32(stride[0]), SubsamplingWidth: uint32(stride[1]),
		DilationHeight: uint32(dil[0]), DilationWidth: uint32(dil[1]),
		GroupInputChannels: gi, GroupOutputChannels: wd[1], Groups: uint32(g),
		AdjustmentHeight: uint32(adj[0]), AdjustmentWidth: uint32(adj[1]),
		Input1Id: in, FilterId: filter, BiasId: bias, OutputId: out,
	}, s.handle, mm)
	return nil
}
