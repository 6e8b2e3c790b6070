package openvino

import (
	"fmt"
	"sort"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// SupportedOps lists, sorted by name, the ATen ops the partitioner claims: a
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
var SupportedOps = []ir.Op{
	ir.OpAten_AdaptiveAvgPool2d,
	ir.OpAten_LogSoftmax,
	ir.OpAten_NativeBatchNormLegitNoTraining,
	ir.OpAten_Softmax,
	ir.OpAten_ToCopy,
	ir.OpAten_UnsafeView,
	ir.OpAtenAbs,
	ir.OpAtenAddScalar,
	ir.OpAtenAddTensor,
	ir.OpAtenAddmm,
	ir.OpAtenAmax,
	ir.OpAtenArange,
	ir.OpAtenArangeStart,
	ir.OpAtenArangeStartStep,
	ir.OpAtenAvgPool2d,
	ir.OpAtenBmm,
	ir.OpAtenCat,
	ir.OpAtenCeil,
	ir.OpAtenClamp,
	ir.OpAtenClone,
	ir.OpAtenConstantPadNd,
	ir.OpAtenConvolution,
	ir.OpAtenCos,
	ir.OpAtenCumsum,
	ir.OpAtenDivScalar,
	ir.OpAtenDivTensor,
	ir.OpAtenElu,
	ir.OpAtenEmbedding,
	ir.OpAtenEqTensor,
	ir.OpAtenErf,
	ir.OpAtenExp,
	ir.OpAtenExpand,
	ir.OpAtenFlip,
	ir.OpAtenFloor,
	ir.OpAtenFull,
	ir.OpAtenFullLike,
	ir.OpAtenGather,
	ir.OpAtenGeTensor,
	ir.OpAtenGelu,
	ir.OpAtenGtTensor,
	ir.OpAtenHardsigmoid,
	ir.OpAtenHardswish,
	ir.OpAtenHardtanh,
	ir.OpAtenIndexTensor,
	ir.OpAtenIndexSelect,
	ir.OpAtenLeTensor,
	ir.OpAtenLeakyRelu,
	ir.OpAtenLinear,
	ir.OpAtenLog,
	ir.OpAtenLogicalNot,
	ir.OpAtenLtTensor,
	ir.OpAtenMaskedFillScalar,
	ir.OpAtenMaxPool2dWithIndices,
	ir.OpAtenMaximum,
	ir.OpAtenMeanDim,
	ir.OpAtenMinimum,
	ir.OpAtenMm,
	ir.OpAtenMulScalar,
	ir.OpAtenMulTensor,
	ir.OpAtenNativeBatchNorm,
	ir.OpAtenNativeLayerNorm,
	ir.OpAtenNeTensor,
	ir.OpAtenNeg,
	ir.OpAtenOnes,
	ir.OpAtenOnesLike,
	ir.OpAtenPermute,
	ir.OpAtenPowTensorScalar,
	ir.OpAtenPowTensorTensor,
	ir.OpAtenReciprocal,
	ir.OpAtenRelu,
	ir.OpAtenRsqrt,
	ir.OpAtenRsubScalar,
	ir.OpAtenScatterSrc,
	ir.OpAtenSelectInt,
	ir.OpAtenSigmoid,
	ir.OpAtenSign,
	ir.OpAtenSilu,
	ir.OpAtenSin,
	ir.OpAtenSliceTensor,
	ir.OpAtenSplitTensor,
	ir.OpAtenSplitWithSizes,
	ir.OpAtenSqrt,
	ir.OpAtenSqueezeDim,
	ir.OpAtenSqueezeDims,
	ir.OpAtenStack,
	ir.OpAtenSubTensor,
	ir.OpAtenSumDimIntList,
	ir.OpAtenSymSizeInt,
	ir.OpAtenT,
	ir.OpAtenTanh,
	ir.OpAtenTopk,
	ir.OpAtenTransposeInt,
	ir.OpAtenTril,
	ir.OpAtenUnsqueeze,
	ir.OpAtenView,
	ir.OpAtenWhereSelf,
	ir.OpAtenZeros,
	ir.OpAtenZerosLike,
	ir.OpOperatorAdd,
	ir.OpOperatorFloordiv,
	ir.OpOperatorMul,
	ir.OpOperatorSub,
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
	if !sort.SliceIsSorted(SupportedOps, func(i, j int) bool { return SupportedOps[i].String() < SupportedOps[j].String() }) {
		panic("openvino: SupportedOps is not sorted by name")
	}
	for _, op := range SupportedOps {
		supported[op] = true
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
