package xnnpack

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/partition"
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
// higher_order.executorch_call_delegate node. As exir's to_backend does,
// partitions are outlined latest-first (partition.LatestFirst: region
// lowered_module_0 holds the graph's latest claimed node) and the whole
// graph is re-sorted after each (partition.Legalize, legalize_graph).
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
			if ruleOf(n.Op).config != "" {
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
	// exir fuses partitions in the order the capability partitioner
	// created them, walking the graph backward: the one holding the latest
	// node first.
	partition.LatestFirst(groups, pos)
	// One Legalizer for every re-sort: it keeps what it read of each node
	// and the order the last sort popped, and re-sorts only around what
	// each outline changed (Outlined reports the group, the call and so the
	// users an outline rewrote); the order is the whole-graph sort's.
	lz := partition.NewLegalizer(p.Main)
	var calls []*ir.Node
	for _, g := range groups {
		if trivial(g) {
			continue
		}
		// Current graph order (lz.Position): outlining and re-sorting after
		// an earlier partition may have moved members of this one.
		sort.Slice(g, func(i, j int) bool { return lz.Position(g[i]) < lz.Position(g[j]) })
		call, err := outline(g, len(res.Partitions), lz.Position)
		if err != nil {
			return nil, err
		}
		res.Partitions = append(res.Partitions, Partition{Call: call, Nodes: len(g)})
		calls = append(calls, call)
		lz.Outlined(call, g)
		// exir's to_backend re-sorts the whole graph after fusing each
		// partition (legalize_graph); the later groups' order follows.
		if err := lz.Legalize(calls); err != nil {
			return nil, fmt.Errorf("xnnpack partition: %w", err)
		}
	}
	return res, nil
}

// group assigns the claimed nodes greedily, in graph order, to maximal
// convex partitions (partition.Group: a node joins the partitions of its
// operands' producers when the union stays convex, else the largest one it
// can join, else it starts a new one), then merges unrelated ones.
func group(nodes []*ir.Node, claimed map[*ir.Node]bool, pos map[*ir.Node]int) [][]*ir.Node {
	groups := partition.Group(nodes, pos, func(n *ir.Node) bool { return claimed[n] })
	return mergeUnrelated(groups, pos) // partition_merge.go
}

// trivial reports a partition not worth delegating: only shape ops
// (exir drops partitions made of view/permute-like ops alone).
func trivial(g []*ir.Node) bool {
	for _, n := range g {
		switch ruleOf(n.Op).config {
		case "ViewCopyConfig", "SqueezeCopyConfig", "UnsqueezeCopyConfig", "PermuteConfig", "CloneDimOrderConfig":
		default:
			return false
		}
	}
	return true
}

// outline moves the nodes of g (in graph order, convex) into the region
// lowered_module_<index> of a new XnnpackBackend executorch_call_delegate
// node placed where g's last node was (partition.Outline); pos gives the
// graph's current order.
func outline(g []*ir.Node, index int, pos func(*ir.Node) int) (*ir.Node, error) {
	call, err := partition.Outline(g, partition.Spec{
		Backend:  BackendID,
		Region:   fmt.Sprintf("lowered_module_%d", index),
		Pass:     "xnnpack-partition",
		Prefix:   "xnnpack partition",
		Position: pos,
	})
	if err == nil && call == nil {
		err = g[0].Errorf("xnnpack partition: partition has no outputs")
	}
	return call, err
}
