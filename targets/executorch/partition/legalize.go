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
// does after each outline, and gives each run's result without sorting the
// whole graph again when it can.
//
// It keeps what the sort reads of each node (its distinct operands and
// results as dense value numbers, whether it is prioritized) and the
// sequence of queue entries the last run popped: placeholders, nodes,
// getitems, get_attrs, each with the entry that released it and a label
// that increases along the sequence. For a FIFO queue that sequence is the
// only one in which the seeds come first, in seed order, every other entry
// comes after the entry that releases it (the last of its operands'
// entries), and the entries pushed to the back of the queue are sorted by
// (the position of the entry that releases it, its rank in that entry's
// users); a prioritized entry comes right where the cascade of the entry
// that released it puts it. An outline changes that condition only around
// what it touched (the group, the call and its getitems, the nodes moved
// after the call, the users of its results, the previous call's new
// get_attr, the nodes whose order the last run changed and so their rank
// among users); Legalize checks it there. Where it holds nothing moves;
// where it does not, Legalize runs the Kahn sort from the last entry
// before the violation whose queue state the sequence gives, until the
// popped set and the queue are those of the sequence again, and splices
// the result in. The order each run leaves is the one the whole-graph sort
// (Legalize) leaves; a run it cannot do that way (the first, one after
// Changed, a change to the seeds) sorts the whole graph.
//
// Nodes it has not seen are read at the next run; a node whose arguments
// change must be reported with Changed, an outline with Outlined.
type Legalizer struct {
	g     *ir.Graph
	vnum  map[*ir.Value]int32
	vals  []*ir.Value  // by value number
	byID  []*legalNode // by node ID
	other map[*ir.Node]*legalNode
	gen   int32
	// opSeen[k] == stamp: value k is already among the operands being read.
	opSeen []int32
	stamp  int32
	// Buffers reused by each whole-graph sort.
	nodes, order []*ir.Node
	recs         []*legalNode
	userOrder    []int32
	inputs       []*ir.Value // g.Inputs when last read
	inputsAt     **ir.Value  // &g.Inputs[0] then: unchanged inputs compare in O(1)
	inputNums    []int32
	indeg        []int32
	userStart    []int32
	fill         []int32
	userList     []int32

	// The entry sequence the last run popped (legalize_inc.go).
	ents       []qent
	head, tail int32
	nodeEnts   int     // node entries in the sequence
	prov       []int32 // by value number: the entry that releases its users
	lastSeed   int32   // the last seed entry, -1 when unknown
	ncalls     int     // len(calls) of the last run
	full       bool    // the next run sorts the whole graph
	pendCall   *ir.Node
	pendGroup  []*ir.Node
	pendN      int // Outlined calls since the last run
	suspects   []*legalNode
	prevN      *ir.Node // calls[len-2] of the current run: second last among users
	freshN     *ir.Node // calls[len-1]: last among users
	run, win   int32
	incScratch // buffers of the incremental run
	// Stats counts what the runs did (tests and benchmarks read it).
	Stats LegalizerStats
}

// LegalizerStats counts the work of a Legalizer's runs.
type LegalizerStats struct {
	Full      int // runs that sorted the whole graph
	Unchanged int // incremental runs that moved nothing
	Windows   int // stretches re-sorted by incremental runs
	Popped    int // entries those stretches popped
	Relabels  int // times the labels were spread out again
}

// legalNode is what the sort keeps of one node.
type legalNode struct {
	n        *ir.Node
	ops, res []int32 // distinct operand values, result values
	prio     bool
	multi    bool    // read through getitems: several results or a delegate call
	stale    bool    // arguments changed since ops was read
	gen, idx int32   // the run that last saw it, its position in that run's input order
	pos      int32   // position in the graph when seen (before the first run)
	ent      int32   // its entry in the sequence, -1 for none
	items    []int32 // multi: the getitem entry of each result, -1 for an unused one
	attr     int32   // a delegate call's get_attr entry, -1 for none
	callIdx  int32   // a delegate call's place in the outline order
	suspect  int32   // run stamp: already among the suspects
}

// NewLegalizer prepares to sort g; Position reports g's current order until
// the first Legalize.
func NewLegalizer(g *ir.Graph) *Legalizer {
	l := &Legalizer{g: g, vnum: map[*ir.Value]int32{}, full: true, lastSeed: -1, head: -1, tail: -1}
	i := int32(0)
	for n := g.First(); n != nil; n = n.Next() {
		l.node(n).pos = i
		i++
	}
	return l
}

