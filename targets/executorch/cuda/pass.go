package cuda

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PartitionPass takes the CUDA backend's partition before the ExecuTorch
// lowering (ET-B04): the region AOTInductor compiles must hold plain ATen
// ops, not edge ops, out variants or memory.alloc. It is registered here,
// next to the partitioner; its place in the pipeline is its row in
// pm/pipelines.go.
var PartitionPass = pm.RegisterPass(&pm.Pass{
	Name:     "cuda-partition",
	ID:       "ET-B04",
	Kind:     pm.KindLowering,
	Backends: []string{"executorch.cuda"},
	Stage:    pm.StageLowering,
	Required: true,
	Doc: `partition the program for the CUDA backend: its ATen part becomes executorch_call_delegate regions

Every node of the main graph goes into a partition except host-only ones:
assertions and symbolic constraints (_assert_scalar, _assert_async,
_assert_tensor_metadata, sym_constrain_range…), nodes with a non-tensor
result (sym_size, SymInt arithmetic, item(), scalar ops), control flow
(nodes with regions), device copies, other delegates, and nodes reading a
non-tensor host value that cannot be passed to a partition (a list).
A claimed node goes into the lowest partition that follows everything it
reads: the partitions of the claimed nodes it reads, and one past the last
partition a host value it reads depends on. So a host node in the middle
of the graph (an item() of a partition's result, a cond) splits the
device work into several partitions, each convex. Each partition moves
unchanged — plain ATen ops, typed on cuda:0, with None/cpu device
arguments pointed at cuda:0 — into the region of its own

  %out…_cuda = higher_order.executorch_call_delegate(^cuda_partition, "CudaBackend", %in…)

placed where its last node was; host nodes and later partitions' nodes
between its first and last node move after it. Tensor operands made on
the host get a host→device copy _to_copy(device=cuda:0); a result of an
earlier partition is passed as that partition's device tensor, with no
round trip through the host; parameters, buffers and lifted constants are
direct operands (their bytes go into the compiled partition's weights
blob). Each result read on the host gets a device→host copy
_to_copy(device=cpu) that takes over the original name and uses. The CUDA
runtime accepts only device tensors as delegate arguments, so SymInt
values a region reads are not passed as such: a sym_size of an
intermediate tensor is first re-anchored to a graph input with the same
symbolic dim; a SymInt that is an expression in the dims of the region's
tensor inputs (s0, s0*2, …) is recomputed in the region (sym_size.int and
operator.add/mul/floordiv/mod, torch.sym_min/max); any other SymInt,
SymFloat, SymBool or scalar (a data-dependent item()) is passed as a 0-dim
device tensor: full([], v, dtype=int64/float64/bool) on the host, a
host→device copy, and _local_scalar_dense in the region. Each call's
metadata "compile_spec.method_name" is the CudaBackend compile spec
method_name: program meta export.model_class when set, else "forward". A
program that already has a CudaBackend call, or has nothing but host-only
nodes, is left alone. Later lowering passes skip the regions, so the CUDA
target can write each as a standalone ATen .pt2 for AOTInductor.
Statistics: "delegated-nodes", "partitions", "host-nodes", "copies",
"computed-symints", "boxed-values"; the first call fires, and --debug
prints every host node with its reason.`,
	Run: runCUDAPartition,
})

func runCUDAPartition(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	res, err := Partition(p)
	if err != nil {
		return pm.Result{}, err
	}
	if res.Existing {
		return pm.Result{}, nil
	}
	for _, h := range res.Host {
		c.Debugf(h.Node, "stays on the host: %s", h.Reason)
	}
	c.Stat("delegated-nodes", int64(res.Nodes))
	c.Stat("partitions", int64(len(res.Calls)))
	c.Stat("host-nodes", int64(len(res.Host)))
	c.Stat("copies", int64(res.Copies))
	c.Stat("computed-symints", int64(res.Computed))
	c.Stat("boxed-values", int64(res.Boxed))
	if len(res.Calls) == 0 {
		return pm.Result{}, nil
	}
	msg := fmt.Sprintf("%d nodes delegated to CudaBackend, %d boundary copies", res.Nodes, res.Copies)
	if len(res.Calls) > 1 {
		msg = fmt.Sprintf("%d nodes delegated to %d CudaBackend partitions, %d boundary copies", res.Nodes, len(res.Calls), res.Copies)
	}
	switch {
	case res.Boxed == 1:
		msg += ", 1 value passed as a 0-dim tensor"
	case res.Boxed > 1:
		msg += fmt.Sprintf(", %d values passed as 0-dim tensors", res.Boxed)
	}
	c.Fired(res.Calls[0], msg)
	return pm.Result{Changed: true}, nil
}

// DeviceCopiesPass lowers the partition's boundary copies to ExecuTorch's
// et_copy kernels before the edge lowering sees them.
var DeviceCopiesPass = pm.RegisterPass(&pm.Pass{
	Name:     "cuda-device-copies",
	ID:       "ET-B04",
	Kind:     pm.KindLowering,
	Backends: []string{"executorch.cuda"},
	Stage:    pm.StageLowering,
	Required: true,
	Doc: `lower the CUDA partition's boundary copies to et_copy._h2d_copy / _d2h_copy

_to_copy(device=cuda:0) of a host tensor becomes et_copy._h2d_copy and
_to_copy(device=cpu) of a device tensor et_copy._d2h_copy (same dtype only;
the result keeps its type and name). Their out variants
(et_copy::_h2d_copy.out, _d2h_copy.out) are the kernels ExecuTorch's CUDA
runtime registers; to-out-variants and plan-memory treat them like any
other op. Statistic "copies".`,
	Requires: []pm.Requirement{
		{After: "cuda-partition", Why: "the copies are inserted by the partition"},
		{Before: "decompose-to-core", Why: "to-dim-order-ops would turn the copies into _to_dim_order_copy, whose out variant runs on the CPU only"},
	},
	Run: func(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
		n, err := LowerCopies(p)
		if err != nil {
			return pm.Result{}, err
		}
		c.Stat("copies", int64(n))
		return pm.Result{Changed: n > 0}, nil
	},
})
