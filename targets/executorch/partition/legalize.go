package partition

import (
	"fmt"
	"slices"
	"sort"

	"github.com/fxport/fxport/ir"
)

// Legalize re-sorts g's nodes the way exir's to_backend leaves them after
// fusing a partition: create_submodule_from_nodes ends with torch.fx's
// legalize_graph, a Kahn topological sort over the whole graph. calls are
// the graph's delegate calls in the order they were outlined; the last one
// is the call just outlined.
//
// The sort it reproduces, in fxport's terms:
//   - the queue is a deque seeded with the nodes that depend on nothing, in
//     graph order: the placeholders (g.Inputs, in order), then the nodes
//     without operands (in graph order), then the get_attr of each earlier
//     delegate's lowered module (in outline order: each was first seeded
//     after every operand-less node and keeps that place);
//   - popping a node emits it and counts down its users, each once, in the
//     order FX records them (node.users: graph order, except that the
//     previous call and the one just outlined were appended last, in that
//     order); a user whose count reaches zero is appended, or prepended when
//     it is a prioritized op (symbolic arithmetic and comparisons,
//     sym_constrain_range(_for_size), _assert_async.msg, _assert_scalar,
//     scalar_tensor);
//   - a delegate call and every other node with several results are read
//     through getitem nodes (one per used result, in result order), which
//     FX queues like any other node; fxport has no such nodes, so they are
//     queue entries that emit nothing.
//
// It runs in time linear in the graph's size and fails, changing nothing,
// if g has a cycle.
func Legalize(g *ir.Graph, calls []*ir.Node) error {
	return NewLegalizer(g).Legalize(calls)
}

// Legalizer runs Legalize again and again on one graph, as a partitioner
// does after each outline, keeping between runs what the sort reads of each
// node: its distinct operands and results as dense value numbers, and
// whether it is prioritized. Reading every node's arguments and numbering
// its values on each run cost more than the sort itself. Nodes it has not
// seen are read at the next run; a node whose arguments change must be
// reported with Changed (Outlined does it for the users of a new delegate
// call's results). The order each run leaves is the one Legalize leaves.
type Legalizer struct {
	g     *ir.Graph
	vnum  map[*ir.Value]int32
	byID  []*legalNode // by node ID
	other map[*ir.Node]*legalNode
	gen   int32
	// opSeen[k] == stamp: value k is already among the operands being read.
	opSeen []int32
	stamp  int32
	// Buffers reused by each run.
	nodes, order []*ir.Node
	recs         []*legalNode
	userOrder    []int32
	inputs       []*ir.Value
	inputNums    []int32
	indeg        []int32
	userStart    []int32
	fill         []int32
	userList     []int32
}

// legalNode is what the sort keeps of one node.
type legalNode struct {
	n        *ir.Node
	ops, res []int32 // distinct operand values, result values
	prio     bool
	multi    bool  // read through getitems: several results or a delegate call
	stale    bool  // arguments changed since ops was read
	gen, idx int32 // the run that last saw it, its position in that run's input order
	pos      int32 // position in the graph: after the last run, or when seen
}

// NewLegalizer prepares to sort g; Position reports g's current order until
// the first Legalize.
func NewLegalizer(g *ir.Graph) *Legalizer {
	l := &Legalizer{g: g, vnum: map[*ir.Value]int32{}}
	i := int32(0)
	for n := g.First(); n != nil; n = n.Next() {
		l.node(n).pos = i
		i++
	}
	return l
}

// Changed tells l that n's arguments changed.
func (l *Legalizer) Changed(n *ir.Node) {
	if ln := l.lookup(n); ln != nil {
		ln.stale = true
	}
}

// Outlined tells l that call was just outlined: the users of its results
// had their arguments rewritten.
func (l *Legalizer) Outlined(call *ir.Node) {
	for _, r := range call.Results {
		for _, u := range r.Uses() {
			if !u.IsReturn() {
				l.Changed(u)
			}
		}
	}
}

// Position returns n's position in the order the last Legalize left (before
// the first, in the graph when l was made); -1 for a node l has not seen.
func (l *Legalizer) Position(n *ir.Node) int {
	if ln := l.lookup(n); ln != nil {
		return int(ln.pos)
	}
	return -1
}

func (l *Legalizer) lookup(n *ir.Node) *legalNode {
	if n.ID >= 0 && n.ID < len(l.byID) {
		if ln := l.byID[n.ID]; ln != nil && ln.n == n {
			return ln
		}
	}
	return l.other[n]
}

