package run

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// binaryOps and unaryOps map XNNPACK elementwise nodes to ATen ops.
var (
	binaryOps = map[xnnfb.XNodeUnion]ir.Op{
		xnnfb.XNodeUnionXNNAdd:                 ir.OpAtenAddTensor,
		xnnfb.XNodeUnionXNNSubtract:            ir.OpAtenSubTensor,
		xnnfb.XNodeUnionXNNMultiply:            ir.OpAtenMulTensor,
		xnnfb.XNodeUnionXNNDiv:                 ir.OpAtenDivTensor,
		xnnfb.XNodeUnionXNNMinimum:             ir.OpAtenMinimum,
		xnnfb.XNodeUnionXNNMaximum:             ir.OpAtenMaximum,
		xnnfb.XNodeUnionXNNBatchMatrixMultiply: ir.OpAtenBmm,
		xnnfb.XNodeUnionXNNPReLU:               ir.OpAtenPrelu,
	}
	unaryOps = map[xnnfb.XNodeUnion]ir.Op{
		xnnfb.XNodeUnionXNNSigmoid:              ir.OpAtenSigmoid,
		xnnfb.XNodeUnionXNNTanh:                 ir.OpAtenTanh,
		xnnfb.XNodeUnionXNNAbs:                  ir.OpAtenAbs,
		xnnfb.XNodeUnionXNNNegate:               ir.OpAtenNeg,
		xnnfb.XNodeUnionXNNFloor:                ir.OpAtenFloor,
		xnnfb.XNodeUnionXNNCeiling:              ir.OpAtenCeil,
		xnnfb.XNodeUnionXNNSquareRoot:           ir.OpAtenSqrt,
		xnnfb.XNodeUnionXNNReciprocalSquareRoot: ir.OpAtenRsqrt,
		xnnfb.XNodeUnionXNNExp:                  ir.OpAtenExp,
		xnnfb.XNodeUnionXNNLog:                  ir.OpAtenLog,
		xnnfb.XNodeUnionXNNSin:                  ir.OpAtenSin,
		xnnfb.XNodeUnionXNNCos:                  ir.OpAtenCos,
		xnnfb.XNodeUnionXNNGelu:                 ir.OpAtenGelu,
		xnnfb.XNodeUnionXNNHardswish:            ir.OpAtenHardswish,
		xnnfb.XNodeUnionXNNCopy:                 ir.OpAtenClone,
	}
)

var nhwcToNCHW, nchwToNHWC = toValues([]int64{0, 3, 1, 2}), toValues([]int64{0, 2, 3, 1})

