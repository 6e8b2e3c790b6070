package xnnpack

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fxport/fxport/ir"
)

// BackendID is the BackendDelegate.id of the XNNPACK delegate.
const BackendID = "XnnpackBackend"

// Options configure the partitioner.
type Options struct {
	// Exclude names partitioner configs (Configs) whose ops stay on portable
	// kernels (exir's partition_exclude, ET-B02).
	Exclude []string
}

// Partition is one claimed group, reported after the rewrite.
type Partition struct {
	Call  *ir.Node // the executorch_call_delegate node
	Nodes int      // nodes inside its region
}

// Rejected is a node the support rules turned down, with the reason.
type Rejected struct {
	Node   *ir.Node
	Reason string
}

// Result says what Run did.
type Result struct {
	Partitions []Partition
	Rejected   []Rejected
}

// Run partitions p's main graph: supported nodes are grouped greedily into
// maximal convex partitions (merging never creates a path that leaves a
// partition and re-enters it through an undelegated node), nodes whose
// serialization needs a node outside their partition are released
// (checker.needs), and each partition becomes one
// higher_order.executorch_call_delegate node.
// Constant placeholders used only inside a partition become region inputs
// that the serializer bakes in as named data.
func Run(p *ir.Program, opts Options) (*Result, error) {
	if p == nil || p.Main == nil {
		return nil, fmt.Errorf("xnnpack partition: no program")
	}
	ex := map[string]bool{}
	known := map[string]bool{}
	for _, c := range Configs() {
		known[c] = true
	}
	for _, e := range opts.Exclude {
		if !known[e] {
			return nil, fmt.Errorf("xnnpack partition: unknown config %q in partition_exclude (configs: %s)", e, strings.Join(Configs(), ", "))
		}
		ex[e] = true
	}
	if len(ex) == len(known) {
		return nil, fmt.Errorf("xnnpack partition: partition_exclude names every config; disable the partitioner instead")
	}
	c := newChecker(p, ex)
	if err := c.rewriteArgMaxPools(); err != nil { // argmax_pool.go
		return nil, err
	}
	if err := c.liftScalars(); err != nil { // scalar_lift.go
		return nil, err
	}
	res := &Result{}
	nodes := p.Main.Nodes()
	pos := make(map[*ir.Node]int, len(nodes))
	for i, n := range nodes {
		pos[n] = i
	}
	claimed := map[*ir.Node]bool{}
	for _, n := range nodes {
		if why := c.supported(n); why != "" {
			if rules[n.Op].config != "" {
				res.Rejected = append(res.Rejected, Rejected{n, why})
			}
			continue
		}
		claimed[n] = true
	}
	// Group the claimed nodes, then release every node whose serialization
	// needs a node (c.needs: the rest of its quantized pattern, its static
	// weight's transpose) that did not land in its partition, and regroup
	// until nothing is released: a delegate never reads an int8 value or a
	// weight that it needs to hold itself from outside.
	var groups [][]*ir.Node
	for {
		groups = group(nodes, claimed, pos)
		released := false
		for _, g := range groups {
			in := make(map[*ir.Node]bool, len(g))
			for _, n := range g {
				in[n] = true
			}
			for _, n := range g {
				for _, m := range c.needs(n) {
					if in[m] {
						continue
					}
					where := "is not delegated"
					if claimed[m] {
						where = "is in another partition"
					}
					res.Rejected = append(res.Rejected, Rejected{n, fmt.Sprintf("its serialization needs %s (%s), which %s", m.Results[0], m.Op.Info().Name, where)})
					delete(claimed, n)
					released = true
					break
				}
			}
		}
		if !released {
			break
		}
	}
	for _, g := range groups {
		if trivial(g) {
			continue
		}
		// Current graph order: outlining an earlier partition moves the
		// nodes that depend on it after its call, members of later
		// (horizontally merged) partitions included.
		cur := currentOrder(p.Main)
		sort.Slice(g, func(i, j int) bool { return cur[g[i]] < cur[g[j]] })
		call, err := outline(p, g, len(res.Partitions))
		if err != nil {
			return nil, err
		}
		res.Partitions = append(res.Partitions, Partition{Call: call, Nodes: len(g)})
	}
	return res, nil
}

// group assigns the claimed nodes greedily, in graph order, to maximal
// convex partitions: a node joins the partitions of its operands' producers
// when the union stays convex, else the largest one it can join, else it
// starts a new one. Empty groups are dropped.
func group(nodes []*ir.Node, claimed map[*ir.Node]bool, pos map[*ir.Node]int) [][]*ir.Node {
	part := map[*ir.Node]int{} // node → partition id
	var groups [][]*ir.Node
	for _, n := range nodes {
		if !claimed[n] {
			continue
		}
		cands := map[int]bool{}
		for _, v := range n.Operands() {
			if v.Def != nil {
				if id, ok := part[v.Def]; ok {
					cands[id] = true
				}
			}
		}
		ids := sortedKeys(cands)
		// Try to merge n with all candidate partitions, then with each alone
		// (largest first), else start a new partition.
		merged := false
		if len(ids) > 0 {
			all := []*ir.Node{n}
			for _, id := range ids {
				all = append(all, groups[id]...)
			}
			if convex(all, pos) {
				target := ids[0]
				for _, id := range ids[1:] {
					for _, m := range groups[id] {
						part[m] = target
					}
					groups[target] = append(groups[target], groups[id]...)
					groups[id] = nil
				}
				groups[target] = append(groups[target], n)
				part[n] = target
				merged = true
			} else {
				sort.SliceStable(ids, func(i, j int) bool { return len(groups[ids[i]]) > len(groups[ids[j]]) })
				for _, id := range ids {
					if convex(append([]*ir.Node{n}, groups[id]...), pos) {
						groups[id] = append(groups[id], n)
						part[n] = id
						merged = true
						break
					}
				}
			}
		}
		if !merged {
			part[n] = len(groups)
			groups = append(groups, []*ir.Node{n})
		}
	}
	out := groups[:0]
	for _, g := range groups {
		if len(g) > 0 {
			out = append(out, g)
		}
	}
	return mergeUnrelated(out, pos) // partition_merge.go
}

