package xnnpack

import (
	"sort"

	"github.com/fxport/fxport/ir"
)

// mergeUnrelated merges partitions that share no operand edge when their
// union stays convex, as exir's partitioner does: torch's
// CapabilityBasedPartitioner (and exir's GroupBasedPartitioner built on
// it) tries to merge every new partition with all existing ones, refusing
// only merges that would create a cycle through undelegated nodes
// ("limited horizontal fusion"). In
// djl_mixed_xnnpack_portable_stress_mlp.pte the two branches' x[0, 0] * 64
// multiplies, which share nothing, are one delegate. Partitions are taken
// in the order of their first node; each absorbs every later one it can.
// A merge must keep the graph of partitions acyclic, so the convexity check
// treats every other partition as one node (convexAmong): two unrelated
// nodes of one partition are a path once it is a single delegate call.
func mergeUnrelated(groups [][]*ir.Node, pos map[*ir.Node]int) [][]*ir.Node {
	first := func(g []*ir.Node) int {
		m := -1
		for _, n := range g {
			if m < 0 || pos[n] < m {
				m = pos[n]
			}
		}
		return m
	}
	sort.SliceStable(groups, func(i, j int) bool { return first(groups[i]) < first(groups[j]) })
	for i := 0; i < len(groups); i++ {
		for j := i + 1; j < len(groups); j++ {
			union := append(append([]*ir.Node{}, groups[i]...), groups[j]...)
			if !convexAmong(union, groups, i, j) {
				continue
			}
			groups[i] = union
			groups = append(groups[:j], groups[j+1:]...)
			j--
		}
	}
	return groups
}

// currentOrder numbers g's nodes in their present order.
func currentOrder(g *ir.Graph) map[*ir.Node]int {
	nodes := g.Nodes()
	out := make(map[*ir.Node]int, len(nodes))
	for i, n := range nodes {
		out[n] = i
	}
	return out
}

// convexAmong reports whether no path leaves set and re-enters it through
// nodes outside it, where reaching any node of another partition (groups
// other than i and j) reaches all of that partition's nodes (its delegate
// call runs once all its operands are ready).
func convexAmong(set []*ir.Node, groups [][]*ir.Node, i, j int) bool {
	in := map[*ir.Node]bool{}
	for _, n := range set {
		in[n] = true
	}
	owner := map[*ir.Node]int{}
	for k, g := range groups {
		if k == i || k == j {
			continue
		}
		for _, n := range g {
			owner[n] = k
		}
	}
	seen := map[*ir.Node]bool{}
	seenGroup := map[int]bool{}
	var work []*ir.Node
	var visit func(u *ir.Node)
	visit = func(u *ir.Node) {
		// No pruning by position: through a contracted partition a path
		// may continue from a node placed after the set's last one.
		if seen[u] {
			return
		}
		seen[u] = true
		work = append(work, u)
		if k, ok := owner[u]; ok && !seenGroup[k] {
			seenGroup[k] = true
			for _, m := range groups[k] {
				visit(m)
			}
		}
	}
	users := func(n *ir.Node, f func(*ir.Node) bool) bool {
		for _, r := range n.Results {
			for _, u := range r.Uses() {
				if !u.IsReturn() && f(u) {
					return true
				}
			}
		}
		return false
	}
	for _, n := range set {
		users(n, func(u *ir.Node) bool {
			if !in[u] {
				visit(u)
			}
			return false
		})
	}
	for len(work) > 0 {
		u := work[len(work)-1]
		work = work[:len(work)-1]
		if users(u, func(w *ir.Node) bool { return in[w] }) {
			return false
		}
		users(u, func(w *ir.Node) bool {
			visit(w)
			return false
		})
	}
	return true
}