// Changed tells l that n's arguments changed; the next run sorts the whole
// graph.
func (l *Legalizer) Changed(n *ir.Node) {
	if ln := l.lookup(n); ln != nil {
		ln.stale = true
	}
	l.full = true
}

// Outlined tells l that call was just made by Outline from group (its
// members, now erased): the users of call's results had their arguments
// rewritten, the nodes between the group's members that depend on it were
// moved after call. A nil group makes the next run sort the whole graph.
func (l *Legalizer) Outlined(call *ir.Node, group []*ir.Node) {
	for _, r := range call.Results {
		for _, u := range r.Uses() {
			if !u.IsReturn() {
				if ln := l.lookup(u); ln != nil {
					ln.stale = true
				}
			}
		}
	}
	l.pendN++
	l.pendCall = call
	l.pendGroup = append(l.pendGroup[:0], group...)
	if len(group) == 0 {
		l.full = true
	}
}

// Position returns a number that increases along the order the last
// Legalize left (before the first, along the graph when l was made); -1
// for a node l has not seen.
func (l *Legalizer) Position(n *ir.Node) int {
	ln := l.lookup(n)
	if ln == nil {
		return -1
	}
	if len(l.ents) == 0 {
		return int(ln.pos)
	}
	if ln.ent < 0 || !l.ents[ln.ent].inE {
		return -1
	}
	return int(l.ents[ln.ent].label)
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
		ln = &legalNode{n: n, stale: true, ent: -1, attr: -1, callIdx: -1}
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
		l.vals = append(l.vals, v)
		l.prov = append(l.prov, -1)
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
	incremental := !l.full && len(l.ents) > 0 && l.pendN == 1 && len(calls) == l.ncalls+1 &&
		calls[len(calls)-1] == l.pendCall && l.sameInputs()
	if incremental && l.legalizeIncremental(calls) {
		l.pendN, l.pendCall, l.pendGroup = 0, nil, l.pendGroup[:0]
		l.ncalls = len(calls)
		return nil
	}
	l.pendN, l.pendCall, l.pendGroup = 0, nil, l.pendGroup[:0]
	if err := l.sortAll(calls); err != nil {
		l.full = true
		l.ents = l.ents[:0]
		return err
	}
	l.full = false
	l.ncalls = len(calls)
	return nil
}

// sameInputs reports whether g.Inputs is still what the last whole-graph
// sort read: the same slice (compared in O(1)), or equal to it.
func (l *Legalizer) sameInputs() bool {
	in := l.g.Inputs
	if len(in) != len(l.inputs) {
		return false
	}
	if len(in) == 0 || &in[0] == l.inputsAt {
		return true
	}
	if !slices.Equal(in, l.inputs) {
		return false
	}
	l.inputsAt = &in[0]
	return true
}

