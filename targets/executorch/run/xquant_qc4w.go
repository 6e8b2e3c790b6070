package run

import (
	"fmt"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// unpackQC4 reads a packed qcint4 constant (4-bit per-channel weights,
// exir's convert_to_qc4w): an [out, in] matrix stored as v+8, two values
// per byte along each row (the even index in the low nibble), each row
// padded to a whole byte. The values come back as int8 in [-8, 7]; the
// value's PerChannelQuant scales dequantize them.
func unpackQC4(t *xnnfb.XNNTensorValueT, data []byte) (*interp.Tensor, error) {
	if len(t.Dims) != 2 {
		return nil, fmt.Errorf("qcint4 constant %v: want an [out, in] matrix", t.Dims)
	}
	out, in := int(t.Dims[0]), int(t.Dims[1])
	stride := (in + 1) / 2
	if len(data) < out*stride {
		return nil, fmt.Errorf("qcint4 constant %v needs %d bytes, has %d", t.Dims, out*stride, len(data))
	}
	vals := make([]int64, out*in)
	for r := 0; r < out; r++ {
		for c := 0; c < in; c++ {
			b := data[r*stride+c/2]
			if c%2 == 1 {
				b >>= 4
			}
			vals[r*in+c] = int64(b&15) - 8
		}
	}
	return interp.FromInt64(ir.Int8, []int64{int64(out), int64(in)}, vals), nil
}