// trivial reports a partition not worth delegating: only shape ops
// (exir drops partitions made of view/permute-like ops alone).
func trivial(g []*ir.Node) bool {
	for _, n := range g {
		switch rules[n.Op].config {
		case "ViewCopyConfig", "SqueezeCopyConfig", "UnsqueezeCopyConfig", "PermuteConfig", "CloneDimOrderConfig":
		default:
			return false
		}
	}
	return true
}

// convex reports whether no path leaves set and re-enters it through a node
// outside it.
func convex(set []*ir.Node, pos map[*ir.Node]int) bool {
	in := map[*ir.Node]bool{}
	last := 0
	for _, n := range set {
		in[n] = true
		if pos[n] > last {
			last = pos[n]
		}
	}
	// Outside nodes reachable from the set (only those before the set's last
	// node can lead back into it).
	seen := map[*ir.Node]bool{}
	var work []*ir.Node
	push := func(n *ir.Node) {
		for _, r := range n.Results {
			for _, u := range r.Uses() {
				if u.IsReturn() || seen[u] || pos[u] > last {
					continue
				}
				if in[u] {
					continue
				}
				seen[u] = true
				work = append(work, u)
			}
		}
	}
	for _, n := range set {
		push(n)
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
		push(u)
	}
	return true
}

// outline moves the nodes of g (in graph order, convex) into the region of
// a new executorch_call_delegate node placed where g's last node was.
func outline(p *ir.Program, g []*ir.Node, index int) (*ir.Node, error) {
	main := p.Main
	in := map[*ir.Node]bool{}
	for _, n := range g {
		in[n] = true
	}
	// Region inputs: values defined outside g, in first-use order.
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
	// Region outputs: results used outside g or returned, in node order.
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
		return nil, g[0].Errorf("xnnpack partition: partition has no outputs")
	}
	// Nodes between the first and last member that depend on the partition
	// move after the call, keeping their order.
	lastNode := g[len(g)-1]
	dep := map[*ir.Node]bool{}
	var movers []*ir.Node
	for n := g[0]; n != nil && n != lastNode; n = n.Next() {
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
	region := g[0].NewRegion(fmt.Sprintf("lowered_module_%d", index))
	vmap := map[*ir.Value]*ir.Value{}
	for _, v := range inputs {
		nv, err := region.AddInput(v.Name, v.Type)
		if err != nil {
			return nil, fmt.Errorf("xnnpack partition: %w", err)
		}
		vmap[v] = nv
	}
	b := ir.NewBuilder(region)
	for _, n := range g {
		args := make([]ir.Arg, len(n.Args))
		for i, a := range n.Args {
			args[i] = remap(a, vmap)
		}
		types := make([]ir.Type, len(n.Results))
		names := make([]string, len(n.Results))
		for i, r := range n.Results {
			types[i], names[i] = r.Type, r.Name
		}
		nn, err := b.Raw(n.Op, args, types, names)
		if err != nil {
			return nil, n.Errorf("xnnpack partition: copying into the region: %v", err)
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
	cb := ir.NewBuilder(main)
	cb.SetInsertAfter(lastNode)
	cb.Pass = "xnnpack-partition"
	call, err := cb.Raw(OpCallDelegate, callArgs, types, nil)
	if err != nil {
		return nil, lastNode.Errorf("xnnpack partition: building the delegate call: %v", err)
	}
	for i, o := range outputs {
		o.ReplaceAllUsesWith(call.Results[i])
	}
	at := call.Next()
	for _, m := range movers {
		m.MoveBefore(at) // nil: to the end of the graph

	}
	for i := len(g) - 1; i >= 0; i-- {
		if err := g[i].Erase(); err != nil {
			return nil, g[i].Errorf("xnnpack partition: erasing a claimed node: %v", err)
		}
	}
	for i, o := range outputs {
		if err := call.Results[i].Rename(o.Name); err != nil {
			return nil, fmt.Errorf("xnnpack partition: %w", err)
		}
	}
	return call, nil
}

func remap(a ir.Arg, vmap map[*ir.Value]*ir.Value) ir.Arg {
	switch a.Kind {
	case ir.ArgValue:
		return ir.ValueArg(vmap[a.Value])
	case ir.ArgList:
		l := make([]ir.Arg, len(a.List))
		for i, e := range a.List {
			l[i] = remap(e, vmap)
		}
		out := a
		out.List = l
		return out
	}
	return a
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