// node returns n's record, making or refreshing it as needed.
func (l *Legalizer) node(n *ir.Node) *legalNode {
	ln := l.lookup(n)
	if ln == nil {
		ln = &legalNode{n: n, stale: true}
		if n.ID >= 0 && n.ID < 8*(l.g.Len()+len(l.byID))+1024 {
			if n.ID >= len(l.byID) {
				l.byID = append(l.byID, make([]*legalNode, n.ID+1-len(l.byID)+len(l.byID)/2)...)
			}
			if l.byID[n.ID] == nil {
				l.byID[n.ID] = ln
			}
		}
		if l.byID == nil || n.ID < 0 || n.ID >= len(l.byID) || l.byID[n.ID] != ln {
			if l.other == nil {
				l.other = map[*ir.Node]*legalNode{}
			}
			l.other[n] = ln
		}
	}
	if ln.stale {
		ln.stale = false
		ln.ops = ln.ops[:0]
		// Dedup with a stamp per value: a delegate call can have tens of
		// thousands of operands.
		l.stamp++
		for _, v := range n.Operands() {
			k := l.num(v)
			if int(k) >= len(l.opSeen) {
				l.opSeen = append(l.opSeen, make([]int32, int(k)+1-len(l.opSeen)+len(l.opSeen)/2)...)
			}
			if l.opSeen[k] != l.stamp {
				l.opSeen[k] = l.stamp
				ln.ops = append(ln.ops, k)
			}
		}
		ln.res = ln.res[:0]
		for _, r := range n.Results {
			ln.res = append(ln.res, l.num(r))
		}
		ln.prio = prioritized[n.Op]
		ln.multi = len(n.Results) > 1 || n.Op == OpCallDelegate
	}
	return ln
}

// num is v's dense number.
func (l *Legalizer) num(v *ir.Value) int32 {
	k, ok := l.vnum[v]
	if !ok {
		k = int32(len(l.vnum))
		l.vnum[v] = k
	}
	return k
}

// grow returns b resized to n zeroed entries.
func grow(b []int32, n int) []int32 {
	if cap(b) < n {
		return make([]int32, n, n+n/4)
	}
	b = b[:n]
	clear(b)
	return b
}

// Legalize re-sorts l's graph as Legalize(g, calls) does.
func (l *Legalizer) Legalize(calls []*ir.Node) error {
	g := l.g
	l.gen++
	l.nodes = l.nodes[:0]
	for n := g.First(); n != nil; n = n.Next() {
		l.nodes = append(l.nodes, n)
	}
	nodes := l.nodes
	l.recs = slices.Grow(l.recs[:0], len(nodes))[:len(nodes)]
	recs := l.recs
	for i, n := range nodes {
		ln := l.node(n)
		ln.gen, ln.idx, ln.pos = l.gen, int32(i), int32(i)
		recs[i] = ln
	}
	nodeAt := func(n *ir.Node) int32 {
		if ln := l.lookup(n); ln != nil && ln.gen == l.gen {
			return ln.idx
		}
		return -1
	}
	var fresh, prev int32 = -1, -1
	if len(calls) > 0 {
		fresh = nodeAt(calls[len(calls)-1])
	}
	if len(calls) > 1 {
		prev = nodeAt(calls[len(calls)-2])
	}
	// FX's users order: graph order with prev, then fresh, moved last.
	userOrder := l.userOrder[:0]
	for i := range nodes {
		if int32(i) != prev && int32(i) != fresh {
			userOrder = append(userOrder, int32(i))
		}
	}
	if prev >= 0 {
		userOrder = append(userOrder, prev)
	}
	if fresh >= 0 && fresh != prev {
		userOrder = append(userOrder, fresh)
	}
	l.userOrder = userOrder
	if len(l.inputs) != len(g.Inputs) || !slices.Equal(l.inputs, g.Inputs) {
		l.inputs = append(l.inputs[:0], g.Inputs...)
		l.inputNums = l.inputNums[:0]
		for _, v := range g.Inputs {
			l.inputNums = append(l.inputNums, l.num(v))
		}
	}
	getattr := make([]bool, len(nodes))
	var freshNode *ir.Node
	if len(calls) > 0 {
		freshNode = calls[len(calls)-1]
	}
	for _, c := range calls {
		if c != freshNode {
			if k := nodeAt(c); k >= 0 {
				getattr[k] = true
			}
		}
	}
	// users[v] in FX's order, as one array: the users of value k are
	// userList[userStart[k]:userStart[k+1]]. Each node counts once per
	// distinct operand.
	nv := len(l.vnum)
	l.indeg = grow(l.indeg, len(nodes))
	l.userStart = grow(l.userStart, nv+1)
	indeg, userStart := l.indeg, l.userStart
	for _, i := range userOrder {
		for _, k := range recs[i].ops {
			userStart[k+1]++
		}
	}
	for k := 0; k < nv; k++ {
		userStart[k+1] += userStart[k]
	}
	if cap(l.userList) < int(userStart[nv]) {
		l.userList = make([]int32, userStart[nv], userStart[nv]+userStart[nv]/4)
	}
	userList := l.userList[:userStart[nv]]
	l.fill = append(l.fill[:0], userStart[:nv]...)
	fill := l.fill
	for _, i := range userOrder {
		ops := recs[i].ops
		for _, k := range ops {
			userList[fill[k]] = i
			fill[k]++
		}
		indeg[i] = int32(len(ops))
		if getattr[i] {
			indeg[i]++
		}
	}
	q := &deque{}
	for _, k := range l.inputNums {
		q.pushBack(entry{v: k, n: -1})
	}
	for i := range nodes {
		if indeg[i] == 0 {
			q.pushBack(entry{n: int32(i), v: -1})
		}
	}
	for _, c := range calls {
		if k := nodeAt(c); k >= 0 && getattr[k] {
			q.pushBack(entry{n: k, v: -1, attr: true})
		}
	}
	release := func(u int32) {
		indeg[u]--
		if indeg[u] != 0 {
			return
		}
		if recs[u].prio {
			q.pushFront(entry{n: u, v: -1})
		} else {
			q.pushBack(entry{n: u, v: -1})
		}
	}
	order := slices.Grow(l.order[:0], len(nodes))
	defer func() { l.order = order[:0] }()
	for !q.empty() {
		e := q.popFront()
		switch {
		case e.v >= 0: // a placeholder or a getitem
			for _, u := range userList[userStart[e.v]:userStart[e.v+1]] {
				release(u)
			}
		case e.attr: // the lowered module's get_attr
			release(e.n)
		default:
			ln := recs[e.n]
			order = append(order, ln.n)
			if ln.multi {
				for j, r := range ln.n.Results {
					if r.NumUses() > 0 {
						q.pushBack(entry{v: ln.res[j], n: -1})
					}
				}
				continue
			}
			for _, k := range ln.res {
				for _, u := range userList[userStart[k]:userStart[k+1]] {
					release(u)
				}
			}
		}
	}
	if len(order) != len(nodes) {
		return fmt.Errorf("graph %s: topological sort placed %d of %d nodes: the graph has a cycle", g.Name, len(order), len(nodes))
	}
	// Relink only the stretch out of place: after an outline most of the
	// order is unchanged (often all of it).
	first, last := 0, len(order)
	for first < last && order[first] == nodes[first] {
		first++
	}
	for last > first && order[last-1] == nodes[last-1] {
		last--
	}
	var at *ir.Node // the first node of the unchanged tail
	if last < len(order) {
		at = order[last]
	}
	for _, n := range order[first:last] {
		n.MoveBefore(at)
	}
	for i, n := range order[first:last] {
		recs[nodeAt(n)].pos = int32(first + i)
	}
	return nil
}

