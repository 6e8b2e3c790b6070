package run

import (
	"fmt"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

var opXNNArgMaxPool = ir.OpXnnpackArgmaxPool2d

// argMaxPool runs XNNArgMaxPooling2d (NHWC, fp32; stride = pooling size, no
// dilation) as XNNPACK computes it: the interpreter's
// xnnpack.argmax_pool2d kernel, which reads each window in XNNPACK's
// indirection order (k = x·pooling_height + y), clamps padded positions to
// the border and keeps the first strictly greater element. The index output
// holds k as int32.
func (r *xrun) argMaxPool(n *xnnfb.XNodeT, x *xnnfb.XNNArgMaxPooling2dT) error {
	if x.PaddingTop != x.PaddingBottom || x.PaddingLeft != x.PaddingRight {
		return fmt.Errorf("asymmetric argmax-pooling padding %d/%d/%d/%d is not supported", x.PaddingTop, x.PaddingRight, x.PaddingBottom, x.PaddingLeft)
	}
	if x.Flags != 0 {
		return fmt.Errorf("argmax-pooling flags %#x are not supported", x.Flags)
	}
	in, err := r.get(x.InputId)
	if err != nil {
		return err
	}
	if d := r.decl[x.OutputIndexId]; d == nil || d.Datatype != xnnfb.XNNDatatypexnn_datatype_int32 {
		return fmt.Errorf("index output %d is not an int32 value", x.OutputIndexId)
	}
	outs, err := interp.RunOp(opXNNArgMaxPool, []interp.Value{in,
		toValues([]int64{int64(x.PoolingHeight), int64(x.PoolingWidth)}),
		toValues([]int64{int64(x.PaddingTop), int64(x.PaddingLeft)})})
	if err != nil {
		return err
	}
	vals, ok1 := outs[0].(*interp.Tensor)
	idx, ok2 := outs[1].(*interp.Tensor)
	if !ok1 || !ok2 {
		return fmt.Errorf("argmax pooling returned %s, %s", interp.Describe(outs[0]), interp.Describe(outs[1]))
	}
	if err := r.define(n, x.OutputValueId, vals); err != nil {
		return err
	}
	r.vals[x.OutputIndexId] = idx
	return nil
}
