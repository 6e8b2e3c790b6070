package cuda

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// Device is the device CUDA partitions are typed on.
const Device = "cuda:0"

// MetaMethodName is the node metadata key of a CUDA delegate call that
// holds its compile spec method_name (ET-B04).
const MetaMethodName = "compile_spec.method_name"

// MetaModelClass is the program metadata key naming the model class; the
// compile spec method_name is its value, else "forward".
const MetaModelClass = "export.model_class"

var (
	// OpCallDelegate is the delegate call op (shared with XNNPACK).
	OpCallDelegate = ir.OpHigherOrderExecutorchCallDelegate
	opToCopy       = ir.OpAten_ToCopy
)

// hostOps are ops that never go into the partition: assertions and symbolic
// constraints run on the host (AOTInductor has no kernels for them).
var hostOps = map[ir.Op]bool{}

func init() {
	for _, op := range []ir.Op{
		ir.OpAten_AssertAsync, ir.OpAten_AssertAsyncMsg, ir.OpAten_AssertScalar,
		ir.OpAten_AssertTensorMetadata, ir.OpAtenSymConstrainRange,
		ir.OpAtenSymConstrainRangeForSize,
	} {
		hostOps[op] = true
	}
}

// Host is a node the partitioner left on the host, with the reason.
type Host struct {
	Node   *ir.Node
	Reason string
}

// Result says what Partition did.
type Result struct {
	// Calls are the CudaBackend delegate calls, in graph order; empty when
	// nothing was claimed.
	Calls []*ir.Node
	// Nodes is the number of nodes moved into the regions (0 when the
	// program already had its CUDA partitions).
	Nodes int
	// Existing is true when the program already held a CudaBackend call.
	Existing bool
	// Host lists the nodes left on the host.
	Host []Host
	// Copies counts the boundary copies inserted (host→device and back).
	Copies int
	// Reanchored counts the sym_size nodes pointed from an intermediate
	// tensor at a graph input (symsize.go).
	Reanchored int
	// Computed counts the SymInt operands a region recomputes from the
	// dims of its tensor inputs; Boxed those passed as 0-dim device
	// tensors (symsize.go).
	Computed, Boxed int
}

// MethodName is the compile spec method_name of p (ET-B04): the program
// meta export.model_class, else "forward".
func MethodName(p *ir.Program) string {
	if v, ok := p.Meta.Get(MetaModelClass); ok && v != "" {
		return v
	}
	return "forward"
}

// FindCalls returns the CudaBackend delegate calls of p's main graph in
// graph order.
func FindCalls(p *ir.Program) []*ir.Node {
	var calls []*ir.Node
	for _, n := range p.Main.Nodes() {
		if isCudaCall(n) {
			calls = append(calls, n)
		}
	}
	return calls
}

func isCudaCall(n *ir.Node) bool {
	return n.Op == OpCallDelegate && len(n.Args) > 1 && n.Args[1].Kind == ir.ArgString && n.Args[1].Str == BackendID
}

// hostReason says why n stays on the host ("" when it may join).
func hostReason(n *ir.Node) string {
	switch {
	case hostOps[n.Op]:
		return "assertion or symbolic constraint"
	case n.Op == OpCallDelegate:
		return "another backend's delegate call"
	case n.Op.Has(ir.PropHigherOrder) || len(n.Regions()) > 0:
		return "control flow (a region) cannot be compiled into the AOTInductor partition"
	case isDeviceCopy(n):
		return "device copy"
	case len(n.Results) == 0:
		return "no results"
	}
	for _, r := range n.Results {
		if r.Tensor() == nil {
			return fmt.Sprintf("result %s is %s, not a tensor (symbolic and scalar values stay on the host)", r, r.Type)
		}
	}
	return ""
}

// isDeviceCopy reports a _to_copy whose device argument is set.
func isDeviceCopy(n *ir.Node) bool {
	if n.Op != opToCopy {
		return false
	}
	i := n.Op.ArgIndex("device")
	return i >= 0 && i < len(n.Args) && n.Args[i].Kind == ir.ArgDevice
}