// prioritized are the ops legalize_graph queues first once ready.
var prioritized = map[ir.Op]bool{
	ir.OpOperatorAdd: true, ir.OpOperatorMul: true, ir.OpOperatorSub: true,
	ir.OpOperatorFloordiv: true, ir.OpOperatorTruediv: true, ir.OpOperatorMod: true,
	ir.OpOperatorLe: true, ir.OpOperatorLt: true, ir.OpOperatorGe: true,
	ir.OpOperatorGt: true, ir.OpOperatorEq: true, ir.OpOperatorNe: true,
	ir.OpAtenSymConstrainRange:        true,
	ir.OpAtenSymConstrainRangeForSize: true,
	ir.OpAten_AssertAsyncMsg:          true,
	ir.OpAten_AssertScalar:            true,
	ir.OpAtenScalarTensor:             true,
}

// entry is one queue element: a node, a value whose users it releases (a
// placeholder, or the getitem of one result), or a delegate's get_attr.
type entry struct {
	n, v int32 // a node's position, a value's number; -1 for none
	attr bool
}

// deque is a double-ended queue: pushFront entries leave first, newest
// first, then pushBack entries in order.
type deque struct {
	front []entry // a stack
	back  []entry
	head  int
}

func (d *deque) pushFront(e entry) { d.front = append(d.front, e) }
func (d *deque) pushBack(e entry)  { d.back = append(d.back, e) }
func (d *deque) empty() bool       { return len(d.front) == 0 && d.head == len(d.back) }

func (d *deque) popFront() entry {
	if k := len(d.front); k > 0 {
		e := d.front[k-1]
		d.front = d.front[:k-1]
		return e
	}
	e := d.back[d.head]
	d.head++
	return e
}

// LatestFirst orders groups (nodes of one graph, positions in pos) the way
// exir fuses them: torch.fx's capability partitioner numbers partitions
// walking the graph backward, so the group holding the latest node comes
// first. Ties keep their order.
func LatestFirst(groups [][]*ir.Node, pos map[*ir.Node]int) {
	last := make(map[int]int, len(groups))
	for i, g := range groups {
		last[i] = -1
		for _, n := range g {
			last[i] = max(last[i], pos[n])
		}
	}
	idx := make([]int, len(groups))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return last[idx[a]] > last[idx[b]] })
	sorted := make([][]*ir.Node, len(groups))
	for i, j := range idx {
		sorted[i] = groups[j]
	}
	copy(groups, sorted)
}

// SortByCurrentOrder puts g (nodes of graph gr) in gr's current order.
func SortByCurrentOrder(gr *ir.Graph, g []*ir.Node) {
	at := make(map[*ir.Node]int, gr.Len())
	for i, n := range gr.Nodes() {
		at[n] = i
	}
	sort.SliceStable(g, func(i, j int) bool { return at[g[i]] < at[g[j]] })
}
