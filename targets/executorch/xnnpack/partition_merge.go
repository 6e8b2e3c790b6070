package xnnpack

import (
	"math"
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
// treats every other partition as one node (merger.convex): two unrelated
// nodes of one partition are a path once it is a single delegate call.
//
// The result is the one of trying every pair in that order (the reference
// in partition_merge_ref_test.go), found in near-linear time on the
// layered graphs models are: pairs that a path through an undelegated cut
// node separates are skipped without a walk (merger.cuts), and each walk
// stops at the undelegated nodes past the pair that no other partition
// straddles (merger.spans) and at every node past the pair's horizon, the
// end of the partitions that overlap it (merger.horizon).
func mergeUnrelated(groups [][]*ir.Node, pos map[*ir.Node]int) [][]*ir.Node {
	sortByFirst(groups, pos)
	return newMerger(groups, pos).run()
}

// sortByFirst orders groups by their first node (stable).
func sortByFirst(groups [][]*ir.Node, pos map[*ir.Node]int) {
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
}

// run merges m's partitions (sorted by first node) as mergeUnrelated
// describes and returns the survivors.
func (m *merger) run() [][]*ir.Node {
	groups := m.groups
	for i := range groups {
		if m.dead[i] {
			continue
		}
		// Only the partitions that descend from no spine node i reaches
		// can merge with it (merger.spineSeparates): the min tree of
		// below finds the next one.
		for j := m.nextBelow(i+1, m.above[i]); j >= 0; j = m.nextBelow(j+1, m.above[i]) {
			if m.first[j] > m.cut[i] {
				// j and every later partition have a node after a cut
				// node that partition i reaches: all are on a path that
				// leaves i and comes back through the cut.
				break
			}
			if max(m.last[i], m.last[j]) > min(m.cut[i], m.cut[j]) || m.spineSeparates(i, j) || !m.convex(i, j) {
				continue
			}
			m.merge(i, j)
		}
	}
	out := groups[:0]
	for k, g := range groups {
		if !m.dead[k] {
			out = append(out, g)
		}
	}
	return out
}

// merger holds what mergeUnrelated's checks read, indexed by node position
// (pos) and by partition index.
type merger struct {
	groups [][]*ir.Node
	pos    map[*ir.Node]int
	// owner is the partition of the node at each position, -1 for nodes no
	// partition holds.
	owner []int
	// first and last are each partition's first and last node position; cut
	// is the position of the first cut node that one of its nodes reaches
	// (math.MaxInt when none): every node after a cut node depends on it.
	first, last, cut []int
	dead             []bool
	// spans counts, at each position, the partitions whose first node is
	// before it and last node after it (a Fenwick tree of range additions).
	spans []int
	// seen and seenGroup mark the current walk's nodes and contracted
	// partitions with stamp.
	seen, seenGroup []int
	stamp           int
	work            []*ir.Node
	// below and above are each partition's spine indices (merger.spine):
	// the latest spine node one of its nodes descends from (-1 when
	// none), and the first spine node one of its nodes reaches through
	// its users (math.MaxInt when none).
	below, above []int
	// walked counts the nodes convex's walks went on from; noHorizon
	// turns merger.horizon's pruning off (tests compare the two).
	walked    int
	noHorizon bool
	// belows is a min tree over the partitions of below, math.MaxInt
	// for a merged-away one; size is its number of leaves.
	belows []int
	size   int
	// lasts is a max tree over the partitions (in first-node order) of
	// their last node position, -1 for a merged-away one.
	lasts []int
}

func newMerger(groups [][]*ir.Node, pos map[*ir.Node]int) *merger {
	size := 0
	for _, p := range pos {
		size = max(size, p+1)
	}
	m := &merger{
		groups: groups, pos: pos,
		owner: make([]int, size),
		first: make([]int, len(groups)), last: make([]int, len(groups)), cut: make([]int, len(groups)),
		dead:  make([]bool, len(groups)),
		spans: make([]int, size+2),
		seen:  make([]int, size), seenGroup: make([]int, len(groups)),
	}
	byPos := make([]*ir.Node, size)
	for n, p := range pos {
		byPos[p] = n
		m.owner[p] = -1
	}
	for k, g := range groups {
		m.first[k], m.last[k] = math.MaxInt, -1
		for _, n := range g {
			p := pos[n]
			m.owner[p] = k
			m.first[k], m.last[k] = min(m.first[k], p), max(m.last[k], p)
		}
		m.addSpan(m.first[k], m.last[k], 1)
	}
	m.lasts = make([]int, 2*len(groups))
	for k := range groups {
		m.setLast(k, m.last[k])
	}
	reach := m.cuts(byPos)
	for k, g := range groups {
		m.cut[k] = math.MaxInt
		for _, n := range g {
			m.cut[k] = min(m.cut[k], reach[pos[n]])
		}
	}
	desc, anc := m.spine(byPos)
	m.below, m.above = make([]int, len(groups)), make([]int, len(groups))
	m.size = 1
	for m.size < len(groups) {
		m.size *= 2
	}
	m.belows = make([]int, 2*m.size)
	for k := range m.belows {
		m.belows[k] = math.MaxInt
	}
	for k, g := range groups {
		m.below[k], m.above[k] = -1, math.MaxInt
		for _, n := range g {
			m.below[k] = max(m.below[k], desc[pos[n]])
			m.above[k] = min(m.above[k], anc[pos[n]])
		}
		m.setBelow(k, m.below[k])
	}
	return m
}

// spine picks a chain of nodes no partition holds, c0, c1, …, each a
// descendant of the one before (greedily, in graph order: a node joins when
// it descends from the chain's last node), and returns for each position
// desc, the index of the latest chain node the node there descends from or
// is (-1 when none), and anc, the index of the first chain node it reaches
// through its users (math.MaxInt when none). Along a chain, descending from
// c_t means descending from every earlier chain node, and reaching c_t
// means reaching every later one.
//
// Unlike a cut node (merger.cuts), a chain node need not be an ancestor of
// every later node: weight transposes, constants and masks built from the
// inputs alone, which a transformer block has plenty of, do not break it.
func (m *merger) spine(byPos []*ir.Node) (desc, anc []int) {
	n := len(byPos)
	desc, anc = make([]int, n), make([]int, n)
	chain := []int{} // positions of the chain nodes
	for p := 0; p < n; p++ {
		desc[p] = -1
		x := byPos[p]
		if x == nil || x.IsReturn() {
			continue
		}
		for _, v := range x.Operands() {
			if v.Def != nil {
				if q, ok := m.pos[v.Def]; ok && q < p {
					desc[p] = max(desc[p], desc[q])
				}
			}
		}
		if m.owner[p] < 0 && desc[p] == len(chain)-1 {
			desc[p] = len(chain)
			chain = append(chain, p)
		}
	}
	isChain := make([]int, n)
	for p := range isChain {
		isChain[p] = -1
	}
	for t, p := range chain {
		isChain[p] = t
	}
	for p := n - 1; p >= 0; p-- {
		anc[p] = math.MaxInt
		x := byPos[p]
		if x == nil {
			continue
		}
		m.users(x, func(u *ir.Node) bool {
			if q, ok := m.pos[u]; ok && q > p {
				if isChain[q] >= 0 {
					anc[p] = min(anc[p], isChain[q])
				}
				anc[p] = min(anc[p], anc[q])
			}
			return false
		})
	}
	return desc, anc
}

// spineSeparates reports a path from partition i or j through a chain
// node (merger.spine) to the other: one reaches chain node c_t, and the
// other has a node that descends from c_t or a later chain node. That
// path leaves the pair and comes back, so the pair cannot merge; the check
// costs O(1), where convex walks the nodes between the two.
func (m *merger) spineSeparates(i, j int) bool {
	return m.below[j] >= m.above[i] || m.below[i] >= m.above[j]
}

// cuts returns, for each position, the first cut node that the node there
// reaches through its users (math.MaxInt when none). A cut node is one no
// partition holds such that every later node has an operand defined at or
// after it, so that by induction every later node depends on it: a node
// before it that reaches it and a node after it are on a path through it.
func (m *merger) cuts(byPos []*ir.Node) []int {
	n := len(byPos)
	// lastDep[p] is the position of the last node that defines an operand
	// of the node at p (-1 when none); minAfter is its minimum over the
	// nodes after p.
	isCut := make([]bool, n)
	minAfter := math.MaxInt
	for p := n - 1; p >= 0; p-- {
		x := byPos[p]
		if x == nil || x.IsReturn() {
			continue
		}
		isCut[p] = m.owner[p] < 0 && minAfter >= p
		dep := -1
		for _, v := range x.Operands() {
			if v.Def != nil {
				if q, ok := m.pos[v.Def]; ok {
					dep = max(dep, q)
				}
			}
		}
		minAfter = min(minAfter, dep)
	}
	reach := make([]int, n)
	for p := n - 1; p >= 0; p-- {
		reach[p] = math.MaxInt
		x := byPos[p]
		if x == nil {
			continue
		}
		m.users(x, func(u *ir.Node) bool {
			if q, ok := m.pos[u]; ok {
				if isCut[q] {
					reach[p] = min(reach[p], q)
				}
				reach[p] = min(reach[p], reach[q])
			}
			return false
		})
	}
	return reach
}

// users calls f on each user of n's results, the return excluded, until f
// returns true; it reports whether f did.
func (m *merger) users(n *ir.Node, f func(*ir.Node) bool) bool {
	for _, r := range n.Results {
		for _, u := range r.Uses() {
			if !u.IsReturn() && f(u) {
				return true
			}
		}
	}
	return false
}

// addSpan adds d to the span count of the positions strictly between lo
// and hi.
func (m *merger) addSpan(lo, hi int, d int) {
	if lo+1 > hi-1 {
		return
	}
	for i := lo + 2; i < len(m.spans); i += i & -i { // Fenwick index = position + 1
		m.spans[i] += d
	}
	for i := hi + 1; i < len(m.spans); i += i & -i {
		m.spans[i] -= d
	}
}

// straddled reports whether a partition other than i and j has nodes
// before and after position p.
func (m *merger) straddled(p, i, j int) bool {
	c := 0
	for x := p + 1; x > 0; x -= x & -x {
		c += m.spans[x]
	}
	for _, k := range [2]int{i, j} {
		if m.first[k] < p && p < m.last[k] {
			c--
		}
	}
	return c > 0
}

// merge moves partition j into partition i.
func (m *merger) merge(i, j int) {
	m.groups[i] = append(append([]*ir.Node{}, m.groups[i]...), m.groups[j]...)
	for _, n := range m.groups[j] {
		m.owner[m.pos[n]] = i
	}
	m.addSpan(m.first[i], m.last[i], -1)
	m.addSpan(m.first[j], m.last[j], -1)
	m.first[i], m.last[i], m.cut[i] = min(m.first[i], m.first[j]), max(m.last[i], m.last[j]), min(m.cut[i], m.cut[j])
	m.below[i], m.above[i] = max(m.below[i], m.below[j]), min(m.above[i], m.above[j])
	m.addSpan(m.first[i], m.last[i], 1)
	m.dead[j] = true
	m.setLast(i, m.last[i])
	m.setLast(j, -1)
	m.setBelow(i, m.below[i])
	m.setBelow(j, math.MaxInt)
}

// setBelow sets partition k's leaf in the min tree of below.
func (m *merger) setBelow(k, v int) {
	k += m.size
	m.belows[k] = v
	for k > 1 {
		k /= 2
		m.belows[k] = min(m.belows[2*k], m.belows[2*k+1])
	}
}

// nextBelow is the first partition from lo on whose below is less than
// x (merged-away ones have none), -1 when none.
func (m *merger) nextBelow(lo, x int) int {
	if lo >= m.size {
		return -1
	}
	// Climb from lo's leaf while the subtrees to the right of the path
	// hold nothing below x, then descend into the first that does.
	k := lo + m.size
	if m.belows[k] < x {
		return lo
	}
	for {
		for k&1 == 1 { // a right child: its parent's right part is done
			k /= 2
			if k == 0 {
				return -1
			}
		}
		if k == 1 {
			return -1
		}
		k++ // the right sibling
		if m.belows[k] < x {
			break
		}
	}
	for k < m.size {
		if m.belows[2*k] < x {
			k = 2 * k
		} else {
			k = 2*k + 1
		}
	}
	return k - m.size
}

// setLast sets partition k's entry in the max tree of last positions.
func (m *merger) setLast(k, v int) {
	n := len(m.groups)
	k += n
	m.lasts[k] = v
	for k > 1 {
		k /= 2
		m.lasts[k] = max(m.lasts[2*k], m.lasts[2*k+1])
	}
}

// maxLast is the largest last position of the partitions lo..hi (in
// first-node order); -1 when none.
func (m *merger) maxLast(lo, hi int) int {
	n := len(m.groups)
	best := -1
	for lo, hi = lo+n, hi+n+1; lo < hi; lo, hi = lo/2, hi/2 {
		if lo&1 == 1 {
			best = max(best, m.lasts[lo])
			lo++
		}
		if hi&1 == 1 {
			hi--
			best = max(best, m.lasts[hi])
		}
	}
	return best
}

// horizon is the smallest position h at or after hi such that every
// partition other than i and j with a node at or before h has all its
// nodes at or before it. A path that reaches a node past h never comes
// back to h or before: its edges go forward, and entering a partition
// reaches only nodes of partitions that lie past h as well. So no node
// past h leads back into i or j.
func (m *merger) horizon(i, j, hi int) int {
	h := hi
	for {
		// The partitions whose first node is at or before h: m.first is
		// sorted, and merging keeps the absorbing partition's first.
		r := sort.Search(len(m.groups), func(k int) bool { return m.first[k] > h }) - 1
		mx := -1
		for _, rg := range [3][2]int{{0, min(i-1, r)}, {i + 1, min(j-1, r)}, {j + 1, r}} {
			if rg[0] <= rg[1] {
				mx = max(mx, m.maxLast(rg[0], rg[1]))
			}
		}
		if mx <= h {
			return h
		}
		h = mx
	}
}

// convex reports whether no path leaves partitions i and j together and
// re-enters them through nodes outside them, where reaching any node of
// another partition reaches all of that partition's nodes (its delegate
// call runs once all its operands are ready). The walk does not go on
// from a node that no partition holds, placed after the pair's last node,
// that no other partition straddles: every node it reaches, contracted
// partitions included, comes after it; nor from any node past the
// pair's horizon (merger.horizon).
func (m *merger) convex(i, j int) bool {
	m.stamp++
	hi := max(m.last[i], m.last[j])
	hz := math.MaxInt
	if !m.noHorizon {
		hz = m.horizon(i, j, hi)
	}
	in := func(n *ir.Node) bool {
		o := m.owner[m.pos[n]]
		return o == i || o == j
	}
	var visit func(u *ir.Node)
	visit = func(u *ir.Node) {
		p := m.pos[u]
		if m.seen[p] == m.stamp {
			return
		}
		m.seen[p] = m.stamp
		k := m.owner[p]
		if p > hz || k < 0 && p > hi && !m.straddled(p, i, j) {
			return
		}
		m.work = append(m.work, u)
		m.walked++
		if k >= 0 && m.seenGroup[k] != m.stamp {
			m.seenGroup[k] = m.stamp
			for _, n := range m.groups[k] {
				visit(n)
			}
		}
	}
	m.work = m.work[:0]
	for _, k := range [2]int{i, j} {
		for _, n := range m.groups[k] {
			m.users(n, func(u *ir.Node) bool {
				if !in(u) {
					visit(u)
				}
				return false
			})
		}
	}
	for len(m.work) > 0 {
		u := m.work[len(m.work)-1]
		m.work = m.work[:len(m.work)-1]
		if m.users(u, in) {
			return false
		}
		m.users(u, func(w *ir.Node) bool {
			visit(w)
			return false
		})
	}
	return true
}