// sortAll is the Kahn sort over the whole graph; it records the popped
// entry sequence for the incremental runs.
func (l *Legalizer) sortAll(calls []*ir.Node) error {
	g := l.g
	l.Stats.Full++
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
		ln.ent, ln.attr, ln.callIdx = -1, -1, -1
		if ln.multi {
			ln.items = ln.items[:0]
			for range ln.res {
				ln.items = append(ln.items, -1)
			}
		}
		recs[i] = ln
	}
	nodeAt := func(n *ir.Node) int32 {
		if ln := l.lookup(n); ln != nil && ln.gen == l.gen {
			return ln.idx
		}
		return -1
	}
	var fresh, prev int32 = -1, -1
	l.prevN, l.freshN = nil, nil
	if len(calls) > 0 {
		fresh = nodeAt(calls[len(calls)-1])
		l.freshN = calls[len(calls)-1]
	}
	if len(calls) > 1 {
		prev = nodeAt(calls[len(calls)-2])
		l.prevN = calls[len(calls)-2]
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
		l.inputsAt = nil
		if len(g.Inputs) > 0 {
			l.inputsAt = &g.Inputs[0]
		}
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
	for ci, c := range calls {
		if k := nodeAt(c); k >= 0 {
			recs[k].callIdx = int32(ci)
			if c != freshNode {
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
	for i, k := range l.inputNums {
		q.pushBack(qitem{kind: kInput, v: k, n: -1, res: int32(i), r: -1})
	}
	for i := range nodes {
		if indeg[i] == 0 {
			q.pushBack(qitem{kind: kNode, n: int32(i), v: -1, r: -1})
		}
	}
	for _, c := range calls {
		if k := nodeAt(c); k >= 0 && getattr[k] {
			q.pushBack(qitem{kind: kAttr, n: k, v: -1, r: -1})
		}
	}
	for i := range l.prov {
		l.prov[i] = -1
	}
	ents := l.ents[:0]
	var at int32 // the entry being popped: the releaser of what it pushes
	release := func(u int32) {
		indeg[u]--
		if indeg[u] != 0 {
			return
		}
		if recs[u].prio {
			q.pushFront(qitem{kind: kNode, n: u, v: -1, r: at, front: true})
		} else {
			q.pushBack(qitem{kind: kNode, n: u, v: -1, r: at})
		}
	}
	order := slices.Grow(l.order[:0], len(nodes))
	defer func() { l.order = order[:0] }()
	for !q.empty() {
		e := q.popFront()
		at = int32(len(ents))
		ents = append(ents, qent{r: e.r, kind: e.kind, seed: e.r < 0, front: e.front, res: e.res, inE: true})
		switch e.kind {
		case kInput, kItem: // a placeholder or a getitem
			if e.kind == kItem {
				ents[at].ln = recs[e.n]
				recs[e.n].items[e.res] = at
			}
			l.prov[e.v] = at
			for _, u := range userList[userStart[e.v]:userStart[e.v+1]] {
				release(u)
			}
		case kAttr: // the lowered module's get_attr
			ents[at].ln = recs[e.n]
			recs[e.n].attr = at
			release(e.n)
		default:
			ln := recs[e.n]
			ents[at].ln = ln
			ln.ent = at
			order = append(order, ln.n)
			if ln.multi {
				for j, r := range ln.n.Results {
					if r.NumUses() > 0 {
						q.pushBack(qitem{kind: kItem, v: ln.res[j], n: e.n, res: int32(j), r: at})
					}
				}
				continue
			}
			for _, k := range ln.res {
				l.prov[k] = at
				for _, u := range userList[userStart[k]:userStart[k+1]] {
					release(u)
				}
			}
		}
	}
	l.ents = ents
	if len(order) != len(nodes) {
		return fmt.Errorf("graph %s: topological sort placed %d of %d nodes: the graph has a cycle", g.Name, len(order), len(nodes))
	}
	l.head, l.tail, l.lastSeed = -1, -1, -1
	for i := range ents {
		e := &ents[i]
		e.prev, e.next = int32(i)-1, int32(i)+1
		e.label = int64(i) << labelShift
		if e.seed {
			l.lastSeed = int32(i)
		}
	}
	if len(ents) > 0 {
		ents[len(ents)-1].next = -1
		l.head, l.tail = 0, int32(len(ents)-1)
	}
	l.nodeEnts = len(nodes)
	// Relink only the stretch out of place: after an outline most of the
	// order is unchanged (often all of it). The nodes in it changed their
	// rank among the users of their operands: the next run checks them.
	first, last := 0, len(order)
	for first < last && order[first] == nodes[first] {
		first++
	}
	for last > first && order[last-1] == nodes[last-1] {
		last--
	}
	var at2 *ir.Node // the first node of the unchanged tail
	if last < len(order) {
		at2 = order[last]
	}
	l.run++
	l.suspects = l.suspects[:0]
	for _, n := range order[first:last] {
		n.MoveBefore(at2)
		l.suspect(l.lookup(n))
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

// Entry kinds: what one queue element is.
const (
	kNode  uint8 = iota
	kInput       // a placeholder: releases the users of a graph input
	kItem        // the getitem of one result of a node read through getitems
	kAttr        // a delegate's lowered-module get_attr: releases its call
)

// qitem is one element of the whole-graph sort's queue.
type qitem struct {
	n, v  int32 // a node's position, a value's number; -1 for none
	res   int32 // kItem: the result's index; kInput: the input's index
	r     int32 // the entry that pushed it, -1 for a seed
	kind  uint8
	front bool // pushed to the front: a prioritized node
}

// deque is a double-ended queue: pushFront entries leave first, newest
// first, then pushBack entries in order.
type deque struct {
	front []qitem // a stack
	back  []qitem
	head  int
}

func (d *deque) pushFront(e qitem) { d.front = append(d.front, e) }
func (d *deque) pushBack(e qitem)  { d.back = append(d.back, e) }
func (d *deque) empty() bool       { return len(d.front) == 0 && d.head == len(d.back) }

func (d *deque) popFront() qitem {
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
