package xnnpack

import (
	"fmt"

	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// 4-bit per-channel weights (qc4w). A fully-connected weight that is a
// dequantize_per_channel of int8 storage with the quant range [-8, 7] is
// written as exir's QuantParams.is_qc4w writes it: datatype
// xnn_datatype_qcint4 with the per-channel scales (PerChannelQuant along
// the output channels), dims [out, in], data packed as for qb4w (v+8, two
// per byte along the input channels, the even index in the low nibble),
// each row padded to a whole byte (exir's convert_to_qc4w pads an odd
// input-channel count with a zero). It serves both the static qint8
// pattern (quant_nodes.go) and the dynamically quantized one
// (quant_dynamic_ser.go). Convolution weights stay qcint8 (exir's packing
// is for 2-d weights only).

// isQC4W reports a per-channel weight quantized to [-8, 7].
func isQC4W(w *wquant) bool {
	if !w.perChannel() {
		return false
	}
	lo, ok1 := number(w.dq.Arg("quant_min"))
	hi, ok2 := number(w.dq.Arg("quant_max"))
	return ok1 && ok2 && lo == -8 && hi == 7
}

// fcFilter defines the [out, in] filter of a quantized fully-connected op
// (transposed from a bare [in, out] weight when transpose is set): qcint4
// for a qc4w weight, else qint8 or qcint8. It returns the filter's id and
// its quantization (the bias's scales derive from it).
func (s *ser) fcFilter(w *wquant, transpose bool) (uint32, *quant, error) {
	wd := dimsOf(w.w, s.env)
	wq, err := s.weightQuant(w, 0)
	if err != nil {
		return 0, nil, err
	}
	var wb pte.Lazy
	switch {
	case isQC4W(w):
		if len(wd) != 2 {
			return 0, nil, fmt.Errorf("weight %s: qc4w needs a matrix, got dims %v", w.w, wd)
		}
		src := wd
		if transpose {
			wd = permDims(wd, []int{1, 0})
		}
		out, in := int(wd[0]), int(wd[1])
		wb, err = s.derived(w.w, "packed to 4 bits per channel", func(b []byte) ([]byte, error) {
			if len(b) != out*in {
				return nil, fmt.Errorf("%d bytes for a %dx%d int8 matrix", len(b), out, in)
			}
			if transpose {
				b = permuteBytes(b, src, []int{1, 0}, 1)
			}
			return packQC4(b, out, in)
		})
		if err != nil {
			return 0, nil, fmt.Errorf("weight %s: %w", w.w, err)
		}
		id, err := s.constValueQ(w.w, wd, wb, &quant{dt: xnnfb.XNNDatatypexnn_datatype_qcint4, scales: wq.scales, dim: 0})
		return id, wq, err
	case transpose: // [in, out] → [out, in]
		wb, err = s.permuted(w.w, wd, []int{1, 0}, 1)
		wd = permDims(wd, []int{1, 0})
	default:
		wb, err = s.raw(w.w)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("weight %s: %w", w.w, err)
	}
	id, err := s.constValueQ(w.w, wd, wb, wq)
	return id, wq, err
}

// packQC4 packs an [out, in] int8 matrix of values in [-8, 7] as v+8, two
// per byte along each row (the even index in the low nibble), each row
// padded to a whole byte with the code of 0.
func packQC4(b []byte, out, in int) ([]byte, error) {
	stride := (in + 1) / 2
	packed := make([]byte, out*stride)
	for r := 0; r < out; r++ {
		for c := 0; c < in; c++ {
			v := int8(b[r*in+c])
			if v < -8 || v > 7 {
				return nil, fmt.Errorf("value at [%d, %d] is %d, outside the 4-bit range [-8, 7]", r, c, v)
			}
			code := byte(v + 8)
			if c%2 == 1 {
				code <<= 4
			}
			packed[r*stride+c/2] |= code
		}
		if in%2 == 1 {
			packed[r*stride+stride-1] |= 8 << 4 // the padding column holds 0
		}
	}
	return packed, nil
}
