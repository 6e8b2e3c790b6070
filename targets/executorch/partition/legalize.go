package partition

import (
	"fmt"
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
	nodes := g.Nodes()
	var fresh, prev *ir.Node
	if len(calls) > 0 {
		fresh = calls[len(calls)-1]
	}
	if len(calls) > 1 {
		prev = calls[len(calls)-2]
	}
	// FX's users order: graph order with prev, then fresh, moved last.
	userOrder := make([]*ir.Node, 0, len(nodes))
	for _, n := range nodes {
		if n != prev && n != fresh {
			userOrder = append(userOrder, n)
		}
	}
	if prev != nil {
		userOrder = append(userOrder, prev)
	}
	if fresh != nil {
		userOrder = append(userOrder, fresh)
	}
	// Dense indices: nodes by position in nodes, values by ID when every
	// operand and input belongs to g (IDs are unique within a graph), else
	// by first sight.
	nodeAt := denseNodes(nodes)
	ops := make([][]*ir.Value, len(userOrder))
	local, maxID := true, 0
	note := func(v *ir.Value) {
		if v.Graph != g {
			local = false
		}
		maxID = max(maxID, v.ID)
	}
	for _, v := range g.Inputs {
		note(v)
	}
	for i, n := range userOrder {
		ops[i] = n.Operands()
		for _, v := range ops[i] {
			note(v)
		}
		for _, r := range n.Results {
			note(r)
		}
	}
	var byValue map[*ir.Value]int32
	vid := func(v *ir.Value) int32 { return int32(v.ID) }
	nv := maxID + 1
	if !local || maxID > 4*(len(nodes)+len(g.Inputs))+1024 {
		byValue = make(map[*ir.Value]int32)
		vid = func(v *ir.Value) int32 {
			k, ok := byValue[v]
			if !ok {
				k = int32(len(byValue))
				byValue[v] = k
			}
			return k
		}
		for _, v := range g.Inputs {
			vid(v)
		}
		for i, n := range userOrder {
			for _, v := range ops[i] {
				vid(v)
			}
			for _, r := range n.Results {
				vid(r)
			}
		}
		nv = len(byValue)
	}
	getattr := make([]bool, len(nodes))
	for _, c := range calls {
		if c != fresh {
			if k := nodeAt(c); k >= 0 {
				getattr[k] = true
			}
		}
	}
	// users[v] in FX's order, as one array: the users of value k are
	// userList[userStart[k]:userStart[k+1]]. Each node counts once per
	// distinct operand.
	indeg := make([]int32, len(nodes))
	seen := make([]int32, nv) // 1 + the userOrder index that last saw the value
	userStart := make([]int32, nv+1)
	for i := range userOrder {
		for _, v := range ops[i] {
			if k := vid(v); seen[k] != int32(i)+1 {
				seen[k] = int32(i) + 1
				userStart[k+1]++
			}
		}
	}
	for k := 0; k < nv; k++ {
		userStart[k+1] += userStart[k]
	}
	userList := make([]*ir.Node, userStart[nv])
	fill := append([]int32(nil), userStart[:nv]...)
	clear(seen)
	for i, n := range userOrder {
		ni := nodeAt(n)
		for _, v := range ops[i] {
			if k := vid(v); seen[k] != int32(i)+1 {
				seen[k] = int32(i) + 1
				userList[fill[k]] = n
				fill[k]++
				indeg[ni]++
			}
		}
		if getattr[ni] {
			indeg[ni]++
		}
	}
	users := func(v *ir.Value) []*ir.Node {
		k := vid(v)
		return userList[userStart[k]:userStart[k+1]]
	}
	q := &deque{}
	for _, v := range g.Inputs {
		q.pushBack(entry{v: v})
	}
	for i, n := range nodes {
		if indeg[i] == 0 {
			q.pushBack(entry{n: n})
		}
	}
	for _, c := range calls {
		if k := nodeAt(c); k >= 0 && getattr[k] {
			q.pushBack(entry{n: c, attr: true})
		}
	}
	release := func(u *ir.Node) {
		k := nodeAt(u)
		indeg[k]--
		if indeg[k] != 0 {
			return
		}
		if prioritized[u.Op] {
			q.pushFront(entry{n: u})
		} else {
			q.pushBack(entry{n: u})
		}
	}
	order := make([]*ir.Node, 0, len(nodes))
	for !q.empty() {
		e := q.popFront()
		switch {
		case e.v != nil: // a placeholder or a getitem
			for _, u := range users(e.v) {
				release(u)
			}
		case e.attr: // the lowered module's get_attr
			release(e.n)
		default:
			order = append(order, e.n)
			if len(e.n.Results) > 1 || e.n.Op == OpCallDelegate {
				for _, r := range e.n.Results {
					if r.NumUses() > 0 {
						q.pushBack(entry{v: r})
					}
				}
				continue
			}
			for _, r := range e.n.Results {
				for _, u := range users(r) {
					release(u)
				}
			}
		}
	}
	if len(order) != len(nodes) {
		return fmt.Errorf("graph %s: topological sort placed %d of %d nodes: the graph has a cycle", g.Name, len(order), len(nodes))
	}
	for _, n := range order {
		n.MoveBefore(nil)
	}
	return nil
}

// denseNodes returns the position of a node in nodes (-1 for others):
// through a table by node ID when the IDs are distinct and small, else a
// map.
func denseNodes(nodes []*ir.Node) func(*ir.Node) int32 {
	maxID := 0
	for _, n := range nodes {
		maxID = max(maxID, n.ID)
	}
	if maxID <= 8*len(nodes)+1024 {
		at := make([]int32, maxID+1)
		distinct := true
		for i, n := range nodes {
			if n.ID < 0 || at[n.ID] != 0 {
				distinct = false
				break
			}
			at[n.ID] = int32(i) + 1
		}
		if distinct {
			return func(n *ir.Node) int32 {
				if n.ID < 0 || n.ID >= len(at) || at[n.ID] == 0 || nodes[at[n.ID]-1] != n {
					return -1
				}
				return at[n.ID] - 1
			}
		}
	}
	m := make(map[*ir.Node]int32, len(nodes))
	for i, n := range nodes {
		m[n] = int32(i)
	}
	return func(n *ir.Node) int32 {
		if k, ok := m[n]; ok {
			return k
		}
		return -1
	}
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
	n    *ir.Node
	v    *ir.Value
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
