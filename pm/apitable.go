package pm

// apiOverloads maps torch API paths, as the Python system's patches name
// them, to the ATen overloads a traced program contains for them. A patch
// registered against an API path matches every overload listed (every
// spelling: the Python patch on torch.where missed Tensor.where and
// early-bound names; a graph pass does not).
//
// Overloads missing from the op table are left out when a path resolves; a
// path none of whose overloads exists is a registration error.
var apiOverloads = map[string][]string{
	"torch.where":        {"aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther", "aten.where.Scalar"},
	"torch.Tensor.where": {"aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther", "aten.where.Scalar"},

	"torch.unsqueeze":        {"aten.unsqueeze.default"},
	"torch.Tensor.unsqueeze": {"aten.unsqueeze.default"},

	"torch.nn.functional.scaled_dot_product_attention": {
		"aten.scaled_dot_product_attention.default",
		"aten._scaled_dot_product_flash_attention_for_cpu.default",
		"aten._scaled_dot_product_efficient_attention.default",
		"aten._scaled_dot_product_flash_attention.default",
	},

	"torch.full": {"aten.full.default"},

	"torch.split":        {"aten.split.Tensor", "aten.split_with_sizes.default"},
	"torch.Tensor.split": {"aten.split.Tensor", "aten.split_with_sizes.default"},
	"torch.chunk":        {"aten.chunk.default"},
	"torch.Tensor.chunk": {"aten.chunk.default"},

	"torch.topk":        {"aten.topk.default"},
	"torch.Tensor.topk": {"aten.topk.default"},

	"torch.detach":         {"aten.detach.default"},
	"torch.Tensor.detach":  {"aten.detach.default"},
	"torch.Tensor.detach_": {"aten.detach_.default"},

	"torch.nn.functional.avg_pool2d": {"aten.avg_pool2d.default"},
	"torch.nn.functional.dropout":    {"aten.dropout.default", "aten.native_dropout.default"},

	"torch.bernoulli":        {"aten.bernoulli.default", "aten.bernoulli.p"},
	"torch.Tensor.bernoulli": {"aten.bernoulli.default", "aten.bernoulli.p"},

	"torch.Tensor.expand": {"aten.expand.default"},

	"torch.argsort":        {"aten.argsort.default", "aten.argsort.stable"},
	"torch.Tensor.argsort": {"aten.argsort.default", "aten.argsort.stable"},

	"torch.nn.functional.pad":                 {"aten.pad.default", "aten.constant_pad_nd.default"},
	"torch.nn.functional.conv3d":              {"aten.conv3d.default", "aten.conv3d.padding"},
	"torch.nn.functional.adaptive_avg_pool2d": {"aten.adaptive_avg_pool2d.default", "aten._adaptive_avg_pool2d.default"},

	"torch.bucketize":    {"aten.bucketize.Tensor", "aten.bucketize.Scalar"},
	"torch.searchsorted": {"aten.searchsorted.Tensor", "aten.searchsorted.Scalar"},

	"torch.cummax":        {"aten.cummax.default"},
	"torch.Tensor.cummax": {"aten.cummax.default"},
	"torch.cummin":        {"aten.cummin.default"},
	"torch.Tensor.cummin": {"aten.cummin.default"},

	"torch.nn.functional.one_hot": {"aten.one_hot.default"},

	"torch.reshape":        {"aten.reshape.default"},
	"torch.Tensor.reshape": {"aten.reshape.default"},
	"torch.Tensor.view":    {"aten.view.default"},

	"torch.roll":        {"aten.roll.default"},
	"torch.Tensor.roll": {"aten.roll.default"},

	"torch.randperm": {"aten.randperm.default"},

	"torch.histc":        {"aten.histc.default"},
	"torch.Tensor.histc": {"aten.histc.default"},

	"torch.exp":        {"aten.exp.default"},
	"torch.Tensor.exp": {"aten.exp.default"},

	"torch.Tensor.masked_scatter": {"aten.masked_scatter.default"},

	"torch.nn.functional.rms_norm": {"aten.rms_norm.default", "aten._fused_rms_norm.default"},
	"torch.nn.RMSNorm.forward":     {"aten.rms_norm.default", "aten._fused_rms_norm.default"},

	"torch.fft.irfft": {"aten.fft_irfft.default", "aten._fft_c2r.default"},

	"torch.nn.attention.varlen.varlen_attn": {"torch_attn._varlen_attn.default"},
}

// APIPaths lists the torch API paths patches may target, sorted.
func APIPaths() []string { return sortedKeys(apiOverloads) }

// APIOverloads returns the overload names the table lists for an API path
// (including any the op table lacks), or nil.
func APIOverloads(path string) []string { return append([]string(nil), apiOverloads[path]...) }
