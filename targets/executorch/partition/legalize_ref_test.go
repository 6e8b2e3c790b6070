package partition

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

// legalizeRef is Legalize before Legalizer: every run read each node's
// operands and numbered its values afresh. TestLegalizerMatchesRef
// compares the two on random graphs and outline sequences.
func legalizeRef(g *ir.Graph, calls []*ir.Node) error {
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
	nodeAt := denseNodesRef(nodes)
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
	q := &refDeque{}
	for _, v := range g.Inputs {
		q.pushBack(refEntry{v: v})
	}
	for i, n := range nodes {
		if indeg[i] == 0 {
			q.pushBack(refEntry{n: n})
		}
	}
	for _, c := range calls {
		if k := nodeAt(c); k >= 0 && getattr[k] {
			q.pushBack(refEntry{n: c, attr: true})
		}
	}
	release := func(u *ir.Node) {
		k := nodeAt(u)
		indeg[k]--
		if indeg[k] != 0 {
			return
		}
		if prioritized[u.Op] {
			q.pushFront(refEntry{n: u})
		} else {
			q.pushBack(refEntry{n: u})
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
						q.pushBack(refEntry{v: r})
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

// denseNodesRef returns the position of a node in nodes (-1 for others):
// through a table by node ID when the IDs are distinct and small, else a
// map.
func denseNodesRef(nodes []*ir.Node) func(*ir.Node) int32 {
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

// refEntry is one queue element: a node, a value whose users it releases (a
// placeholder, or the getitem of one result), or a delegate's get_attr.
type refEntry struct {
	n    *ir.Node
	v    *ir.Value
	attr bool
}

// refDeque is a double-ended queue: pushFront entries leave first, newest
// first, then pushBack entries in order.
type refDeque struct {
	front []refEntry // a stack
	back  []refEntry
	head  int
}

func (d *refDeque) pushFront(e refEntry) { d.front = append(d.front, e) }
func (d *refDeque) pushBack(e refEntry)  { d.back = append(d.back, e) }
func (d *refDeque) empty() bool          { return len(d.front) == 0 && d.head == len(d.back) }

func (d *refDeque) popFront() refEntry {
	if k := len(d.front); k > 0 {
		e := d.front[k-1]
		d.front = d.front[:k-1]
		return e
	}
	e := d.back[d.head]
	d.head++
	return e
}

// randomLegalizeProgram writes a random DAG over f32[4] values: unary,
// binary (sometimes one operand twice) and list ops, operand-less nodes,
// prioritized ones (scalar_tensor without operands, _assert_async with
// one and no result) and a three-result layer norm, read through getitems.
func randomLegalizeProgram(r *rand.Rand, maxNodes int) string {
	var b strings.Builder
	ni := 1 + r.IntN(4)
	var vals []string
	var sig []string
	for i := range ni {
		v := fmt.Sprintf("x%d", i)
		vals = append(vals, v)
		sig = append(sig, "%"+v+": f32[4]")
	}
	fmt.Fprintf(&b, "graph forward(%s) {\n", strings.Join(sig, ", "))
	pick := func() string {
		// Mostly recent values, sometimes any.
		if r.IntN(3) > 0 && len(vals) > 3 {
			return vals[len(vals)-1-r.IntN(3)]
		}
		return vals[r.IntN(len(vals))]
	}
	n := 3 + r.IntN(maxNodes-2)
	for i := range n {
		v := fmt.Sprintf("v%d", i)
		switch k := r.IntN(12); {
		case k < 3:
			fmt.Fprintf(&b, "  %%%s: f32[4] = aten.relu.default(%%%s)\n", v, pick())
		case k < 6:
			a := pick()
			c := pick()
			if r.IntN(5) == 0 {
				c = a
			}
			fmt.Fprintf(&b, "  %%%s: f32[4] = aten.add.Tensor(%%%s, %%%s)\n", v, a, c)
		case k < 7:
			var ops []string
			for range 1 + r.IntN(4) {
				ops = append(ops, "%"+pick())
			}
			fmt.Fprintf(&b, "  %%%s: f32[%d] = aten.cat.default([%s])\n", v, 4*len(ops), strings.Join(ops, ", "))
			vals = append(vals, v)
			continue
		case k < 8:
			fmt.Fprintf(&b, "  %%%s: f32[4] = aten.zeros.default([4])\n", v)
		case k < 9:
			fmt.Fprintf(&b, "  %%%s: f32[] = aten.scalar_tensor.default(1.0)\n", v)
		case k < 10:
			fmt.Fprintf(&b, "  aten._assert_async.msg(%%%s, \"m%d\")\n", pick(), i)
			continue
		default:
			fmt.Fprintf(&b, "  %%%s: f32[4], %%%s_m: f32[1], %%%s_r: f32[1] = aten.native_layer_norm.default(%%%s, [4], None, None, 1e-05)\n", v, v, v, pick())
			vals = append(vals, v+"_m", v+"_r")
		}
		vals = append(vals, v)
	}
	var outs []string
	for _, v := range vals[ni:] {
		if r.IntN(3) == 0 {
			outs = append(outs, "%"+v)
		}
	}
	outs = append(outs, "%"+vals[len(vals)-1])
	fmt.Fprintf(&b, "  return %s\n}\n", strings.Join(outs, ", "))
	return b.String()
}

// legalOrder names g's nodes in order: a delegate call by its region, an
// assert by its message, any other node by its first result.
func legalOrder(g *ir.Graph) string {
	var ns []string
	for _, n := range g.Nodes() {
		switch {
		case n.Op == OpCallDelegate:
			ns = append(ns, "^"+n.Args[0].Graph.Name)
		case len(n.Results) == 0:
			ns = append(ns, "!"+n.Args[1].Str)
		default:
			ns = append(ns, n.Results[0].Name)
		}
	}
	return strings.Join(ns, ",")
}

// TestLegalizerMatchesRef outlines random runs of consecutive nodes of
// random graphs, one at a time, re-sorting after each: one copy with
// legalizeRef, one with a single Legalizer told of each outline (its
// incremental runs), one with Legalize (a whole-graph sort). The three
// orders must agree after every step, and Position must increase along the
// order the Legalizer left; the Legalizer's copy outlines with
// Spec.Position (movers found from the group's users). The first 600
// graphs are small (up to 32 nodes, 8 outlines anywhere); the last 150
// larger (up to 120 nodes, 30 outlines, half of them taken latest-first as
// a partitioner does), so that the re-sorted stretches end inside the
// graph. Most runs must be incremental, and both kinds (nothing moves,
// stretches re-sorted) must occur.
func TestLegalizerMatchesRef(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 3))
	steps, gapped := 0, 0
	var stats LegalizerStats
	const small, large = 600, 150
	for iter := 0; iter < small+large; iter++ {
		maxNodes, outlines, latestFirst := 32, 8, false
		if iter >= small {
			maxNodes, outlines, latestFirst = 120, 30, r.IntN(2) == 0
		}
		src := randomLegalizeProgram(r, maxNodes)
		var ps [3]*ir.Program
		for i := range ps {
			p, err := ir.Parse([]byte(src), "random.fxir")
			if err != nil {
				t.Fatalf("%v\n%s", err, src)
			}
			ps[i] = p
		}
		lz := NewLegalizer(ps[1].Main)
		var calls [3][]*ir.Node
		sortAll := func(what string) {
			t.Helper()
			before := dumpE(lz)
			errs := [3]error{legalizeRef(ps[0].Main, calls[0]), lz.Legalize(calls[1]), Legalize(ps[2].Main, calls[2])}
			want := legalOrder(ps[0].Main)
			for i := 1; i < 3; i++ {
				if (errs[i] == nil) != (errs[0] == nil) {
					t.Fatalf("%s: copy %d: error %v, reference %v\n%s", what, i, errs[i], errs[0], src)
				}
				if got := legalOrder(ps[i].Main); got != want {
					t.Fatalf("%s: copy %d: order\n%s\nwant\n%s\nprogram:\n%s\nentries before:\n%s\nafter:\n%s", what, i, got, want, src, before, dumpE(lz))
				}
			}
			last := -1
			for _, n := range ps[1].Main.Nodes() {
				if p := lz.Position(n); p <= last {
					t.Fatalf("%s: Position(%s) = %d after %d: not increasing along the graph\n%s", what, n.Short(), p, last, src)
				}
				last = lz.Position(n)
			}
		}
		sortAll("first sort")
		for k := 0; k < outlines; k++ {
			nodes := ps[0].Main.Nodes()
			var cand []int
			for i, n := range nodes {
				if n.Op != OpCallDelegate {
					cand = append(cand, i)
				}
			}
			if len(cand) == 0 {
				break
			}
			// A run of consecutive nodes, or a convex subset of a window
			// (nodes left between its members that depend on it move).
			at := cand[r.IntN(len(cand))]
			if latestFirst {
				at = cand[len(cand)-1-r.IntN(min(len(cand), 8))]
			}
			var run []int
			if r.IntN(2) == 0 {
				for i := at; i < len(nodes) && len(run) < 1+r.IntN(4) && nodes[i].Op != OpCallDelegate; i++ {
					run = append(run, i)
				}
			} else {
				pos := map[*ir.Node]int{}
				for i, n := range nodes {
					pos[n] = i
				}
				for try := 0; try < 20; try++ {
					run = run[:0]
					var set []*ir.Node
					for i := at; i < len(nodes) && i < at+8; i++ {
						if nodes[i].Op != OpCallDelegate && (i == at || r.IntN(2) == 0) {
							run = append(run, i)
							set = append(set, nodes[i])
						}
					}
					if Convex(set, pos) {
						break
					}
					run = append(run[:0], at)
				}
			}
			var made [3]*ir.Node
			var group1 []*ir.Node
			for c := range ps {
				ns := ps[c].Main.Nodes()
				g := make([]*ir.Node, len(run))
				for j, i := range run {
					g[j] = ns[i]
				}
				spec := Spec{Backend: "B", Region: fmt.Sprintf("r%d", len(calls[c])), Pass: "test", Prefix: "test"}
				if c == 1 {
					spec.Position = lz.Position
					group1 = g
				}
				call, err := Outline(g, spec)
				if err != nil {
					t.Fatalf("outline: %v\n%s", err, src)
				}
				made[c] = call
			}
			if (made[0] == nil) != (made[1] == nil) || (made[0] == nil) != (made[2] == nil) {
				t.Fatalf("outline made a call in one copy only\n%s", src)
			}
			if made[0] == nil {
				continue
			}
			if got, want := legalOrder(ps[1].Main), legalOrder(ps[0].Main); got != want {
				t.Fatalf("outline %d with Spec.Position: order\n%s\nwant\n%s\nprogram:\n%s", k, got, want, src)
			}
			for c := range ps {
				calls[c] = append(calls[c], made[c])
			}
			lz.Outlined(made[1], group1)
			steps++
			if run[len(run)-1]-run[0]+1 > len(run) {
				gapped++
			}
			sortAll(fmt.Sprintf("after outline %d", k))
		}
		stats.Full += lz.Stats.Full
		stats.Unchanged += lz.Stats.Unchanged
		stats.Windows += lz.Stats.Windows
		stats.Popped += lz.Stats.Popped
		stats.Relabels += lz.Stats.Relabels
	}
	t.Logf("%d outlines: %+v", steps, stats)
	if steps < 5000 || gapped < 500 {
		t.Errorf("only %d outlines compared, %d of groups with nodes between their members", steps, gapped)
	}
	if fallbacks := stats.Full - small - large; fallbacks > steps/10 || stats.Unchanged < steps/10 || stats.Windows < steps/10 {
		t.Errorf("%d outlines: %d whole-graph sorts after the first, %d runs that moved nothing, %d stretches re-sorted", steps, fallbacks, stats.Unchanged, stats.Windows)
	}
}
