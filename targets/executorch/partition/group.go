package partition

import (
	"math"
	"sort"
	"sync/atomic"

	"github.com/fxport/fxport/ir"
)

// Group assigns the nodes for which claimed reports true greedily, in the
// order of nodes, to maximal convex groups: a node joins the groups of its
// operands' producers when their union with it stays convex, else the
// largest one of them it can join alone (ties: the earlier group), else it
// starts a new group. pos numbers the nodes in graph order. The groups come
// back in the order they were started, empty (merged-away) ones dropped;
// a group's nodes are in the order they joined it, which is not graph
// order once two groups merged (InGraphOrder sorts them).
//
// Joining several groups at once checks the union's convexity with a walk
// (Convex) unless a spine separates two of them (groupSpine): then it is
// not convex, found in O(1).
func Group(nodes []*ir.Node, pos map[*ir.Node]int, claimed func(*ir.Node) bool) [][]*ir.Node {
	member := map[*ir.Node]int{} // node → group index
	var groups [][]*ir.Node
	var bounds [][2]int // each group's first and last position
	desc, anc := groupSpine(nodes, pos, claimed)
	// below and above are each group's spine indices: the latest chain
	// node one of its nodes descends from, the first one reaches.
	var below, above []int
	spread := func(id int, n *ir.Node) {
		below[id], above[id] = max(below[id], desc[n]), min(above[id], anc[n])
	}
	// separated reports a path from one of the groups ids, or n, through
	// an unclaimed chain node to another: their union with n is not
	// convex.
	separated := func(n *ir.Node, ids []int) bool {
		for a := -1; a < len(ids); a++ {
			ba, aa := desc[n], anc[n]
			if a >= 0 {
				ba, aa = below[ids[a]], above[ids[a]]
			}
			for b := a + 1; b < len(ids); b++ {
				if below[ids[b]] >= aa || ba >= above[ids[b]] {
					return true
				}
			}
		}
		return false
	}
	// convexWith reports whether group id stays convex with n added: by
	// joinsConvex when the group's nodes all come before n, else Convex.
	convexWith := func(n *ir.Node, id int) bool {
		if b := bounds[id]; b[1] < pos[n] {
			return joinsConvex(n, func(m *ir.Node) bool { k, ok := member[m]; return ok && k == id }, b[0], pos)
		}
		return Convex(append([]*ir.Node{n}, groups[id]...), pos)
	}
	grow := func(id, p int) { bounds[id] = [2]int{min(bounds[id][0], p), max(bounds[id][1], p)} }
	for _, n := range nodes {
		if !claimed(n) {
			continue
		}
		ids := producerGroups(n, member)
		joined := false
		if len(ids) > 0 {
			var convex bool
			if len(ids) == 1 {
				convex = convexWith(n, ids[0])
			} else if separated(n, ids) {
				spineRejects.Add(1)
			} else {
				all := []*ir.Node{n}
				for _, id := range ids {
					all = append(all, groups[id]...)
				}
				convex = Convex(all, pos)
			}
			if convex {
				into := ids[0]
				for _, id := range ids[1:] {
					for _, m := range groups[id] {
						member[m] = into
					}
					groups[into] = append(groups[into], groups[id]...)
					groups[id] = nil
					grow(into, bounds[id][0])
					grow(into, bounds[id][1])
					below[into], above[into] = max(below[into], below[id]), min(above[into], above[id])
				}
				groups[into] = append(groups[into], n)
				member[n] = into
				grow(into, pos[n])
				spread(into, n)
				joined = true
			} else {
				sort.SliceStable(ids, func(i, j int) bool { return len(groups[ids[i]]) > len(groups[ids[j]]) })
				for _, id := range ids {
					if convexWith(n, id) {
						groups[id] = append(groups[id], n)
						member[n] = id
						grow(id, pos[n])
						spread(id, n)
						joined = true
						break
					}
				}
			}
		}
		if !joined {
			member[n] = len(groups)
			groups = append(groups, []*ir.Node{n})
			bounds = append(bounds, [2]int{pos[n], pos[n]})
			below, above = append(below, desc[n]), append(above, anc[n])
		}
	}
	out := groups[:0]
	for _, g := range groups {
		if len(g) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// spineRejects counts the joins separated rejected (tests read it).
var spineRejects atomic.Int64

// groupSpine picks a chain of unclaimed nodes c0, c1, …, each a
// descendant of the one before (greedily, in the order of nodes: a node
// joins when it descends from the chain's last node), and returns for each
// node desc, the index of the latest chain node it descends from or is (-1
// when none), and anc, the index of the first chain node it reaches
// through its users (math.MaxInt when none). Descending from c_t means
// descending from every earlier chain node, reaching c_t reaching every
// later one; so when a node of one set reaches c_t and a node of another
// descends from c_t or later, a path leaves the first through an unclaimed
// node and enters the second, and no union of the two with more claimed
// nodes is convex.
func groupSpine(nodes []*ir.Node, pos map[*ir.Node]int, claimed func(*ir.Node) bool) (desc, anc map[*ir.Node]int) {
	desc, anc = make(map[*ir.Node]int, len(nodes)), make(map[*ir.Node]int, len(nodes))
	chain := 0
	isChain := map[*ir.Node]int{}
	for _, x := range nodes {
		if x.IsReturn() {
			continue
		}
		d := -1
		for _, v := range x.Operands() {
			if v.Def != nil {
				if e, ok := desc[v.Def]; ok {
					d = max(d, e)
				}
			}
		}
		if !claimed(x) && d == chain-1 {
			d = chain
			isChain[x] = chain
			chain++
		}
		desc[x] = d
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		x := nodes[i]
		if x.IsReturn() {
			continue
		}
		a := math.MaxInt
		for _, r := range x.Results {
			for _, u := range r.Uses() {
				if u.IsReturn() {
					continue
				}
				if pu, ok := pos[u]; !ok || pu <= pos[x] {
					continue
				}
				if t, ok := isChain[u]; ok {
					a = min(a, t)
				}
				if t, ok := anc[u]; ok {
					a = min(a, t)
				}
			}
		}
		anc[x] = a
	}
	return desc, anc
}

// InGraphOrder sorts each group's nodes by pos, then the groups by their
// first node, and returns groups.
func InGraphOrder(groups [][]*ir.Node, pos map[*ir.Node]int) [][]*ir.Node {
	for _, g := range groups {
		sort.Slice(g, func(i, j int) bool { return pos[g[i]] < pos[g[j]] })
	}
	sort.SliceStable(groups, func(i, j int) bool { return pos[groups[i][0]] < pos[groups[j][0]] })
	return groups
}

// producerGroups lists, sorted, the groups of n's operands' producers.
func producerGroups(n *ir.Node, member map[*ir.Node]int) []int {
	seen := map[int]bool{}
	var ids []int
	for _, v := range n.Operands() {
		if v.Def == nil {
			continue
		}
		if id, ok := member[v.Def]; ok && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	return ids
}

// Convex reports whether no path leaves set and re-enters it through a
// node outside it; pos numbers the nodes in graph order. The graph's
// return is not a node of any path.
func Convex(set []*ir.Node, pos map[*ir.Node]int) bool {
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

// joinsConvex reports whether a convex group (in reports its members),
// whose nodes all lie at positions from lo to before n, stays convex with n
// added. Only a path from the group to n through nodes outside it can
// break convexity (nothing leads from n back to earlier nodes), so it walks
// n's ancestors outside the group, back to position lo, looking for one
// that reads a member: the cost is that stretch of n's ancestry, not the
// group's size, which keeps Group near-linear on long chains.
func joinsConvex(n *ir.Node, in func(*ir.Node) bool, lo int, pos map[*ir.Node]int) bool {
	seen := map[*ir.Node]bool{}
	var work []*ir.Node
	for _, v := range n.Operands() {
		if d := v.Def; d != nil && !in(d) && !seen[d] && pos[d] > lo {
			seen[d] = true
			work = append(work, d)
		}
	}
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		for _, v := range x.Operands() {
			d := v.Def
			if d == nil || seen[d] {
				continue
			}
			if in(d) {
				return false
			}
			if pos[d] > lo {
				seen[d] = true
				work = append(work, d)
			}
		}
	}
	return true
}
