package passes

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/cuda"
)

// CUDAPartition takes the CUDA backend's partition before the ExecuTorch
// lowering (ET-B04): the region AOTInductor compiles must hold plain ATen
// ops, not edge ops, out variants or memory.alloc. The file sorts before
// every other lowering pass's file and depends on none of them, so Go
// registers it first and the default pipeline runs it first.
var CUDAPartition = pm.RegisterPass(&pm.Pass{
	Name:     "cuda-partition",
	ID:       "ET-B04",
	Kind:     pm.KindLowering,
	Backends: []string{"executorch.cuda"},
	Stage:    pm.StageLowering,
	Required: true,
	Doc: `partition the program for the CUDA backend: its ATen part becomes one executorch_call_delegate region

Every node of the main graph goes into the partition except host-only ones:
assertions and symbolic constraints (_assert_scalar, _assert_async,
_assert_tensor_metadata, sym_constrain_range…), nodes with a non-tensor
result (sym_size, SymInt arithmetic, scalar ops), control flow (nodes with
regions), device copies and other delegates, and any node that reads a host
value computed from the partition (it would make the region non-convex).
The claimed nodes move unchanged — plain ATen ops, typed on cuda:0, with
None/cpu device arguments pointed at cuda:0 — into the region of

  %out…_cuda = higher_order.executorch_call_delegate(^cuda_partition, "CudaBackend", %in…)

placed where the last claimed node was. Tensor operands that are not
constant placeholders get a host→device copy _to_copy(device=cuda:0);
parameters, buffers and lifted constants are direct operands (their bytes
go into the compiled partition's weights blob). Each result gets a
device→host copy _to_copy(device=cpu) that takes over the original name
and uses. SymInt values the region reads are not passed in (the CUDA
runtime accepts only device tensors as delegate arguments): a sym_size of an
intermediate tensor is first re-anchored to a graph input with the same
symbolic dim, and the region recomputes it from its own tensor inputs. The call's metadata "compile_spec.method_name" is the CudaBackend
compile spec method_name: program meta export.model_class when set, else
"forward". A program that already has a CudaBackend call, or has nothing
but host-only nodes, is left alone. Later lowering passes skip the region,
so the CUDA target can write it as a standalone ATen .pt2 for AOTInductor.
Statistics: "delegated-nodes", "host-nodes", "copies"; the call fires,
and --debug prints every host node with its reason.`,
	Run: runCUDAPartition,
})

var _ = CUDADeviceCopies

func runCUDAPartition(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	res, err := cuda.Partition(p)
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
	c.Stat("host-nodes", int64(len(res.Host)))
	c.Stat("copies", int64(res.Copies))
	if res.Call == nil {
		return pm.Result{}, nil
	}
	c.Fired(res.Call, fmt.Sprintf("%d nodes delegated to CudaBackend, %d boundary copies", res.Nodes, res.Copies))
	return pm.Result{Changed: true}, nil
}

// CUDADeviceCopies lowers the partition's boundary copies to ExecuTorch's
// et_copy kernels before the edge lowering sees them.
var CUDADeviceCopies = pm.RegisterPass(&pm.Pass{
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
		{Before: etlDecomposeName, Why: "to-dim-order-ops would turn the copies into _to_dim_order_copy, whose out variant runs on the CPU only"},
	},
	Run: func(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
		n, err := cuda.LowerCopies(p)
		if err != nil {
			return pm.Result{}, err
		}
		c.Stat("copies", int64(n))
		return pm.Result{Changed: n > 0}, nil
	},
})