// Partition claims the supported part of p's main graph for the CUDA
// backend: every node except host-only ones (assertions and symbolic
// constraints, nodes with non-tensor results such as sym_size, SymInt
// arithmetic and item(), control flow, device copies, other delegates, and
// nodes reading a host value that cannot be passed to a partition — a
// list, say — computed from one). The claimed nodes form partitions
// 0, 1, …: a node goes into the lowest partition that follows everything
// it reads — the partitions of the claimed nodes it reads, and one past
// the last partition a host value it reads depends on — so a host node in
// the middle of the graph (an item() of a partition's result, a cond)
// splits the device work in two, and each partition is convex. Each
// partition moves, unchanged but typed on Device, into the region of its
// own
//
//	%out… = higher_order.executorch_call_delegate(^cuda_partition, "CudaBackend", %in…)
//
// placed where its last node was (outline). Tensor operands made on the
// host get a host→device copy _to_copy(device=cuda:0); results of an
// earlier partition are passed as the device tensors that partition
// returned (no round trip through the host); each result read on the host
// gets a device→host copy _to_copy(device=cpu) that takes over the
// original value's name and uses. Constant placeholders (parameters,
// buffers, lifted constants) are direct operands: their bytes go into the
// compiled partition's weights. SymInt operands are recomputed in the
// region from its tensor inputs' dims, or passed as 0-dim device tensors
// (symsize.go). Each call's metadata records the compile spec method_name
// (MethodName). A program that already has a CudaBackend call is left
// alone; one with nothing to claim too (Result.Calls empty).
func Partition(p *ir.Program) (*Result, error) {
	if p == nil || p.Main == nil {
		return nil, fmt.Errorf("cuda partition: no program")
	}
	if existing := FindCalls(p); len(existing) > 0 {
		return &Result{Calls: existing, Existing: true}, nil
	}
	res := &Result{Reanchored: reanchorSymSizes(p)}
	part := map[*ir.Node]int{}  // claimed node → its partition
	after := map[*ir.Node]int{} // host node → the last partition it depends on (-1: none)
	var groups [][]*ir.Node
	for _, n := range p.Main.Nodes() {
		reason := hostReason(n)
		dep, need := -1, 0
		for _, v := range n.Operands() {
			if k, ok := part[v.Def]; ok && v.Def != nil {
				dep, need = max(dep, k), max(need, k)
				continue
			}
			if a, ok := after[v.Def]; ok && v.Def != nil && a >= 0 {
				dep, need = max(dep, a), max(need, a+1)
			}
			if reason == "" && !passable(v) {
				reason = fmt.Sprintf("reads the host value %s (%s), which cannot be passed to a CUDA partition", v, v.Type)
			}
		}
		if reason != "" {
			after[n] = dep
			res.Host = append(res.Host, Host{n, reason})
			continue
		}
		part[n] = need
		for len(groups) <= need {
			groups = append(groups, nil)
		}
		groups[need] = append(groups[need], n)
	}
	for k, group := range groups {
		if len(group) == 0 {
			continue // cannot happen: partition k+1 needs a host node after k
		}
		later := func(n *ir.Node) bool {
			if j, ok := part[n]; ok {
				return j > k
			}
			a, ok := after[n]
			return ok && a >= k
		}
		o, err := outline(p, group, later)
		if err != nil {
			return nil, err
		}
		res.Calls = append(res.Calls, o.call)
		res.Nodes += len(group)
		res.Copies += o.copies
		res.Computed += o.computed
		res.Boxed += o.boxed
	}
	return res, nil
}

// passable reports a value a partition can take as an operand: a tensor, or
// a SymInt, SymFloat, SymBool or Python scalar (symsize.go).
func passable(v *ir.Value) bool {
	if v.Tensor() != nil {
		return true
	}
	_, ok := boxDType(v.Type)
	return ok
}

// onDevice returns t typed on Device (non-tensors unchanged).
func onDevice(t ir.Type) ir.Type {
	if tt := ir.AsTensor(t); tt != nil {
		c := *tt
		c.Device = Device
		return &c
	}
	return t
}
