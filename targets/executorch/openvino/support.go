package openvino

import (
	"fmt"
	"sort"

	"github.com/fxport/fxport/ir"
)

// SupportedOps lists, sorted, the ATen ops the partitioner claims: a
// conservative subset of what OpenVINO's PyTorch frontend converts from
// torch.export programs (its FX op table, get_supported_ops_fx, and the
// torchdynamo OperatorSupport dict that ExecuTorch's OpenvinoPartitioner
// consults), chosen to cover the ops of the fxport corpus (tests/corpus).
// Ops with list results (split), optional-tensor lists (index.Tensor),
// device or dtype arguments (_to_copy), factories without tensor inputs
// (arange, zeros, full) and in-place or scatter-style updates are left out.
// docs/targets/executorch.md ("## OpenVINO") lists the same ops; a test
// keeps the two equal.
var SupportedOps = []string{
	"aten._adaptive_avg_pool2d.default",
	"aten._log_softmax.default",
	"aten._native_batch_norm_legit_no_training.default",
	"aten._softmax.default",
	"aten._unsafe_view.default",
	"aten.abs.default",
	"aten.add.Scalar",
	"aten.add.Tensor",
	"aten.addmm.default",
	"aten.amax.default",
	"aten.avg_pool2d.default",
	"aten.bmm.default",
	"aten.cat.default",
	"aten.ceil.default",
	"aten.clamp.default",
	"aten.clone.default",
	"aten.constant_pad_nd.default",
	"aten.convolution.default",
	"aten.cos.default",
	"aten.cumsum.default",
	"aten.div.Scalar",
	"aten.div.Tensor",
	"aten.elu.default",
	"aten.embedding.default",
	"aten.eq.Tensor",
	"aten.erf.default",
	"aten.exp.default",
	"aten.expand.default",
	"aten.flip.default",
	"aten.floor.default",
	"aten.gather.default",
	"aten.ge.Tensor",
	"aten.gelu.default",
	"aten.gt.Tensor",
	"aten.hardsigmoid.default",
	"aten.hardswish.default",
	"aten.hardtanh.default",
	"aten.index_select.default",
	"aten.le.Tensor",
	"aten.leaky_relu.default",
	"aten.linear.default",
	"aten.log.default",
	"aten.logical_not.default",
	"aten.lt.Tensor",
	"aten.masked_fill.Scalar",
	"aten.max_pool2d_with_indices.default",
	"aten.maximum.default",
	"aten.mean.dim",
	"aten.minimum.default",
	"aten.mm.default",
	"aten.mul.Scalar",
	"aten.mul.Tensor",
	"aten.native_batch_norm.default",
	"aten.native_layer_norm.default",
	"aten.ne.Tensor",
	"aten.neg.default",
	"aten.permute.default",
	"aten.pow.Tensor_Scalar",
	"aten.pow.Tensor_Tensor",
	"aten.reciprocal.default",
	"aten.relu.default",
	"aten.rsqrt.default",
	"aten.rsub.Scalar",
	"aten.select.int",
	"aten.sigmoid.default",
	"aten.sign.default",
	"aten.silu.default",
	"aten.sin.default",
	"aten.slice.Tensor",
	"aten.sqrt.default",
	"aten.squeeze.dim",
	"aten.squeeze.dims",
	"aten.stack.default",
	"aten.sub.Tensor",
	"aten.sum.dim_IntList",
	"aten.t.default",
	"aten.tanh.default",
	"aten.topk.default",
	"aten.transpose.int",
	"aten.tril.default",
	"aten.unsqueeze.default",
	"aten.view.default",
	"aten.where.self",
}

// SupportedDTypes are the tensor dtypes a claimed node may read and write
// (OpenVINO's CPU plugin element types that map one-to-one to ExecuTorch
// scalar types).
var SupportedDTypes = []ir.DType{ir.Float32, ir.Float16, ir.BFloat16, ir.Int64, ir.Int32, ir.Int8, ir.Uint8, ir.Bool}

var (
	supported = map[ir.Op]bool{}
	dtypes    = map[ir.DType]bool{}
)

func init() {
	if !sort.StringsAreSorted(SupportedOps) {
		panic("openvino: SupportedOps is not sorted")
	}
	for _, name := range SupportedOps {
		supported[ir.MustLookupOp(name)] = true
	}
	for _, d := range SupportedDTypes {
		dtypes[d] = true
	}
}

// Unsupported says why n stays on portable kernels ("" when the
// partitioner may claim it): its op is not in SupportedOps, it owns a
// region, or one of its operands or results is not a static tensor on the
// CPU without empty dims of a dtype in SupportedDTypes (SymInt operands
// and results and dynamic shapes stay outside: the OpenVINO runtime binds
// tensors of a fixed shape). Layouts matter only where a tensor crosses a
// partition's boundary (Partition checks that those are contiguous).
func Unsupported(n *ir.Node) string {
	if !supported[n.Op] {
		return fmt.Sprintf("%s is not in the OpenVINO partitioner's op list", n.Op.Info().Name)
	}
	if len(n.Regions()) > 0 {
		return "control flow"
	}
	if len(n.Results) == 0 {
		return "no results"
	}
	for _, v := range n.Operands() {
		if why := tensorReason(v); why != "" {
			return "operand " + why
		}
	}
	for _, r := range n.Results {
		if why := tensorReason(r); why != "" {
			return "result " + why
		}
	}
	return ""
}

// tensorReason says why v cannot cross into or live in a partition.
func tensorReason(v *ir.Value) string {
	t := v.Tensor()
	switch {
	case t == nil:
		return fmt.Sprintf("%s is %s, not a tensor", v, v.Type)
	case !dtypes[t.DType]:
		return fmt.Sprintf("%s has dtype %s", v, t.DType.Abbr())
	case t.Device != "" && t.Device != "cpu" && t.Device != "cpu:0":
		return fmt.Sprintf("%s is on device %s", v, t.Device)
	}
	shape, ok := t.StaticShape()
	if !ok {
		return fmt.Sprintf("%s has a dynamic shape %s", v, t)
	}
	for i, d := range shape {
		if d < 1 {
			return fmt.Sprintf("%s has an empty dim %d", v, i)
		}
	}
	return ""
}
