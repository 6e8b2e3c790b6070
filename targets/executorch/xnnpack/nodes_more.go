package xnnpack

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// Visitors for max pooling, constant padding, slicing, batched matmul and
// ELU (support_more.go holds their rules).

func (s *ser) moreNode(n *ir.Node, name ir.Op) error {
	switch name {
	case ir.OpAtenMaxPool2d, ir.OpAtenMaxPool2dWithIndices: // indices unused (maxpool_values.go)
		return s.maxPool(n)
	case ir.OpAtenConstantPadNd:
		return s.constantPad(n)
	case ir.OpAtenSliceCopyTensor:
		return s.slice(n)
	case ir.OpAtenBmm:
		a, err := s.get(n.Args[0].Value)
		if err != nil {
			return err
		}
		b, err := s.get(n.Args[1].Value)
		if err != nil {
			return err
		}
		out, err := s.output(n.Results[0])
		if err != nil {
			return err
		}
		s.add(xnnfb.XNodeUnionXNNBatchMatrixMultiply, &xnnfb.XNNNode2x1T{Input1Id: a, Input2Id: b, OutputId: out}, s.handle, nil)
		return nil
	case ir.OpAtenElu:
		in, err := s.get(n.Args[0].Value)
		if err != nil {
			return err
		}
		out, err := s.output(n.Results[0])
		if err != nil {
			return err
		}
		alpha, _ := number(n.Arg("alpha"))
		s.add(xnnfb.XNodeUnionXNNELU, &xnnfb.XNNELUT{Alpha: float32(alpha), InputId: in, OutputId: out}, s.handle, nil)
		return nil
	}
	return s.resizeNode(n, name)
}

// maxPool runs in NHWC like avg_pool2d; the stride defaults to the kernel.
func (s *ser) maxPool(n *ir.Node) error {
	in, err := s.getNHWC(n.Args[0].Value)
	if err != nil {
		return err
	}
	out, err := s.outputNHWC(n.Results[0])
	if err != nil {
		return err
	}
	s.add(xnnfb.XNodeUnionXNNMaxPooling2d, maxPoolParams(n, in, out), s.handle, nil)
	return nil
}

// maxPoolParams are max pooling n's window between values in and out.
func maxPoolParams(n *ir.Node, in, out uint32) *xnnfb.XNNPooling2DT {
	k, _ := ints(n.Arg("kernel_size"), 2)
	st, ok := ints(n.Arg("stride"), 2)
	if !ok {
		st = k
	}
	pad, _ := ints(n.Arg("padding"), 2)
	dil, _ := ints(n.Arg("dilation"), 2)
	return &xnnfb.XNNPooling2DT{
		PaddingTop: uint32(pad[0]), PaddingRight: uint32(pad[1]), PaddingBottom: uint32(pad[0]), PaddingLeft: uint32(pad[1]),
		PoolingHeight: uint32(k[0]), PoolingWidth: uint32(k[1]), StrideHeight: uint32(st[0]), StrideWidth: uint32(st[1]),
		DilationHeight: uint32(dil[0]), DilationWidth: uint32(dil[1]), InputId: in, OutputId: out,
	}
}

// constantPad turns torch's pad list (last dim first, [lo, hi] pairs) into
// per-dim pre/post paddings in dim order.
func (s *ser) constantPad(n *ir.Node) error {
	x := n.Args[0].Value
	in, err := s.get(x)
	if err != nil {
		return err
	}
	out, err := s.output(n.Results[0])
	if err != nil {
		return err
	}
	rank := len(dimsOf(x, s.env))
	pre, post := make([]uint32, rank), make([]uint32, rank)
	pad, _ := ints(n.Arg("pad"), 0)
	for i := 0; i+1 < len(pad); i += 2 {
		d := rank - 1 - i/2
		if d < 0 {
			return fmt.Errorf("padding list longer than the rank")
		}
		pre[d], post[d] = uint32(pad[i]), uint32(pad[i+1])
	}
	v, _ := number(n.Arg("value"))
	s.add(xnnfb.XNodeUnionXNNStaticConstantPad, &xnnfb.XNNStaticConstantPadT{PrePaddings: pre, PostPaddings: post, PaddingValue: float32(v), InputId: in, OutputId: out}, s.handle, nil)
	return nil
}

// slice writes offsets and sizes for every dim (the result's static shape
// gives the sizes; the sliced dim's offset is the normalized start).
func (s *ser) slice(n *ir.Node) error {
	x := n.Args[0].Value
	in, err := s.get(x)
	if err != nil {
		return err
	}
	out, err := s.output(n.Results[0])
	if err != nil {
		return err
	}
	shape, ok := x.Tensor().StaticShape()
	if !ok {
		return fmt.Errorf("slice of a dynamic shape")
	}
	rank := int64(len(shape))
	dim := n.Arg("dim").Int
	if dim < 0 {
		dim += rank
	}
	if dim < 0 || dim >= rank {
		return fmt.Errorf("slice dim %d out of range for rank %d", n.Arg("dim").Int, rank)
	}
	start := int64(0)
	if a := n.Arg("start"); a.Kind == ir.ArgInt {
		start = a.Int
	}
	if start < 0 {
		start += shape[dim]
	}
	start = max(0, min(start, shape[dim]))
	sizes := dimsOf(n.Results[0], s.env)
	offsets := make([]uint32, rank)
	offsets[dim] = uint32(start)
	if int64(sizes[dim])+start > shape[dim] {
		return fmt.Errorf("slice [%d, +%d) past dim %d of size %d", start, sizes[dim], dim, shape[dim])
	}
	s.add(xnnfb.XNodeUnionXNNStaticSlice, &xnnfb.XNNStaticSliceT{NumDims: uint32(rank), Offsets: offsets, Sizes: sizes, InputId: in, OutputId: out}, s.handle, nil)
	return nil
}