// node runs one XNNPACK node as its ATen equivalent.
func (r *xrun) node(n *xnnfb.XNodeT) error {
	kind := n.XnodeUnion.Type
	switch x := n.XnodeUnion.Value.(type) {
	case *xnnfb.XNNNode2x1T:
		name, ok := binaryOps[kind]
		if !ok {
			break
		}
		a, err := r.get(x.Input1Id)
		if err != nil {
			return err
		}
		b, err := r.get(x.Input2Id)
		if err != nil {
			return err
		}
		args := []interp.Value{a, b}
		if kind == xnnfb.XNodeUnionXNNAdd || kind == xnnfb.XNodeUnionXNNSubtract {
			args = append(args, int64(1))
		}
		out, err := aten(name, args...)
		if err != nil {
			return err
		}
		return r.define(n, x.OutputId, out)
	case *xnnfb.XNNNode1x1T:
		in, err := r.get(x.InputId)
		if err != nil {
			return err
		}
		var out *interp.Tensor
		switch kind {
		case xnnfb.XNodeUnionXNNClamp, xnnfb.XNodeUnionXNNConvert:
			// The clamp bounds are the node's output_min_max (applied by
			// define); a conversion is the identity in the float domain.
			out = in
		case xnnfb.XNodeUnionXNNSoftmax:
			out, err = aten(ir.OpAten_Softmax, in, int64(-1), false)
		case xnnfb.XNodeUnionXNNSquare:
			out, err = aten(ir.OpAtenMulTensor, in, in)
		case xnnfb.XNodeUnionXNNGlobalAvgPooling2d:
			// NHWC in; without XNN_FLAG_KEEP_DIMS XNNPACK drops the
			// pooled dims, so the output must be declared 2-D.
			keep := x.Flags&xflagKeepDims != 0
			if d, ok := r.decl[x.OutputId]; ok && d != nil {
				if want := map[bool]int{true: 4, false: 2}[keep]; len(d.Dims) != want {
					return fmt.Errorf("XNNGlobalAvgPooling2d: output value %d has %d dims, the node makes %d (flags %#x; XNN_FLAG_KEEP_DIMS keeps the pooled dims): XNNPACK refuses to define it", x.OutputId, len(d.Dims), want, x.Flags)
				}
			}
			out, err = aten(ir.OpAtenMeanDim, in, toValues([]int64{1, 2}), keep, nil)
		default:
			name, ok := unaryOps[kind]
			if !ok {
				return fmt.Errorf("node kind %s is not supported", kind)
			}
			if kind == xnnfb.XNodeUnionXNNGelu {
				out, err = aten(name, in, "none")
			} else {
				out, err = aten(name, in)
			}
		}
		if err != nil {
			return err
		}
		return r.define(n, x.OutputId, out)
	case *xnnfb.XNNFullyConnectedT:
		in, err := r.get(x.Input1Id)
		if err != nil {
			return err
		}
		w, err := r.get(x.FilterId)
		if err != nil {
			return err
		}
		var b interp.Value
		if x.BiasId != math.MaxUint32 {
			if b, err = r.get(x.BiasId); err != nil {
				return err
			}
		}
		out, err := aten(ir.OpAtenLinear, in, w, b)
		if err != nil {
			return err
		}
		return r.define(n, x.OutputId, out)
	case *xnnfb.XNNNodeConvT:
		return r.conv(n, kind, x)
	case *xnnfb.XNNPooling2DT:
		return r.pool(n, kind, x)
	case *xnnfb.XNNArgMaxPooling2dT:
		return r.argMaxPool(n, x) // xnodes_argmax.go
	case *xnnfb.XNNStaticResizeBilinear2DT:
		return r.resize(n, x)
	case *xnnfb.XNNStaticTransposeT:
		in, err := r.get(x.InputId)
		if err != nil {
			return err
		}
		perm := make([]int64, len(x.Perm))
		for i, p := range x.Perm {
			perm[i] = int64(p)
		}
		out, err := aten(ir.OpAtenPermute, in, toValues(perm))
		if err != nil {
			return err
		}
		return r.define(n, x.OutputId, out)
	case *xnnfb.XNNStaticReshapeT:
		in, err := r.get(x.InputId)
		if err != nil {
			return err
		}
		shape := make([]int64, len(x.NewShape))
		for i, d := range x.NewShape {
			shape[i] = int64(d)
			if d == 0 {
				shape[i] = -1 // a dynamic dim: inferred
			}
		}
		out, err := aten(ir.OpAtenReshape, in, toValues(shape))
		if err != nil {
			return err
		}
		return r.define(n, x.OutputId, out)
	case *xnnfb.XNNCatT:
		ids := []uint32{x.Input1Id, x.Input2Id, x.Input3Id, x.Input4Id, x.Input5Id}
		count := map[xnnfb.XNodeUnion]int{xnnfb.XNodeUnionXNNConcatenate2: 2, xnnfb.XNodeUnionXNNConcatenate3: 3,
			xnnfb.XNodeUnionXNNConcatenate4: 4, xnnfb.XNodeUnionXNNConcatenate5: 5}[kind]
		var ts []interp.Value
		for _, id := range ids[:count] {
			t, err := r.get(id)
			if err != nil {
				return err
			}
			ts = append(ts, t)
		}
		out, err := aten(ir.OpAtenCat, ts, int64(x.Axis))
		if err != nil {
			return err
		}
		return r.define(n, x.OutputId, out)
	case *xnnfb.XNNStaticSliceT:
		out, err := r.get(x.InputId)
		if err != nil {
			return err
		}
		for d := range x.Offsets {
			if d >= len(x.Sizes) {
				break
			}
			start := int64(x.Offsets[d])
			if out, err = aten(ir.OpAtenSliceTensor, out, int64(d), start, start+int64(x.Sizes[d]), int64(1)); err != nil {
				return err
			}
		}
		return r.define(n, x.OutputId, out.Clone())
	case *xnnfb.XNNStaticConstantPadT:
		in, err := r.get(x.InputId)
		if err != nil {
			return err
		}
		var pad []int64
		for d := len(x.PrePaddings) - 1; d >= 0 && d < len(x.PostPaddings); d-- {
			pad = append(pad, int64(x.PrePaddings[d]), int64(x.PostPaddings[d]))
		}
		out, err := aten(ir.OpAtenConstantPadNd, in, toValues(pad), float64(x.PaddingValue))
		if err != nil {
			return err
		}
		return r.define(n, x.OutputId, out)
	case *xnnfb.XNNLeakyReLUT:
		in, err := r.get(x.InputId)
		if err != nil {
			return err
		}
		out, err := aten(ir.OpAtenLeakyRelu, in, float64(x.NegativeSlope))
		if err != nil {
			return err
		}
		return r.define(n, x.OutputId, out)
	case *xnnfb.XNNELUT:
		in, err := r.get(x.InputId)
		if err != nil {
			return err
		}
		out, err := aten(ir.OpAtenElu, in, float64(x.Alpha), int64(1), int64(1))
		if err != nil {
			return err
		}
		return r.define(n, x.OutputId, out)
	}
	return fmt.Errorf("node kind %s is not supported", kind)
}

