package openvino

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/partition"
)

// BackendID is the delegate id of the OpenVINO backend.
const BackendID = emit.OpenVINOBackendID

// Device is the compile spec device of every OpenVINO delegate (ET-B06:
// OpenvinoPartitioner([CompileSpec("device", b"CPU")])).
const Device = "CPU"

// MetaDevice is the node metadata key of an OpenVINO delegate call that
// holds its compile spec device.
const MetaDevice = "compile_spec.device"

// OpCallDelegate is the delegate call op (shared with XNNPACK and CUDA).
var OpCallDelegate = partition.OpCallDelegate

// Rejected is a node the partitioner left on portable kernels, with the
// reason.
type Rejected struct {
	Node   *ir.Node
	Reason string
}

// Result says what Partition did.
type Result struct {
	// Calls are the OpenvinoBackend delegate calls made, in graph order.
	Calls []*ir.Node
	// Nodes is the number of nodes moved into regions.
	Nodes int
	// Existing is true when the program already held OpenvinoBackend calls
	// (Partition then changes nothing).
	Existing bool
	// Rejected lists the nodes left on portable kernels.
	Rejected []Rejected
}

// FindCalls returns the OpenvinoBackend delegate calls of p's main graph,
// in graph order.
func FindCalls(p *ir.Program) []*ir.Node {
	var out []*ir.Node
	for _, n := range p.Main.Nodes() {
		if IsCall(n) {
			out = append(out, n)
		}
	}
	return out
}

// IsCall reports an OpenvinoBackend delegate call.
func IsCall(n *ir.Node) bool {
	return n.Op == OpCallDelegate && len(n.Args) > 1 && n.Args[1].Kind == ir.ArgString && n.Args[1].Str == BackendID
}

// Partition claims the nodes of p's main graph that Unsupported accepts
// and groups them greedily, in graph order, into maximal convex groups (a
// node joins its producers' groups unless that creates a path leaving the
// group and re-entering it through an unclaimed node; several groups are
// allowed, and single-node groups are kept, as ExecuTorch's partitioner
// allows them). A node that would pass a non-contiguous tensor across a
// group's boundary (read one from outside, or write one used outside)
// stays portable too, as does one that would pass a SymInt across it (the
// delegate's arguments are tensors; shape arithmetic joins the group that
// uses it), and the nodes are grouped again. Each group becomes one
//
//	%out… = higher_order.executorch_call_delegate(^openvino_partition_N, "OpenvinoBackend", %in…)
//
// placed where the group's last node was (groups are outlined
// latest-first and the graph re-sorted after each, as exir's to_backend
// does: partition.LatestFirst, partition.Legalize), its region holding the claimed
// nodes unchanged; its operands are the values the group reads (constant
// placeholders included: the compiled model holds their bytes), its
// results the values used after it, which keep their names. The call's
// metadata compile_spec.device is Device. A program that already has
// OpenvinoBackend calls is left alone.
func Partition(p *ir.Program) (*Result, error) {
	if p == nil || p.Main == nil {
		return nil, fmt.Errorf("openvino partition: no program")
	}
	if calls := FindCalls(p); len(calls) > 0 {
		return &Result{Calls: calls, Existing: true}, nil
	}
	res := &Result{}
	nodes := p.Main.Nodes()
	pos := make(map[*ir.Node]int, len(nodes))
	for i, n := range nodes {
		pos[n] = i
	}
	// Group, then drop the nodes where a strided tensor or a SymInt would
	// cross a partition's boundary (the runtime passes buffers in the
	// tensor's dim order, the compiled model reads them contiguous; it binds
	// tensors only), and group again, until every boundary is contiguous
	// and tensor-only. Each round drops a node.
	excluded := map[*ir.Node]string{}
	for _, n := range nodes {
		if why := Unsupported(n); why != "" {
			excluded[n] = why
		}
	}
	var live [][]*ir.Node
	for {
		live = partition.InGraphOrder(partition.Group(nodes, pos, func(n *ir.Node) bool {
			_, ok := excluded[n]
			return !ok
		}), pos)
		dropped := false
		for _, g := range live {
			for n, why := range stridedBoundary(g) {
				excluded[n] = why
				dropped = true
			}
			for n, why := range symBoundary(g) {
				excluded[n] = why
				dropped = true
			}
		}
		if !dropped {
			break
		}
	}
	for _, n := range nodes {
		if why, ok := excluded[n]; ok {
			res.Rejected = append(res.Rejected, Rejected{n, why})
		}
	}
	// exir fuses the partitions latest-first and re-sorts the whole graph
	// after each (partition.Legalize), so a group's members are put in the
	// current graph order before it is outlined.
	partition.LatestFirst(live, pos)
	var made []*ir.Node
	for _, g := range live {
		partition.SortByCurrentOrder(p.Main, g)
		call, err := partition.Outline(g, partition.Spec{
			Backend: BackendID,
			Region:  fmt.Sprintf("openvino_partition_%d", len(made)),
			Pass:    "openvino-partition",
			Prefix:  "openvino partition",
		})
		if err != nil {
			return nil, err
		}
		if call == nil {
			continue // none of g's results is used
		}
		call.Meta.Set(MetaDevice, Device)
		made = append(made, call)
		if err := partition.Legalize(p.Main, made); err != nil {
			return nil, fmt.Errorf("openvino partition: %w", err)
		}
		res.Nodes += len(g)
	}
	res.Calls = FindCalls(p)
	return res, nil
}

// stridedBoundary returns the nodes of g that read a non-contiguous tensor
// from outside g or write one that is used outside g, with the reason.
func stridedBoundary(g []*ir.Node) map[*ir.Node]string {
	in := map[*ir.Node]bool{}
	for _, n := range g {
		in[n] = true
	}
	out := map[*ir.Node]string{}
	for _, n := range g {
		for _, v := range n.Operands() {
			if (v.Def == nil || !in[v.Def]) && !contiguous(v) {
				out[n] = fmt.Sprintf("operand %s is not contiguous and comes from outside the partition", v)
			}
		}
		for _, r := range n.Results {
			if contiguous(r) {
				continue
			}
			for _, u := range r.Uses() {
				if u.IsReturn() || !in[u] {
					out[n] = fmt.Sprintf("result %s is not contiguous and is used outside the partition", r)
					break
				}
			}
		}
	}
	return out
}

// symBoundary returns the nodes of g that read a SymInt produced outside
// g or write one that is used outside g, with the reason: the delegate's
// inputs and outputs are tensors, so shape arithmetic must be computed
// inside the partition that uses it (from the dims of its tensor inputs,
// as OpenVINO's frontend converts sym_size) or stay portable with its
// users.
func symBoundary(g []*ir.Node) map[*ir.Node]string {
	in := map[*ir.Node]bool{}
	for _, n := range g {
		in[n] = true
	}
	out := map[*ir.Node]string{}
	for _, n := range g {
		for _, v := range n.Operands() {
			if isSymInt(v) && (v.Def == nil || !in[v.Def]) {
				out[n] = fmt.Sprintf("operand %s is a SymInt computed outside the partition", v)
			}
		}
		for _, r := range n.Results {
			if !isSymInt(r) {
				continue
			}
			for _, u := range r.Uses() {
				if u.IsReturn() || !in[u] {
					out[n] = fmt.Sprintf("result %s is a SymInt used outside the partition", r)
					break
				}
			}
		}
	}
	return out
}

func contiguous(v *ir.Value) bool {
	t := v.Tensor()
	return t == nil || t.IsContiguous()
}
