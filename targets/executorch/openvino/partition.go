package openvino

import (
	"fmt"
	"sort"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/extcompile"
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
var OpCallDelegate = ir.MustLookupOp("higher_order.executorch_call_delegate")

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
// stays portable too, and the nodes are grouped again. Each group becomes one
//
//	%out… = higher_order.executorch_call_delegate(^openvino_partition_N, "OpenvinoBackend", %in…)
//
// placed where the group's last node was, its region holding the claimed
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
	// Group, then drop the nodes where a strided tensor would cross a
	// partition's boundary (the runtime passes buffers in the tensor's dim
	// order, the compiled model reads them contiguous), and group again,
	// until every boundary is contiguous. Each round drops a node.
	excluded := map[*ir.Node]string{}
	for _, n := range nodes {
		if why := Unsupported(n); why != "" {
			excluded[n] = why
		}
	}
	var live [][]*ir.Node
	for {
		live = assign(nodes, pos, excluded)
		dropped := false
		for _, g := range live {
			for n, why := range stridedBoundary(g) {
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
	for _, g := range live {
		call, err := outline(p, g, len(res.Calls))
		if err != nil {
			return nil, err
		}
		if call == nil {
			continue
		}
		res.Calls = append(res.Calls, call)
		res.Nodes += len(g)
	}
	return res, nil
}

// assign groups the nodes not in excluded greedily, in graph order, into
// maximal convex groups, and returns them in graph order of their first
// node, each in graph order.
func assign(nodes []*ir.Node, pos map[*ir.Node]int, excluded map[*ir.Node]string) [][]*ir.Node {
	group := map[*ir.Node]int{}
	var groups [][]*ir.Node
	for _, n := range nodes {
		if _, ok := excluded[n]; ok {
			continue
		}
		ids := producerGroups(n, group)
		joined := false
		if len(ids) > 0 {
			all := []*ir.Node{n}
			for _, id := range ids {
				all = append(all, groups[id]...)
			}
			if convex(all, pos) {
				into := ids[0]
				for _, id := range ids[1:] {
					for _, m := range groups[id] {
						group[m] = into
					}
					groups[into] = append(groups[into], groups[id]...)
					groups[id] = nil
				}
				groups[into] = append(groups[into], n)
				group[n] = into
				joined = true
			} else {
				sort.SliceStable(ids, func(i, j int) bool { return len(groups[ids[i]]) > len(groups[ids[j]]) })
				for _, id := range ids {
					if convex(append([]*ir.Node{n}, groups[id]...), pos) {
						groups[id] = append(groups[id], n)
						group[n] = id
						joined = true
						break
					}
				}
			}
		}
		if !joined {
			group[n] = len(groups)
			groups = append(groups, []*ir.Node{n})
		}
	}
	var live [][]*ir.Node
	for _, g := range groups {
		if len(g) > 0 {
			sort.Slice(g, func(i, j int) bool { return pos[g[i]] < pos[g[j]] })
			live = append(live, g)
		}
	}
	sort.SliceStable(live, func(i, j int) bool { return pos[live[i][0]] < pos[live[j][0]] })
	return live
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

func contiguous(v *ir.Value) bool {
	t := v.Tensor()
	return t == nil || t.IsContiguous()
}

// producerGroups lists, sorted, the groups of n's producers.
func producerGroups(n *ir.Node, group map[*ir.Node]int) []int {
	seen := map[int]bool{}
	var ids []int
	for _, v := range n.Operands() {
		if v.Def == nil {
			continue
		}
		if id, ok := group[v.Def]; ok && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	return ids
}

// convex reports whether no path leaves set and re-enters it through a
// node outside it.
func convex(set []*ir.Node, pos map[*ir.Node]int) bool {
	in := map[*ir.Node]bool{}
	last := 0
	for _, n := range set {
		in[n] = true
		last = max(last, pos[n])
	}
	// Walk the outside nodes reachable from the set; only those before the
	// set's last node can lead back into it.
	seen := map[*ir.Node]bool{}
	var work []*ir.Node
	users := func(n *ir.Node) {
		for _, r := range n.Results {
			for _, u := range r.Uses() {
				if u.IsReturn() || in[u] || seen[u] || pos[u] > last {
					continue
				}
				seen[u] = true
				work = append(work, u)
			}
		}
	}
	for _, n := range set {
		users(n)
	}
	for len(work) > 0 {
		u := work[len(work)-1]
		work = work[:len(work)-1]
		for _, r := range u.Results {
			for _, w := range r.Uses() {
				if !w.IsReturn() && in[w] {
					return false
				}
			}
		}
		users(u)
	}
	return true
}

// outline moves g (graph order, convex) into the region of a new
// OpenvinoBackend delegate call placed after g's last node; nodes between
// g's first and last node that depend on g move after the call, in order.
// A group none of whose results is used is left alone (nil call).
func outline(p *ir.Program, g []*ir.Node, index int) (*ir.Node, error) {
	in := map[*ir.Node]bool{}
	for _, n := range g {
		in[n] = true
	}
	var inputs []*ir.Value
	seenIn := map[*ir.Value]bool{}
	for _, n := range g {
		for _, v := range n.Operands() {
			if (v.Def == nil || !in[v.Def]) && !seenIn[v] {
				seenIn[v] = true
				inputs = append(inputs, v)
			}
		}
	}
	var outputs []*ir.Value
	for _, n := range g {
		for _, r := range n.Results {
			for _, u := range r.Uses() {
				if u.IsReturn() || !in[u] {
					outputs = append(outputs, r)
					break
				}
			}
		}
	}
	if len(outputs) == 0 {
		return nil, nil
	}
	last := g[len(g)-1]
	dep := map[*ir.Node]bool{}
	var movers []*ir.Node
	for n := g[0]; n != nil && n != last; n = n.Next() {
		if in[n] {
			continue
		}
		for _, v := range n.Operands() {
			if v.Def != nil && (in[v.Def] || dep[v.Def]) {
				dep[n] = true
				movers = append(movers, n)
				break
			}
		}
	}
	region := g[0].NewRegion(fmt.Sprintf("openvino_partition_%d", index))
	vmap := map[*ir.Value]*ir.Value{}
	for _, v := range inputs {
		nv, err := region.AddInput(v.Name, v.Type)
		if err != nil {
			return nil, fmt.Errorf("openvino partition: %w", err)
		}
		vmap[v] = nv
	}
	b := ir.NewBuilder(region)
	for _, n := range g {
		args := make([]ir.Arg, len(n.Args))
		for i, a := range n.Args {
			args[i] = extcompile.Remap(a, vmap)
		}
		types := make([]ir.Type, len(n.Results))
		names := make([]string, len(n.Results))
		for i, r := range n.Results {
			types[i], names[i] = r.Type, r.Name
		}
		nn, err := b.Raw(n.Op, args, types, names)
		if err != nil {
			return nil, n.Errorf("openvino partition: copying into the region: %v", err)
		}
		nn.Meta = n.Meta.Clone()
		for i, r := range n.Results {
			vmap[r] = nn.Results[i]
		}
	}
	outs := make([]ir.Arg, len(outputs))
	types := make([]ir.Type, len(outputs))
	for i, o := range outputs {
		outs[i] = ir.ValueArg(vmap[o])
		types[i] = o.Type
	}
	region.SetOutputs(outs...)
	callArgs := []ir.Arg{ir.GraphArg(region), ir.StringArg(BackendID)}
	for _, v := range inputs {
		callArgs = append(callArgs, ir.ValueArg(v))
	}
	cb := ir.NewBuilder(p.Main)
	cb.SetInsertAfter(last)
	cb.Pass = "openvino-partition"
	call, err := cb.Raw(OpCallDelegate, callArgs, types, nil)
	if err != nil {
		return nil, last.Errorf("openvino partition: building the delegate call: %v", err)
	}
	call.Meta.Set(MetaDevice, Device)
	for i, o := range outputs {
		o.ReplaceAllUsesWith(call.Results[i])
	}
	at := call.Next()
	for _, m := range movers {
		m.MoveBefore(at) // nil: to the end of the graph
	}
	for i := len(g) - 1; i >= 0; i-- {
		if err := g[i].Erase(); err != nil {
			return nil, g[i].Errorf("openvino partition: erasing a claimed node: %v", err)
		}
	}
	for i, o := range outputs {
		if err := call.Results[i].Rename(o.Name); err != nil {
			return nil, fmt.Errorf("openvino partition: %w", err)
		}
	}
	return call, nil
}
