package xnnpack

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// Dim-order copies (exir's ToDimOrderCopyConfig and CloneDimOrderConfig).
// A _to_dim_order_copy that keeps the dtype, and a _clone_dim_order, are
// claimed; one that casts stays portable (exir rejects a dtype conversion).
// A copy between the contiguous and the channels-last (NHWC, dim order
// [0, 2, 3, 1]) order of a rank-4 tensor is an XNNStaticTranspose (exir's
// ConvertMemoryFormat visitor: [0, 2, 3, 1] into channels-last, [0, 3, 1,
// 2] out of it); one that keeps the order is an XNNCopy. A channels-last
// value is defined with its NHWC dims, which is how its memory holds it: as
// a delegate input or output the XNNPACK runtime reads the buffer as is.
// Only these copies may read or write a channels-last value inside a
// delegate (checkChannelsLast): the other visitors read values as NCHW.

var (
	opCloneDimOrder = ir.OpDimOrderOps_CloneDimOrder
	channelsLast    = []int{0, 2, 3, 1}
)

func init() {
	addRule(ir.OpDimOrderOps_ToDimOrderCopy, "ToDimOrderCopyConfig", checkDimOrderCopy)
	addRule(ir.OpDimOrderOps_CloneDimOrder, "CloneDimOrderConfig", checkDimOrderCopy)
}

// isDimOrderCopy reports the two ops this file lowers.
func isDimOrderCopy(n *ir.Node) bool { return n.Op == opToDimOrderCopy || n.Op == opCloneDimOrder }

// checkDimOrderCopy: no dtype change; each side contiguous or, at rank 4,
// channels-last.
func checkDimOrderCopy(c *checker, n *ir.Node) string {
	in, out := n.Args[0].Value.Tensor(), n.Results[0].Tensor()
	if in.DType != out.DType {
		return fmt.Sprintf("dtype conversion from %s to %s (portable)", in.DType, out.DType)
	}
	for _, t := range []*ir.TensorType{in, out} {
		if !t.IsContiguous() && !(t.Rank() == 4 && sameOrder(t.DimOrder, channelsLast, 4)) {
			return fmt.Sprintf("dim order %v (contiguous or channels-last only)", t.DimOrder)
		}
	}
	return ""
}

// checkChannelsLast rejects any other op that reads or writes a tensor
// with a non-default dim order.
func checkChannelsLast(n *ir.Node) string {
	if isDimOrderCopy(n) {
		return ""
	}
	for _, v := range append(n.Operands(), n.Results...) {
		if t := v.Tensor(); t != nil && !t.IsContiguous() {
			return fmt.Sprintf("%s has dim order %v (only a dim-order copy reads or writes one)", v, t.DimOrder)
		}
	}
	return ""
}

// isCL reports a rank-4 channels-last value.
func isCL(v *ir.Value) bool {
	t := v.Tensor()
	return t != nil && t.Rank() == 4 && !t.IsContiguous()
}

// physicalCL returns the id of channels-last v's NHWC value, defining it
// when v is a runtime input read for the first time.
func (s *ser) physicalCL(v *ir.Value) (uint32, error) {
	if id, ok := s.nhwc[v]; ok {
		return id, nil
	}
	if id, ok, err := s.lazyInput(v); ok {
		return id, err
	}
	return 0, fmt.Errorf("channels-last value %s has no XNNPACK value", v)
}

// outputCL defines channels-last result r by its NHWC dims, external when
// r is a region output.
func (s *ser) outputCL(r *ir.Value) (uint32, error) {
	ext, flags := uint32(internal), uint32(0)
	if e, ok := s.outExt[r]; ok {
		ext, flags = e, flagOutput
	}
	id, err := s.define(r, permDims(dimsOf(r, s.env), toNHWC), ext, flags, 0)
	s.nhwc[r] = id
	return id, err
}

// regionOut returns the id a region output is written to: its NHWC value
// when it is channels-last.
func (s *ser) regionOut(v *ir.Value) (uint32, error) {
	if isCL(v) {
		return s.physicalCL(v)
	}
	return s.get(v)
}

// dimOrderNode writes a dim-order copy: a transpose when the order
// changes, else a copy. An input whose NHWC form already exists (a
// convolution's result) is copied from it rather than transposed twice.
func (s *ser) dimOrderNode(n *ir.Node) error {
	x, r := n.Args[0].Value, n.Results[0]
	inCL, outCL := isCL(x), isCL(r)
	var src uint32
	var perm []int
	var err error
	switch {
	case inCL:
		src, err = s.physicalCL(x)
		if !outCL {
			perm = toNCHW
		}
	case outCL:
		if id, ok := s.nhwc[x]; ok {
			src = id
		} else {
			src, err = s.get(x)
			perm = toNHWC
		}
	default:
		src, err = s.get(x)
	}
	if err != nil {
		return err
	}
	var dst uint32
	if outCL {
		dst, err = s.outputCL(r)
	} else {
		dst, err = s.output(r)
	}
	if err != nil {
		return err
	}
	if perm == nil {
		s.add(xnnfb.XNodeUnionXNNCopy, &xnnfb.XNNNode1x1T{InputId: src, OutputId: dst}, s.handle, nil)
		return nil
	}
	p := make([]uint32, len(perm))
	for i, d := range perm {
		p[i] = uint32(d)
	}
	s.add(xnnfb.XNodeUnionXNNStaticTranspose, &xnnfb.XNNStaticTransposeT{NumDims: 4, Perm: p, InputId: src, OutputId: dst}, s.handle, nil)
	return nil
}
