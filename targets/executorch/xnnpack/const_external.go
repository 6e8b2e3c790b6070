package xnnpack

import "github.com/fxport/fxport/ir"

// Constants a delegate reads are baked into its payload as named data only
// when the partitioner config of a consumer lists them among the nodes it
// claims: exir's ConfigerationBasedPartitioner tags exactly the nodes a
// config's get_node_and_deps returns, and only the GEMM, convolution, PReLU
// and quantized-pattern configs return their weights, biases and
// quantization constants. A constant read only by ops of the generic
// configs (GenericNodePartitionerConfig.get_node_and_deps is [node]) stays
// untagged, so to_backend makes it an input of the lowered module: the
// program keeps it as a constant tensor and passes it to the delegate call
// as a runtime argument (ecn_xnnpack_mul_scalar_dynamic_bound.pte: x * 2.0
// is DelegateCall [x, c, out] with c a 0-d constant of the constant
// segment, an external input of the XNNPACK graph).

// genericOps are the ops whose configs claim the node alone.
var genericOps = map[ir.Op]bool{}

func init() {
	for _, op := range []ir.Op{
		ir.OpAtenAddTensor, ir.OpAtenSubTensor, ir.OpAtenMulTensor, ir.OpAtenDivTensor,
		ir.OpAtenMaximum, ir.OpAtenMinimum,
		ir.OpAtenRelu, ir.OpAtenHardtanh, ir.OpAtenClamp, ir.OpAtenSigmoid,
		ir.OpAtenTanh, ir.OpAtenNeg, ir.OpAtenAbs, ir.OpAtenSqrt,
		ir.OpAtenRsqrt, ir.OpAtenExp, ir.OpAtenLog, ir.OpAtenCeil,
		ir.OpAtenFloor, ir.OpAtenHardswish, ir.OpAtenSin, ir.OpAtenCos,
		ir.OpAtenLeakyRelu, ir.OpAtenGelu, ir.OpAtenPowTensorScalar, ir.OpAten_Softmax,
		ir.OpAtenPermuteCopy, ir.OpAtenViewCopy, ir.OpAtenSqueezeCopyDim,
		ir.OpAtenSqueezeCopyDims, ir.OpAtenUnsqueezeCopy, ir.OpAtenCat,
		ir.OpAtenSliceCopyTensor, ir.OpAtenConstantPadNd, ir.OpAtenAvgPool2d,
		ir.OpAtenMaxPool2d, ir.OpAtenMeanDim, ir.OpAtenBmm, ir.OpAtenElu,
		ir.OpAtenUpsampleBilinear2dVec, ir.OpAtenUpsampleBilinear2d,
		ir.OpDimOrderOps_CloneDimOrder, ir.OpDimOrderOps_ToDimOrderCopy,
	} {
		genericOps[op] = true
	}
}

// bakes reports whether the constant region input in is baked into the
// payload: some use of it inside the region is not a generic op's operand
// (a fully-connected weight or bias, also through the weight transpose the
// fully-connected node folds, a convolution's, a PReLU weight, a quantized
// pattern's constant). A constant without uses in the region is baked
// (nothing reads it at run time).
func bakes(in *ir.Value) bool {
	if in.NumUses() == 0 {
		return true
	}
	for _, u := range in.Uses() {
		if u.IsReturn() {
			continue
		}
		if !genericOps[u.Op] || foldedWeight(u) {
			return true
		}
	}
	return false
}

// foldedWeight reports a permute_copy whose result is a fully-connected
// op's weight: the node folds it into its filter, so the permuted constant
// is the op's weight (linear's decomposition).
func foldedWeight(n *ir.Node) bool {
	if n.Op != opPermute {
		return false
	}
	for _, u := range n.Results[0].Uses() {
		if !u.IsReturn() && isFC(u) {
			return true
		}
	}
	return false
}

// BakesOperand reports whether delegate call passes v (an operand of the
// call) baked into its payload rather than at run time. Calls of other
// backends bake every constant operand (their serializers hold them). It
// scans the call's operands: to ask about many operands of one call, use
// BakedOperands once.
func BakesOperand(call *ir.Node, v *ir.Value) bool {
	region := xnnRegion(call)
	if region == nil {
		return true
	}
	for i, a := range call.Args[2:] {
		if a.Kind == ir.ArgValue && a.Value == v && i < len(region.Inputs) {
			return bakes(region.Inputs[i])
		}
	}
	return true
}

// xnnRegion is the region of an XNNPACK delegate call, nil for any other
// node.
func xnnRegion(call *ir.Node) *ir.Graph {
	if call.Op != OpCallDelegate || len(call.Args) < 2 || call.Args[0].Kind != ir.ArgGraph || call.Args[1].Str != BackendID {
		return nil
	}
	return call.Args[0].Graph
}

// OperandBaking holds BakesOperand's answer for every operand of one
// delegate call (BakedOperands).
type OperandBaking struct {
	runtime map[*ir.Value]bool // operands passed at run time; nil: none
}

// BakedOperands answers BakesOperand for all operands of call at once, in
// one pass over them: an operand passed more than once is answered by its
// first place, and a value that is not an operand of an XNNPACK call is
// baked.
func BakedOperands(call *ir.Node) OperandBaking {
	region := xnnRegion(call)
	if region == nil {
		return OperandBaking{}
	}
	seen := map[*ir.Value]bool{}
	var b OperandBaking
	for i, a := range call.Args[2:] {
		if a.Kind != ir.ArgValue || i >= len(region.Inputs) || seen[a.Value] {
			continue
		}
		seen[a.Value] = true
		if !bakes(region.Inputs[i]) {
			if b.runtime == nil {
				b.runtime = map[*ir.Value]bool{}
			}
			b.runtime[a.Value] = true
		}
	}
	return b
}

// Bakes reports whether the call passes v baked into its payload: the
// answer of BakesOperand(call, v).
func (b OperandBaking) Bakes(v *ir.Value) bool { return !b.runtime[v] }
