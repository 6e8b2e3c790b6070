package pm

import "github.com/fxport/fxport/ir"

// apiOverloads maps torch API paths, as the Python system's patches name
// them, to the ATen overloads a traced program contains for them. A patch
// registered against an API path matches every overload listed (every
// spelling: the Python patch on torch.where missed Tensor.where and
// early-bound names; a graph pass does not).
//
// The CUDA attention overloads torch can record for
// scaled_dot_product_attention (_scaled_dot_product_flash_attention,
// _scaled_dot_product_efficient_attention) and the Scalar overloads of
// bucketize and searchsorted are not in the op table, so no program holds
// them and they are not listed.
var apiOverloads = map[string][]ir.Op{
	"torch.where":        {ir.OpAtenWhereSelf, ir.OpAtenWhereScalarSelf, ir.OpAtenWhereScalarOther, ir.OpAtenWhereScalar},
	"torch.Tensor.where": {ir.OpAtenWhereSelf, ir.OpAtenWhereScalarSelf, ir.OpAtenWhereScalarOther, ir.OpAtenWhereScalar},

	"torch.unsqueeze":        {ir.OpAtenUnsqueeze},
	"torch.Tensor.unsqueeze": {ir.OpAtenUnsqueeze},

	"torch.nn.functional.scaled_dot_product_attention": {
		ir.OpAtenScaledDotProductAttention,
		ir.OpAten_ScaledDotProductFlashAttentionForCpu,
	},

	"torch.full": {ir.OpAtenFull},

	"torch.split":        {ir.OpAtenSplitTensor, ir.OpAtenSplitWithSizes},
	"torch.Tensor.split": {ir.OpAtenSplitTensor, ir.OpAtenSplitWithSizes},
	"torch.chunk":        {ir.OpAtenChunk},
	"torch.Tensor.chunk": {ir.OpAtenChunk},

	"torch.topk":        {ir.OpAtenTopk},
	"torch.Tensor.topk": {ir.OpAtenTopk},

	"torch.detach":         {ir.OpAtenDetach},
	"torch.Tensor.detach":  {ir.OpAtenDetach},
	"torch.Tensor.detach_": {ir.OpAtenDetach_},

	"torch.nn.functional.avg_pool2d": {ir.OpAtenAvgPool2d},
	"torch.nn.functional.dropout":    {ir.OpAtenDropout, ir.OpAtenNativeDropout},

	"torch.bernoulli":        {ir.OpAtenBernoulli, ir.OpAtenBernoulliP},
	"torch.Tensor.bernoulli": {ir.OpAtenBernoulli, ir.OpAtenBernoulliP},

	"torch.Tensor.expand": {ir.OpAtenExpand},

	"torch.argsort":        {ir.OpAtenArgsort, ir.OpAtenArgsortStable},
	"torch.Tensor.argsort": {ir.OpAtenArgsort, ir.OpAtenArgsortStable},

	"torch.nn.functional.pad":                 {ir.OpAtenPad, ir.OpAtenConstantPadNd},
	"torch.nn.functional.conv3d":              {ir.OpAtenConv3d, ir.OpAtenConv3dPadding},
	"torch.nn.functional.adaptive_avg_pool2d": {ir.OpAtenAdaptiveAvgPool2d, ir.OpAten_AdaptiveAvgPool2d},

	"torch.bucketize":    {ir.OpAtenBucketizeTensor},
	"torch.searchsorted": {ir.OpAtenSearchsortedTensor},

	"torch.cummax":        {ir.OpAtenCummax},
	"torch.Tensor.cummax": {ir.OpAtenCummax},
	"torch.cummin":        {ir.OpAtenCummin},
	"torch.Tensor.cummin": {ir.OpAtenCummin},

	"torch.nn.functional.one_hot": {ir.OpAtenOneHot},

	"torch.reshape":        {ir.OpAtenReshape},
	"torch.Tensor.reshape": {ir.OpAtenReshape},
	"torch.Tensor.view":    {ir.OpAtenView},

	"torch.roll":        {ir.OpAtenRoll},
	"torch.Tensor.roll": {ir.OpAtenRoll},

	"torch.randperm": {ir.OpAtenRandperm},

	"torch.histc":        {ir.OpAtenHistc},
	"torch.Tensor.histc": {ir.OpAtenHistc},

	"torch.exp":        {ir.OpAtenExp},
	"torch.Tensor.exp": {ir.OpAtenExp},

	"torch.Tensor.masked_scatter": {ir.OpAtenMaskedScatter},

	"torch.nn.functional.rms_norm": {ir.OpAtenRmsNorm, ir.OpAten_FusedRmsNorm},
	"torch.nn.RMSNorm.forward":     {ir.OpAtenRmsNorm, ir.OpAten_FusedRmsNorm},

	"torch.fft.irfft": {ir.OpAtenFftIrfft, ir.OpAten_FftC2r},

	"torch.nn.attention.varlen.varlen_attn": {ir.OpTorchAttn_VarlenAttn},
}

// APIPaths lists the torch API paths patches may target, sorted.
func APIPaths() []string { return sortedKeys(apiOverloads) }

// APIOverloads returns the overloads the table lists for an API path, or nil.
func APIOverloads(path string) []ir.Op { return append([]ir.Op(nil), apiOverloads[path]...) }
