package ir

import (
	"fmt"

	"github.com/fxport/fxport/ir/sym"
)

// inferXnnpackArgmaxPool2d: xnnpack.argmax_pool2d on an [N, H, W, C]
// tensor: windows of kernel_size at stride kernel_size over the input padded
// by padding on both sides give [N, (H+2ph)/kh, (W+2pw)/kw, C] values (the
// input's dtype) and int32 window positions.
func inferXnnpackArgmaxPool2d(c *InferCtx) ([]Type, error) {
	t, err := c.Tensor("self")
	if err != nil {
		return nil, err
	}
	if t.Rank() != 4 {
		return nil, fmt.Errorf("argmax_pool2d: expected a 4-D [N, H, W, C] input, got %s", t)
	}
	k, err := c.Ints("kernel_size")
	if err != nil {
		return nil, err
	}
	pad, err := c.Ints("padding")
	if err != nil {
		return nil, err
	}
	if len(k) == 1 {
		k = []int64{k[0], k[0]}
	}
	if len(pad) == 1 {
		pad = []int64{pad[0], pad[0]}
	}
	if len(k) != 2 || len(pad) != 2 {
		return nil, fmt.Errorf("argmax_pool2d: kernel_size %v and padding %v must have two entries", k, pad)
	}
	if k[0] < 1 || k[1] < 1 || k[0]*k[1] < 2 || pad[0] < 0 || pad[1] < 0 {
		return nil, fmt.Errorf("argmax_pool2d: kernel %v (at least 2 elements) and padding %v (non-negative)", k, pad)
	}
	shape := append([]sym.Expr(nil), t.Shape...)
	for i := 0; i < 2; i++ {
		shape[1+i] = sym.FloorDiv(sym.Add(t.Shape[1+i], sym.Const(2*pad[i])), sym.Const(k[i]))
	}
	return []Type{withShapeDType(t, shape, t.DType), withShapeDType(t, append([]sym.Expr(nil), shape...), Int32)}, nil
}
