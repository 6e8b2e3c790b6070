package xnnpack

import (
	"sort"

	"github.com/fxport/fxport/ir"
)

// Ops kept whole for the partitioner (exir's
// XnnpackPartitioner.ops_to_not_decompose). exir's to_edge_transform_and_lower
// asks the partitioner, before decomposing to core ATen, which ops to leave
// whole: every partitioner config that names an original ATen op
// (get_original_aten) contributes it, and a node of that op is kept only when
// the config's constraint check accepts the node (the filter function), so an
// op left whole is one the partitioner claims.
//
// fxport keeps only what decompose-to-core would otherwise decompose and the
// serializer writes as one XNNPACK node:
//
//	aten.hardswish.default → XNNHardswish (HardswishConfig)
//
// hardsigmoid has no XNNPACK node and no exir config, so it is decomposed as
// for portable kernels. exir also keeps linear (LinearConfig), elu,
// max_pool2d and upsample_bilinear2d.vec; the last three are not decomposed
// by decompose-to-core in the first place, and linear stays decomposed into
// permute_copy + addmm/mm, the form the fully-connected serialization and
// the batch-norm fusion read.
var keptWhole = map[ir.Op]bool{
	ir.OpAtenHardswish: true,
}

// OpsKeptWhole lists the ops OpsToNotDecompose may keep whole, sorted by
// name: what decompose-unclaimed decomposes when the partitioner left them
// outside every delegate.
func OpsKeptWhole() []ir.Op {
	out := make([]ir.Op, 0, len(keptWhole))
	for op := range keptWhole {
		out = append(out, op)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// OpsToNotDecompose reports whether decompose-to-core should leave n whole
// for the XNNPACK partitioner: n is a main-graph node of an op in
// OpsKeptWhole and the support rules accept it (the common constraints —
// fp32/fp16 tensors of rank ≤ 6, no empty or unbounded sizes — and the
// op's own check), so the partitioner claims it unless its config is
// excluded (partition-exclude), in which case decompose-unclaimed
// decomposes it after partitioning.
func OpsToNotDecompose(n *ir.Node) bool {
	if n == nil || !keptWhole[n.Op] || n.Graph == nil || n.Graph.Program == nil || n.Graph != n.Graph.Program.Main {
		return false
	}
	return newChecker(n.Graph.Program, nil).supported(n) == ""
}
