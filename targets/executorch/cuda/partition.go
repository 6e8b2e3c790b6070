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
	OpCallDelegate = ir.MustLookupOp("higher_order.executorch_call_delegate")
	opToCopy       = ir.MustLookupOp("aten._to_copy.default")
)

// hostOps are ops that never go into the partition: assertions and symbolic
// constraints run on the host (AOTInductor has no kernels for them).
var hostOps = map[ir.Op]bool{}

func init() {
	for _, name := range []string{
		"aten._assert_async.default", "aten._assert_async.msg", "aten._assert_scalar.default",
		"aten._assert_tensor_metadata.default", "aten.sym_constrain_range.default",
		"aten.sym_constrain_range_for_size.default",
	} {
		hostOps[ir.MustLookupOp(name)] = true
	}
}

// Host is a node the partitioner left on the host, with the reason.
type Host struct {
	Node   *ir.Node
	Reason string
}

// Result says what Partition did.
type Result struct {
	// Call is the CudaBackend delegate call; nil when nothing was claimed.
	Call *ir.Node
	// Nodes is the number of nodes moved into the region (0 when the
	// program already had its CUDA partition).
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
}

// MethodName is the compile spec method_name of p (ET-B04): the program
// meta export.model_class, else "forward".
func MethodName(p *ir.Program) string {
	if v, ok := p.Meta.Get(MetaModelClass); ok && v != "" {
		return v
	}
	return "forward"
}

// FindCall returns the CudaBackend delegate call of p's main graph, nil if
// there is none, or an error when there are several.
func FindCall(p *ir.Program) (*ir.Node, error) {
	var call *ir.Node
	for _, n := range p.Main.Nodes() {
		if isCudaCall(n) {
			if call != nil {
				return nil, fmt.Errorf("cuda: graph forward has two CudaBackend delegate calls (%s and %s); the packager supports one", call.Short(), n.Short())
			}
			call = n
		}
	}
	return call, nil
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
// constraints, nodes with non-tensor results such as sym_size and SymInt
// arithmetic, control flow, device copies, other delegates) and except
// nodes that read a host node computed from the partition (which would make
// the region non-convex). The claimed nodes move, unchanged but typed on
// Device, into the region of one
//
//	%out… = higher_order.executorch_call_delegate(^cuda_partition, "CudaBackend", %in…)
//
// placed where the last claimed node was; tensor operands that are not
// constant placeholders get a host→device copy _to_copy(device=cuda:0) and
// each result a device→host copy _to_copy(device=cpu) that takes over the
// original value's name and uses. Constant placeholders (parameters,
// buffers, lifted constants) are direct operands: their bytes go into the
// compiled partition's weights. The call's metadata records the compile
// spec method_name (MethodName). A program that already has a CudaBackend
// call is left alone; one with nothing to claim too (Result.Call nil).
func Partition(p *ir.Program) (*Result, error) {
	if p == nil || p.Main == nil {
		return nil, fmt.Errorf("cuda partition: no program")
	}
	existing, err := FindCall(p)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return &Result{Call: existing, Existing: true}, nil
	}
	res := &Result{Reanchored: reanchorSymSizes(p)}
	claimed := map[*ir.Node]bool{}
	tainted := map[*ir.Node]bool{} // host nodes that read the partition
	var group []*ir.Node
	for _, n := range p.Main.Nodes() {
		reason := hostReason(n)
		readsClaim, readsTaint := false, false
		for _, v := range n.Operands() {
			if v.Def != nil {
				readsClaim = readsClaim || claimed[v.Def]
				if tainted[v.Def] {
					readsTaint = true
					if reason == "" {
						reason = fmt.Sprintf("reads %s, a host value computed from the partition", v)
					}
				}
			}
		}
		if reason != "" {
			if readsClaim || readsTaint {
				tainted[n] = true
			}
			res.Host = append(res.Host, Host{n, reason})
			continue
		}
		claimed[n] = true
		group = append(group, n)
	}
	if len(group) == 0 {
		return res, nil
	}
	call, copies, err := outline(p, group, claimed, tainted)
	if err != nil {
		return nil, err
	}
	res.Call, res.Nodes, res.Copies = call, len(group), copies
	return res, nil
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

// isConstant reports a constant placeholder of the main graph.
func isConstant(p *ir.Program, v *ir.Value) bool {
	if !v.IsInput() || v.Graph != p.Main || v.Index >= len(p.Signature.Inputs) {
		return false
	}
	switch p.Signature.Inputs[v.Index].Kind {
	case ir.Parameter, ir.Buffer, ir.ConstantTensor:
		return true
	}
	return false
}
