package openvino

import (
	"fmt"
	"sort"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// SupportedOps lists, sorted, the ATen ops the partitioner claims: a
// subset of what OpenVINO's PyTorch frontend converts from torch.export
// programs (its FX op table, get_supported_ops_fx, and the torchdynamo
// OperatorSupport dict that ExecuTorch's OpenvinoPartitioner consults),
// chosen to cover the ops of the fxport corpus (tests/corpus). Besides
// tensor ops it holds the shape arithmetic that dict lists (sym_size.int and
// Python's operator add/sub/mul/floordiv on SymInts), factories (arange,
// full, zeros, ones and their _like forms), _to_copy (dtype casts on the
// CPU), split and split_with_sizes, index.Tensor and scatter.src. Ops the
// dict lacks (view_copy, split_copy, reshape: torch.export records view and
// split) and in-place updates are left out. docs/targets/executorch.md
// ("## OpenVINO") lists the same ops; a test keeps the two equal.
var SupportedOps = []string{
	"aten._adaptive_avg_pool2d.default",
	"aten._log_softmax.default",
	"aten._native_batch_norm_legit_no_training.default",
	"aten._softmax.default",
	"aten._to_copy.default",
	"aten._unsafe_view.default",
	"aten.abs.default",
	"aten.add.Scalar",
	"aten.add.Tensor",
	"aten.addmm.default",
	"aten.amax.default",
	"aten.arange.default",
	"aten.arange.start",
	"aten.arange.start_step",
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
	"aten.full.default",
	"aten.full_like.default",
	"aten.gather.default",
	"aten.ge.Tensor",
	"aten.gelu.default",
	"aten.gt.Tensor",
	"aten.hardsigmoid.default",
	"aten.hardswish.default",
	"aten.hardtanh.default",
	"aten.index.Tensor",
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
	"aten.ones.default",
	"aten.ones_like.default",
	"aten.permute.default",
	"aten.pow.Tensor_Scalar",
	"aten.pow.Tensor_Tensor",
	"aten.reciprocal.default",
	"aten.relu.default",
	"aten.rsqrt.default",
	"aten.rsub.Scalar",
	"aten.scatter.src",
	"aten.select.int",
	"aten.sigmoid.default",
	"aten.sign.default",
	"aten.silu.default",
	"aten.sin.default",
	"aten.slice.Tensor",
	"aten.split.Tensor",
	"aten.split_with_sizes.default",
	"aten.sqrt.default",
	"aten.squeeze.dim",
	"aten.squeeze.dims",
	"aten.stack.default",
	"aten.sub.Tensor",
	"aten.sum.dim_IntList",
	"aten.sym_size.int",
	"aten.t.default",
	"aten.tanh.default",
	"aten.topk.default",
	"aten.transpose.int",
	"aten.tril.default",
	"aten.unsqueeze.default",
	"aten.view.default",
	"aten.where.self",
	"aten.zeros.default",
	"aten.zeros_like.default",
	"operator.add",
	"operator.floordiv",
	"operator.mul",
	"operator.sub",
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
// region, it has no results, or one of its operands or results is neither
// a SymInt nor a tensor on the CPU of a dtype in SupportedDTypes whose dims
// are each a positive constant or a symbolic size over backed symbols with
// a finite upper bound under the program's range constraints (the planner
// sizes the delegate's boundary tensors at that bound, DYNAMIC_BOUND, as
// OpenVINO's compiled model takes the shapes it is given). A SymInt may
// only travel inside a partition (Partition checks that its producer and
// its users share one; the runtime hands OpenVINO tensors only). Layouts
// matter only where a tensor crosses a partition's boundary (Partition
// checks that those are contiguous).
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
	env := envOf(n)
	for _, v := range n.Operands() {
		if why := tensorReason(v, env); why != "" {
			return "operand " + why
		}
	}
	for _, r := range n.Results {
		why := tensorReason(r, env)
		if why != "" && !(len(r.Uses()) == 0 && isEmpty(r)) {
			return "result " + why
		}
	}
	return ""
}

// isEmpty reports a tensor with a dim of constant size 0 (the unused
// save_mean and save_invstd of an inference native_batch_norm: they never
// leave the partition, and OpenVINO's frontend drops them).
func isEmpty(v *ir.Value) bool {
	t := v.Tensor()
	if t == nil {
		return false
	}
	for _, d := range t.Shape {
		if k, ok := d.Const(); ok && k == 0 {
			return true
		}
	}
	return false
}

// envOf is the symbol environment of n's program (nil when n is detached).
func envOf(n *ir.Node) *sym.Env {
	if n.Graph == nil || n.Graph.Program == nil {
		return nil
	}
	return n.Graph.Program.Env
}

// isSymInt reports a SymInt value.
func isSymInt(v *ir.Value) bool {
	_, ok := v.Type.(*ir.SymIntType)
	return ok
}

// tensorReason says why v cannot cross into or live in a partition.
func tensorReason(v *ir.Value, env *sym.Env) string {
	if isSymInt(v) {
		return ""
	}
	t := v.Tensor()
	switch {
	case t == nil:
		return fmt.Sprintf("%s is %s, not a tensor", v, v.Type)
	case !dtypes[t.DType]:
		return fmt.Sprintf("%s has dtype %s", v, t.DType.Abbr())
	case t.Device != "" && t.Device != "cpu" && t.Device != "cpu:0":
		return fmt.Sprintf("%s is on device %s", v, t.Device)
	}
	for i, d := range t.Shape {
		if k, ok := d.Const(); ok {
			if k < 1 {
				return fmt.Sprintf("%s has an empty dim %d", v, i)
			}
			continue
		}
		if env == nil {
			return fmt.Sprintf("%s has a dynamic dim %d (%s) and the program has no range constraints", v, i, d)
		}
		for _, s := range d.Symbols() {
			if env.IsUnbacked(s) {
				return fmt.Sprintf("%s has a data-dependent dim %d (%s, unbacked symbol %s)", v, i, d, s)
			}
		}
		if !env.UpperBound(d).IsFinite() {
			return fmt.Sprintf("%s has an unbounded dynamic dim %d (%s); widen-symbol-ranges (ET-PF01) bounds it", v, i, d)
		}
	}
	return ""
}
