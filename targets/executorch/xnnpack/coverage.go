package xnnpack

import (
	"fmt"
	"github.com/fxport/fxport/ir"
	"sort"
	"strings"

	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// KindCoverage says whether the serializer writes one XN01 node kind: the
// edge ops whose visitors produce it, or why it is never written.
type KindCoverage struct {
	Kind   xnnfb.XNodeUnion
	Ops    []ir.Op // edge ops lowered to this kind; empty when not written
	Reason string  // why the kind is not written (Ops empty), or a note
}

// coverage lists every XNodeUnion member (coverage_test.go checks that the
// list is complete, that each op has a support rule, and that the numeric
// tests exercise every written kind).
var coverage = map[xnnfb.XNodeUnion]KindCoverage{
	xnnfb.XNodeUnionXNNAdd:                       {Ops: []ir.Op{ir.OpAtenAddTensor}, Reason: "qint8 when both operands are dequantized from qint8 and the sum is quantized (quant_add.go); in NHWC when an operand is a quantized convolution's output"},
	xnnfb.XNodeUnionXNNFullyConnected:            {Ops: []ir.Op{ir.OpAtenAddmm, ir.OpAtenMm, ir.OpQuantizedDecomposedDequantizePerChannel, ir.OpQuantizedDecomposedDequantizePerTensorTensor, ir.OpQuantizedDecomposedDequantizePerToken, ir.OpQuantizedDecomposedDequantizePerChannelGroup}, Reason: "linear reaches it as permute_copy + addmm/mm; qint8 when its input and weight are dequantized (weight per tensor, or per output channel: qcint8 channel_dim 0, qcint32 bias); dynamically quantized input (qd8, quant_dynamic.go): qdint8 input, qcint8 filter per output channel or qbint4 filter (4-bit group-wise, group size a multiple of 32), fp32 bias and output; a per-channel weight with quant range [-8, 7] (static or dynamic input) is a qcint4 filter, packed two per byte, rows padded (quant_qc4w.go)"},
	xnnfb.XNodeUnionXNNSoftmax:                   {Ops: []ir.Op{ir.OpAten_Softmax}},
	xnnfb.XNodeUnionXNNSigmoid:                   {Ops: []ir.Op{ir.OpAtenSigmoid}},
	xnnfb.XNodeUnionXNNStaticTranspose:           {Ops: []ir.Op{ir.OpAtenPermuteCopy, ir.OpDimOrderOps_ToDimOrderCopy, ir.OpDimOrderOps_CloneDimOrder}, Reason: "also the NCHW↔NHWC layout transposes (debug handle 65535); a dtype-preserving dim-order copy between contiguous and channels-last (rank 4) is [0, 2, 3, 1] or [0, 3, 1, 2], its channels-last side declared with NHWC dims (dimorder_copy.go); a cast stays portable"},
	xnnfb.XNodeUnionXNNClamp:                     {Ops: []ir.Op{ir.OpAtenRelu, ir.OpAtenHardtanh, ir.OpAtenClamp}, Reason: "fused into the producer's output_min_max where possible"},
	xnnfb.XNodeUnionXNNConv2d:                    {Ops: []ir.Op{ir.OpAtenConvolution, ir.OpQuantizedDecomposedDequantizePerChannel}, Reason: "qint8 when its input and weight are dequantized (weight per tensor, or per output channel: OHWI qcint8 channel_dim 0, qcint32 bias); qdint8 NHWC input, qcint8 filter, fp32 bias and output when its input is dynamically quantized per tensor and it is not depthwise (quant_dynamic_conv.go)"},
	xnnfb.XNodeUnionXNNDiv:                       {Ops: []ir.Op{ir.OpAtenDivTensor}},
	xnnfb.XNodeUnionXNNStaticResizeBilinear2D:    {Ops: []ir.Op{ir.OpAtenUpsampleBilinear2dVec, ir.OpAtenUpsampleBilinear2d}, Reason: "NHWC; static sizes; scale factors only when equal to out/in; align_corners → flag 0x8"},
	xnnfb.XNodeUnionXNNStaticConstantPad:         {Ops: []ir.Op{ir.OpAtenConstantPadNd}},
	xnnfb.XNodeUnionXNNAvgPooling2d:              {Ops: []ir.Op{ir.OpAtenAvgPool2d}, Reason: "fp32 only (exir's AvgPoolingConfig has no STATIC_QUANT: a quantized one's q/dq stay portable)"},
	xnnfb.XNodeUnionXNNMinimum:                   {Ops: []ir.Op{ir.OpAtenMinimum}},
	xnnfb.XNodeUnionXNNDepthwiseConv2d:           {Ops: []ir.Op{ir.OpAtenConvolution}, Reason: "groups = input channels, one filter per group; qint8 like XNNConv2d (per-channel filter 1HWO, channel_dim 3)"},
	xnnfb.XNodeUnionXNNMaxPooling2d:              {Ops: []ir.Op{ir.OpAtenMaxPool2d, ir.OpAtenMaxPool2dWithIndices}, Reason: "max_pool2d_with_indices only when its indices are unused (maxpool_values.go); qint8 NHWC when its input is dequantized and its result quantized with the same parameters (quant_pool.go)"},
	xnnfb.XNodeUnionXNNMultiply:                  {Ops: []ir.Op{ir.OpAtenMulTensor}, Reason: "qint8 like XNNAdd (quant_add.go)"},
	xnnfb.XNodeUnionXNNSubtract:                  {Ops: []ir.Op{ir.OpAtenSubTensor}, Reason: "qint8 like XNNAdd (quant_add.go)"},
	xnnfb.XNodeUnionXNNFloor:                     {Ops: []ir.Op{ir.OpAtenFloor}},
	xnnfb.XNodeUnionXNNConvert:                   {Ops: []ir.Op{ir.OpQuantizedDecomposedQuantizePerTensor, ir.OpQuantizedDecomposedDequantizePerTensor, ir.OpQuantizedDecomposedChooseQparamsTensor, ir.OpQuantizedDecomposedQuantizePerTensorTensor, ir.OpQuantizedDecomposedChooseQparamsPerTokenAsymmetric, ir.OpQuantizedDecomposedQuantizePerToken}, Reason: "qint8 per-tensor, only around a quantized fully-connected or convolution op (its int8 weight and int32 bias baked in), a quantized add or a quantized pooling; fp32 → qdint8 (PerTokenDynamicQuant, num_nonbatch_dims 1) for a dynamic quantize, per tensor or per token, feeding only fully-connected ops, or per tensor from the NHWC input (NHWC dims) feeding only convolutions"},
	xnnfb.XNodeUnionXNNGlobalAvgPooling2d:        {Ops: []ir.Op{ir.OpAtenMeanDim}, Reason: "qint8 NHWC when its input is dequantized and its result quantized (quant_pool.go)"},
	xnnfb.XNodeUnionXNNStaticReshape:             {Ops: []ir.Op{ir.OpAtenViewCopy, ir.OpAtenSqueezeCopyDim, ir.OpAtenSqueezeCopyDims, ir.OpAtenUnsqueezeCopy}},
	xnnfb.XNodeUnionXNNArgMaxPooling2d:           {Ops: []ir.Op{ir.OpAtenMaxPool2dWithIndices, ir.OpXnnpackArgmaxPool2d}, Reason: "indices used, fp32, static shapes, stride = kernel, dilation 1, no ceil_mode: rewritten to xnnpack.argmax_pool2d between H↔W transposes; int32 window positions leave the delegate and portable ops make torch's int64 plane offsets (argmax_pool.go); exir does not emit this kind"},
	xnnfb.XNodeUnionXNNSquareRoot:                {Ops: []ir.Op{ir.OpAtenSqrt}},
	xnnfb.XNodeUnionXNNCeiling:                   {Ops: []ir.Op{ir.OpAtenCeil}},
	xnnfb.XNodeUnionXNNHardswish:                 {Ops: []ir.Op{ir.OpAtenHardswish}},
	xnnfb.XNodeUnionXNNLeakyReLU:                 {Ops: []ir.Op{ir.OpAtenLeakyRelu}},
	xnnfb.XNodeUnionXNNMaximum:                   {Ops: []ir.Op{ir.OpAtenMaximum}},
	xnnfb.XNodeUnionXNNNegate:                    {Ops: []ir.Op{ir.OpAtenNeg}},
	xnnfb.XNodeUnionXNNSquare:                    {Ops: []ir.Op{ir.OpAtenPowTensorScalar}, Reason: "exponent 2 only"},
	xnnfb.XNodeUnionXNNELU:                       {Ops: []ir.Op{ir.OpAtenElu}, Reason: "scale = input_scale = 1"},
	xnnfb.XNodeUnionXNNAbs:                       {Ops: []ir.Op{ir.OpAtenAbs}},
	xnnfb.XNodeUnionXNNPReLU:                     {Ops: []ir.Op{ir.OpAtenPrelu, ir.OpAten_PreluKernel}, Reason: "rank-4 input (ET-P38)"},
	xnnfb.XNodeUnionXNNConcatenate2:              {Ops: []ir.Op{ir.OpAtenCat}},
	xnnfb.XNodeUnionXNNConcatenate3:              {Ops: []ir.Op{ir.OpAtenCat}},
	xnnfb.XNodeUnionXNNConcatenate4:              {Ops: []ir.Op{ir.OpAtenCat}},
	xnnfb.XNodeUnionXNNConcatenate5:              {Ops: []ir.Op{ir.OpAtenCat}, Reason: "more than five inputs are chained"},
	xnnfb.XNodeUnionXNNStaticSlice:               {Ops: []ir.Op{ir.OpAtenSliceCopyTensor}, Reason: "step 1, static shapes"},
	xnnfb.XNodeUnionXNNScaledDotProductAttention: {Reason: "the XNNPACK runtime does not implement this tag"},
	xnnfb.XNodeUnionXNNBatchMatrixMultiply:       {Ops: []ir.Op{ir.OpAtenBmm}},
	xnnfb.XNodeUnionXNNConvTranspose2d:           {Ops: []ir.Op{ir.OpAtenConvolution}, Reason: "transposed=True, output_padding < stride; filter [groups·O, kh, kw, I] (OHWI for groups 1); qint8 NHWC when its input and weight are dequantized (weight per tensor, or per channel along torch axis 1 with groups 1: qcint8 channel_dim 0, qcint32 bias; quant_deconv.go)"},
	xnnfb.XNodeUnionXNNReciprocalSquareRoot:      {Ops: []ir.Op{ir.OpAtenRsqrt}},
	xnnfb.XNodeUnionXNNLog:                       {Ops: []ir.Op{ir.OpAtenLog}},
	xnnfb.XNodeUnionXNNGelu:                      {Ops: []ir.Op{ir.OpAtenGelu}, Reason: "fp32 only"},
	xnnfb.XNodeUnionXNNTanh:                      {Ops: []ir.Op{ir.OpAtenTanh}},
	xnnfb.XNodeUnionXNNExp:                       {Ops: []ir.Op{ir.OpAtenExp}},
	xnnfb.XNodeUnionXNNSin:                       {Ops: []ir.Op{ir.OpAtenSin}},
	xnnfb.XNodeUnionXNNCopy:                      {Ops: []ir.Op{ir.OpDimOrderOps_CloneDimOrder, ir.OpDimOrderOps_ToDimOrderCopy}, Reason: "dim order preserved, or a copy into channels-last of a value whose NHWC form exists (a convolution's result)"},
	xnnfb.XNodeUnionXNNCos:                       {Ops: []ir.Op{ir.OpAtenCos}},
}

// Coverage returns every XN01 node kind, in tag order.
func Coverage() []KindCoverage {
	var out []KindCoverage
	for k, c := range coverage {
		c.Kind = k
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// CoverageMarkdown renders Coverage as the table in
// docs/targets/executorch.md.
func CoverageMarkdown() string {
	var b strings.Builder
	b.WriteString("| tag | XN01 node kind | written for | note / reason not written |\n|---|---|---|---|\n")
	for _, c := range Coverage() {
		ops := "**not written**"
		if len(c.Ops) > 0 {
			names := make([]string, len(c.Ops))
			for i, op := range c.Ops {
				names[i] = op.String()
			}
			ops = "`" + strings.Join(names, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", c.Kind, c.Kind, ops, c.Reason)
	}
	return b.String()
}