// padNHWC pads an NCHW tensor's spatial dims when the padding is
// asymmetric; it returns the symmetric padding left for the op.
func padNCHW(in *interp.Tensor, top, right, bottom, left uint32, value float64) (*interp.Tensor, []int64, error) {
	if top == bottom && left == right {
		return in, []int64{int64(top), int64(left)}, nil
	}
	out, err := aten(ir.OpAtenConstantPadNd, in, toValues([]int64{int64(left), int64(right), int64(top), int64(bottom)}), value)
	return out, []int64{0, 0}, err
}

// conv runs an NHWC convolution as aten.convolution on NCHW: filters are
// OHWI (Conv2d) or 1HWO (depthwise); transposed ones go to deconv.
func (r *xrun) conv(n *xnnfb.XNodeT, kind xnnfb.XNodeUnion, x *xnnfb.XNNNodeConvT) error {
	in, err := r.get(x.Input1Id)
	if err != nil {
		return err
	}
	w, err := r.get(x.FilterId)
	if err != nil {
		return err
	}
	var b interp.Value
	if x.BiasId != math.MaxUint32 {
		if b, err = r.get(x.BiasId); err != nil {
			return err
		}
	}
	if in.Rank() != 4 || w.Rank() != 4 {
		return fmt.Errorf("convolution of rank %d with a rank-%d filter (want 4)", in.Rank(), w.Rank())
	}
	transposed := false
	switch kind {
	case xnnfb.XNodeUnionXNNConvTranspose2d:
		return r.deconv(n, x, in, w, b)
	case xnnfb.XNodeUnionXNNConv2d:
		w, err = aten(ir.OpAtenPermute, w, nhwcToNCHW) // OHWI → OIHW
	case xnnfb.XNodeUnionXNNDepthwiseConv2d:
		w, err = aten(ir.OpAtenPermute, w, toValues([]int64{3, 0, 1, 2})) // 1HWO → O1HW
	default:
		return fmt.Errorf("node kind %s is not supported", kind)
	}
	if err != nil {
		return err
	}
	if in, err = aten(ir.OpAtenPermute, in, nhwcToNCHW); err != nil {
		return err
	}
	in, pad, err := padNCHW(in, x.PaddingTop, x.PaddingRight, x.PaddingBottom, x.PaddingLeft, 0)
	if err != nil {
		return err
	}
	out, err := aten(ir.OpAtenConvolution, in, w, b,
		toValues([]int64{int64(x.SubsamplingHeight), int64(x.SubsamplingWidth)}), toValues(pad),
		toValues([]int64{int64(x.DilationHeight), int64(x.DilationWidth)}), transposed,
		toValues([]int64{0, 0}), int64(x.Groups))
	if err != nil {
		return err
	}
	if out, err = aten(ir.OpAtenPermute, out, nchwToNHWC); err != nil {
		return err
	}
	return r.define(n, x.OutputId, out)
}

// pool runs NHWC max/average pooling as the ATen NCHW op.
func (r *xrun) pool(n *xnnfb.XNodeT, kind xnnfb.XNodeUnion, x *xnnfb.XNNPooling2DT) error {
	in, err := r.get(x.InputId)
	if err != nil {
		return err
	}
	if in, err = aten(ir.OpAtenPermute, in, nhwcToNCHW); err != nil {
		return err
	}
	k := toValues([]int64{int64(x.PoolingHeight), int64(x.PoolingWidth)})
	s := toValues([]int64{int64(x.StrideHeight), int64(x.StrideWidth)})
	var out *interp.Tensor
	switch kind {
	case xnnfb.XNodeUnionXNNMaxPooling2d:
		var pad []int64
		if in, pad, err = padNCHW(in, x.PaddingTop, x.PaddingRight, x.PaddingBottom, x.PaddingLeft, math.Inf(-1)); err != nil {
			return err
		}
		dil := toValues([]int64{max(1, int64(x.DilationHeight)), max(1, int64(x.DilationWidth))})
		out, err = aten(ir.OpAtenMaxPool2d, in, k, s, toValues(pad), dil, false)
	case xnnfb.XNodeUnionXNNAvgPooling2d:
		pad := []int64{int64(x.PaddingTop), int64(x.PaddingLeft)}
		if x.PaddingTop != x.PaddingBottom || x.PaddingLeft != x.PaddingRight {
			return fmt.Errorf("asymmetric average-pooling padding is not supported")
		}
		out, err = aten(ir.OpAtenAvgPool2d, in, k, s, toValues(pad), false, false, nil)
	default:
		return fmt.Errorf("node kind %s is not supported", kind)
	}
	if err != nil {
		return err
	}
	if out, err = aten(ir.OpAtenPermute, out, nchwToNHWC); err != nil {
		return err
	}
	return r.define(n, x.OutputId, out)
}
