package xnnpack

import (
	"fmt"
	"sort"
	"strings"

	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// KindCoverage says whether the serializer writes one XN01 node kind: the
// edge ops whose visitors produce it, or why it is never written.
type KindCoverage struct {
	Kind   xnnfb.XNodeUnion
	Ops    []string // edge ops (IR names) lowered to this kind; empty when not written
	Reason string   // why the kind is not written (Ops empty), or a note
}

// coverage lists every XNodeUnion member (coverage_test.go checks that the
// list is complete, that each op has a support rule, and that the numeric
// tests exercise every written kind).
var coverage = map[xnnfb.XNodeUnion]KindCoverage{
	xnnfb.XNodeUnionXNNAdd:                       {Ops: []string{"aten.add.Tensor"}, Reason: "qint8 when both operands are dequantized from qint8 and the sum is quantized (quant_add.go); in NHWC when an operand is a quantized convolution's output"},
	xnnfb.XNodeUnionXNNFullyConnected:            {Ops: []string{"aten.addmm.default", "aten.mm.default", "quantized_decomposed.dequantize_per_channel.default", "quantized_decomposed.dequantize_per_tensor.tensor", "quantized_decomposed.dequantize_per_token.default", "quantized_decomposed.dequantize_per_channel_group.default"}, Reason: "linear reaches it as permute_copy + addmm/mm; qint8 when its input and weight are dequantized (weight per tensor, or per output channel: qcint8 channel_dim 0, qcint32 bias); dynamically quantized input (qd8, quant_dynamic.go): qdint8 input, qcint8 filter per output channel or qbint4 filter (4-bit group-wise, group size a multiple of 32), fp32 bias and output; a per-channel weight with quant range [-8, 7] (static or dynamic input) is a qcint4 filter, packed two per byte, rows padded (quant_qc4w.go)"},
	xnnfb.XNodeUnionXNNSoftmax:                   {Ops: []string{"aten._softmax.default"}},
	xnnfb.XNodeUnionXNNSigmoid:                   {Ops: []string{"aten.sigmoid.default"}},
	xnnfb.XNodeUnionXNNStaticTranspose:           {Ops: []string{"aten.permute_copy.default", "dim_order_ops._to_dim_order_copy.default", "dim_order_ops._clone_dim_order.default"}, Reason: "also the NCHW↔NHWC layout transposes (debug handle 65535); a dtype-preserving dim-order copy between contiguous and channels-last (rank 4) is [0, 2, 3, 1] or [0, 3, 1, 2], its channels-last side declared with NHWC dims (dimorder_copy.go); a cast stays portable"},
	xnnfb.XNodeUnionXNNClamp:                     {Ops: []string{"aten.relu.default", "aten.hardtanh.default", "aten.clamp.default"}, Reason: "fused into the producer's output_min_max where possible"},
	xnnfb.XNodeUnionXNNConv2d:                    {Ops: []string{"aten.convolution.default", "quantized_decomposed.dequantize_per_channel.default"}, Reason: "qint8 when its input and weight are dequantized (weight per tensor, or per output channel: OHWI qcint8 channel_dim 0, qcint32 bias); qdint8 NHWC input, qcint8 filter, fp32 bias and output when its input is dynamically quantized per tensor and it is not depthwise (quant_dynamic_conv.go)"},
	xnnfb.XNodeUnionXNNDiv:                       {Ops: []string{"aten.div.Tensor"}},
	xnnfb.XNodeUnionXNNStaticResizeBilinear2D:    {Ops: []string{"aten.upsample_bilinear2d.vec", "aten.upsample_bilinear2d.default"}, Reason: "NHWC; static sizes; scale factors only when equal to out/in; align_corners → flag 0x8"},
	xnnfb.XNodeUnionXNNStaticConstantPad:         {Ops: []string{"aten.constant_pad_nd.default"}},
	xnnfb.XNodeUnionXNNAvgPooling2d:              {Ops: []string{"aten.avg_pool2d.default"}, Reason: "fp32 only (exir's AvgPoolingConfig has no STATIC_QUANT: a quantized one's q/dq stay portable)"},
	xnnfb.XNodeUnionXNNMinimum:                   {Ops: []string{"aten.minimum.default"}},
	xnnfb.XNodeUnionXNNDepthwiseConv2d:           {Ops: []string{"aten.convolution.default"}, Reason: "groups = input channels, one filter per group; qint8 like XNNConv2d (per-channel filter 1HWO, channel_dim 3)"},
	xnnfb.XNodeUnionXNNMaxPooling2d:              {Ops: []string{"aten.max_pool2d.default", "aten.max_pool2d_with_indices.default"}, Reason: "max_pool2d_with_indices only when its indices are unused (maxpool_values.go); qint8 NHWC when its input is dequantized and its result quantized with the same parameters (quant_pool.go)"},
	xnnfb.XNodeUnionXNNMultiply:                  {Ops: []string{"aten.mul.Tensor"}, Reason: "qint8 like XNNAdd (quant_add.go)"},
	xnnfb.XNodeUnionXNNSubtract:                  {Ops: []string{"aten.sub.Tensor"}, Reason: "qint8 like XNNAdd (quant_add.go)"},
	xnnfb.XNodeUnionXNNFloor:                     {Ops: []string{"aten.floor.default"}},
	xnnfb.XNodeUnionXNNConvert:                   {Ops: []string{"quantized_decomposed.quantize_per_tensor.default", "quantized_decomposed.dequantize_per_tensor.default", "quantized_decomposed.choose_qparams.tensor", "quantized_decomposed.quantize_per_tensor.tensor", "quantized_decomposed.choose_qparams_per_token_asymmetric.default", "quantized_decomposed.quantize_per_token.default"}, Reason: "qint8 per-tensor, only around a quantized fully-connected or convolution op (its int8 weight and int32 bias baked in), a quantized add or a quantized pooling; fp32 → qdint8 (PerTokenDynamicQuant, num_nonbatch_dims 1) for a dynamic quantize, per tensor or per token, feeding only fully-connected ops, or per tensor from the NHWC input (NHWC dims) feeding only convolutions"},
	xnnfb.XNodeUnionXNNGlobalAvgPooling2d:        {Ops: []string{"aten.mean.dim"}, Reason: "qint8 NHWC when its input is dequantized and its result quantized (quant_pool.go)"},
	xnnfb.XNodeUnionXNNStaticReshape:             {Ops: []string{"aten.view_copy.default", "aten.squeeze_copy.dim", "aten.squeeze_copy.dims", "aten.unsqueeze_copy.default"}},
	xnnfb.XNodeUnionXNNArgMaxPooling2d:           {Ops: []string{"aten.max_pool2d_with_indices.default", "xnnpack.argmax_pool2d.default"}, Reason: "indices used, fp32, static shapes, stride = kernel, dilation 1, no ceil_mode: rewritten to xnnpack.argmax_pool2d between H↔W transposes; int32 window positions leave the delegate and portable ops make torch's int64 plane offsets (argmax_pool.go); exir does not emit this kind"},
	xnnfb.XNodeUnionXNNSquareRoot:                {Ops: []string{"aten.sqrt.default"}},
	xnnfb.XNodeUnionXNNCeiling:                   {Ops: []string{"aten.ceil.default"}},
	xnnfb.XNodeUnionXNNHardswish:                 {Ops: []string{"aten.hardswish.default"}},
	xnnfb.XNodeUnionXNNLeakyReLU:                 {Ops: []string{"aten.leaky_relu.default"}},
	xnnfb.XNodeUnionXNNMaximum:                   {Ops: []string{"aten.maximum.default"}},
	xnnfb.XNodeUnionXNNNegate:                    {Ops: []string{"aten.neg.default"}},
	xnnfb.XNodeUnionXNNSquare:                    {Ops: []string{"aten.pow.Tensor_Scalar"}, Reason: "exponent 2 only"},
	xnnfb.XNodeUnionXNNELU:                       {Ops: []string{"aten.elu.default"}, Reason: "scale = input_scale = 1"},
	xnnfb.XNodeUnionXNNAbs:                       {Ops: []string{"aten.abs.default"}},
	xnnfb.XNodeUnionXNNPReLU:                     {Ops: []string{"aten.prelu.default", "aten._prelu_kernel.default"}, Reason: "rank-4 input (ET-P38)"},
	xnnfb.XNodeUnionXNNConcatenate2:              {Ops: []string{"aten.cat.default"}},
	xnnfb.XNodeUnionXNNConcatenate3:              {Ops: []string{"aten.cat.default"}},
	xnnfb.XNodeUnionXNNConcatenate4:              {Ops: []string{"aten.cat.default"}},
	xnnfb.XNodeUnionXNNConcatenate5:              {Ops: []string{"aten.cat.default"}, Reason: "more than five inputs are chained"},
	xnnfb.XNodeUnionXNNStaticSlice:               {Ops: []string{"aten.slice_copy.Tensor"}, Reason: "step 1, static shapes"},
	xnnfb.XNodeUnionXNNScaledDotProductAttention: {Reason: "the XNNPACK runtime does not implement this tag"},
	xnnfb.XNodeUnionXNNBatchMatrixMultiply:       {Ops: []string{"aten.bmm.default"}},
	xnnfb.XNodeUnionXNNConvTranspose2d:           {Ops: []string{"aten.convolution.default"}, Reason: "transposed=True, output_padding < stride; filter [groups·O, kh, kw, I] (OHWI for groups 1); qint8 NHWC when its input and weight are dequantized (weight per tensor, or per channel along torch axis 1 with groups 1: qcint8 channel_dim 0, qcint32 bias; quant_deconv.go)"},
	xnnfb.XNodeUnionXNNReciprocalSquareRoot:      {Ops: []string{"aten.rsqrt.default"}},
	xnnfb.XNodeUnionXNNLog:                       {Ops: []string{"aten.log.default"}},
	xnnfb.XNodeUnionXNNGelu:                      {Ops: []string{"aten.gelu.default"}, Reason: "fp32 only"},
	xnnfb.XNodeUnionXNNTanh:                      {Ops: []string{"aten.tanh.default"}},
	xnnfb.XNodeUnionXNNExp:                       {Ops: []string{"aten.exp.default"}},
	xnnfb.XNodeUnionXNNSin:                       {Ops: []string{"aten.sin.default"}},
	xnnfb.XNodeUnionXNNCopy:                      {Ops: []string{"dim_order_ops._clone_dim_order.default", "dim_order_ops._to_dim_order_copy.default"}, Reason: "dim order preserved, or a copy into channels-last of a value whose NHWC form exists (a convolution's result)"},
	xnnfb.XNodeUnionXNNCos:                       {Ops: []string{"aten.cos.default"}},
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
			ops = "`" + strings.Join(c.Ops, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", c.Kind, c.Kind, ops, c.Reason)
	}
	return b.String()
}
