package plan

import "github.com/fxport/fxport/ir"

var (
	opETView = ir.OpExecutorchPrimEtView
	opCond   = ir.OpHigherOrderCond
	opWhile  = ir.OpHigherOrderWhileLoop
	opScan   = ir.OpHigherOrderScan
	opMap    = ir.OpHigherOrderMapImpl
)

// ScanLoop is a counted loop over the leading dim of its xs: a
// higher_order.scan (combine_fn, [init], [xs], [additional inputs]) or a
// higher_order.map_impl (f, [xs], [pos_args]: a scan without carries).
// Body takes one input per Init, Xs and Extra entry, in that order.
type ScanLoop struct {
	Body            *ir.Graph
	Init, Xs, Extra []ir.Arg
}

// ScanParts returns the parts of a well-formed scan or map_impl node.
func ScanParts(n *ir.Node) (ScanLoop, bool) {
	var s ScanLoop
	a := n.Args
	switch {
	case n.Op == opScan && len(a) == 4 && a[1].Kind == ir.ArgList && a[2].Kind == ir.ArgList && a[3].Kind == ir.ArgList:
		s = ScanLoop{Init: a[1].List, Xs: a[2].List, Extra: a[3].List}
	case n.Op == opMap && len(a) == 3 && a[1].Kind == ir.ArgList && a[2].Kind == ir.ArgList:
		s = ScanLoop{Xs: a[1].List, Extra: a[2].List}
	default:
		return ScanLoop{}, false
	}
	if a[0].Kind != ir.ArgGraph || a[0].Graph == nil || len(a[0].Graph.Inputs) != len(s.Init)+len(s.Xs)+len(s.Extra) {
		return ScanLoop{}, false
	}
	s.Body = a[0].Graph
	return s, true
}

// ScanSlices returns the body inputs of scan or map_impl node n that
// receive the per-iteration slices of xs (they have storage of their own).
func ScanSlices(n *ir.Node) []*ir.Value {
	s, ok := ScanParts(n)
	if !ok {
		return nil
	}
	return s.Body.Inputs[len(s.Init) : len(s.Init)+len(s.Xs)]
}

// whileRegions returns the cond_fn and body_fn regions of a well-formed
// higher_order.while_loop node (cond_fn, body_fn, [carried], [additional]).
func whileRegions(n *ir.Node) (c, b *ir.Graph, ok bool) {
	if n.Op != opWhile || len(n.Args) != 4 || n.Args[0].Kind != ir.ArgGraph || n.Args[1].Kind != ir.ArgGraph ||
		n.Args[2].Kind != ir.ArgList || n.Args[3].Kind != ir.ArgList || n.Args[0].Graph == nil || n.Args[1].Graph == nil {
		return nil, nil, false
	}
	return n.Args[0].Graph, n.Args[1].Graph, true
}

// condRegions returns the true and false regions of a well-formed
// higher_order.cond node (pred, true graph, false graph, [operands]).
func condRegions(n *ir.Node) (t, f *ir.Graph, ok bool) {
	if n.Op != opCond || len(n.Args) != 4 || n.Args[1].Kind != ir.ArgGraph || n.Args[2].Kind != ir.ArgGraph ||
		n.Args[3].Kind != ir.ArgList || n.Args[1].Graph == nil || n.Args[2].Graph == nil {
		return nil, nil, false
	}
	return n.Args[1].Graph, n.Args[2].Graph, true
}

// layout numbers the program points of the main graph and of every cond
// region reachable from it through conds, in the order the emitter lays
// out the instructions: a cond's true region's nodes, the true region's
// moves into the cond's results, the false region's nodes, its moves, then
// the cond node itself (the join). A run takes one branch, so a position
// inside the true region and one inside the false region are never both
// reached by one run.
type layout struct {
	main  *ir.Graph
	nodes []*ir.Node // every numbered node, in position order
	pos   map[*ir.Node]int
	move  map[*ir.Graph]int      // move point of each cond or while region
	conds []*ir.Node             // cond nodes with planned regions, in position order
	owner map[*ir.Graph]*ir.Node // cond or while region → its node
	// operand binds a region's input to the operand it stands for (a
	// while region's carried input: the while's result, its slot).
	operand map[*ir.Value]*ir.Value
	// loop is the span of each while_loop or scan node: from its initial
	// moves into the carried slots to the node's own position (the exit).
	loop map[*ir.Node]Span
	// slices are the scan combine_fn inputs that hold the xs slices, in
	// position order; sliceDef is each one's definition point.
	slices   []*ir.Value
	sliceDef map[*ir.Value]int
	end      int // one past the last position
	// wholeLoops gives every value inside a loop region the loop's whole
	// span (the planner before per-iteration lifetimes; for measurements).
	wholeLoops bool
	// tree numbers the graphs of the owner tree (pre-order in, post-order
	// out) so that within is O(1); built on first use for len(owner) graphs.
	tree      map[*ir.Graph][2]int
	treeOwned int
	// loopOf memoizes enclosingLoop while owner and loop keep the sizes
	// they had (loopOwned, loopLoops).
	loopOf               map[*ir.Graph]enclosing
	loopOwned, loopLoops int
}

func newLayout(main *ir.Graph) *layout {
	l := &layout{main: main, pos: map[*ir.Node]int{}, move: map[*ir.Graph]int{}, owner: map[*ir.Graph]*ir.Node{}, operand: map[*ir.Value]*ir.Value{}, loop: map[*ir.Node]Span{}, sliceDef: map[*ir.Value]int{}}
	l.walk(main)
	return l
}

func (l *layout) walk(g *ir.Graph) {
	for _, n := range g.Nodes() {
		if t, f, ok := condRegions(n); ok {
			ops := n.Args[3].List
			for _, r := range []*ir.Graph{t, f} {
				l.owner[r] = n
				for i, in := range r.Inputs {
					if i < len(ops) && ops[i].Kind == ir.ArgValue {
						l.operand[in] = ops[i].Value
					}
				}
				l.walk(r)
				l.move[r] = l.end
				l.end++
			}
			l.conds = append(l.conds, n)
		}
		if c, b, ok := whileRegions(n); ok {
			l.walkWhile(n, c, b)
		}
		if s, ok := ScanParts(n); ok {
			l.walkScan(n, s)
		}
		l.pos[n] = l.end
		l.nodes = append(l.nodes, n)
		l.end++
	}
}

// walkWhile numbers a while_loop in the emitter's order: the initial
// moves into the carried slots, cond_fn's nodes, its exit jump (cond_fn's
// move point), body_fn's nodes, its moves back into the slots (body_fn's
// move point), then the node itself (the exit). Region inputs stand for
// the carried slots (the node's results) and the additional inputs.
func (l *layout) walkWhile(n *ir.Node, c, b *ir.Graph) {
	carried, extra := n.Args[2].List, n.Args[3].List
	start := l.end
	l.end++
	for _, r := range []*ir.Graph{c, b} {
		l.owner[r] = n
		for i, in := range r.Inputs {
			switch {
			case i < len(carried) && i < len(n.Results):
				l.operand[in] = n.Results[i]
			case i >= len(carried) && i-len(carried) < len(extra) && extra[i-len(carried)].Kind == ir.ArgValue:
				l.operand[in] = extra[i-len(carried)].Value
			}
		}
		l.walk(r)
		l.move[r] = l.end
		l.end++
	}
	l.loop[n] = Span{start, l.end}
}

// walkScan numbers a scan (or map_impl) like a while_loop with one region: the initial
// moves into the carry slots (the node's first results), combine_fn's
// nodes, its copies back and into the stacked outputs (its move point),
// then the node itself (the exit). Carry inputs stand for the slots, the
// additional inputs for their operands; the xs slice inputs are values of
// their own, written at the start of every iteration.
func (l *layout) walkScan(n *ir.Node, s ScanLoop) {
	f, ninit, nxs, extra := s.Body, len(s.Init), len(s.Xs), s.Extra
	start := l.end
	l.end++
	l.owner[f] = n
	for i, in := range f.Inputs {
		switch {
		case i < ninit && i < len(n.Results):
			l.operand[in] = n.Results[i]
		case i >= ninit && i < ninit+nxs:
			l.slices = append(l.slices, in)
			l.sliceDef[in] = start
		case i >= ninit+nxs && extra[i-ninit-nxs].Kind == ir.ArgValue:
			l.operand[in] = extra[i-ninit-nxs].Value
		}
	}
	l.walk(f)
	l.move[f] = l.end
	l.end++
	l.loop[n] = Span{start, l.end}
}

// initOnly reports whether the loop node u reads v only as the initial
// value of a carried slot (a while_loop's carried input, a scan's init),
// and returns the loop's start: the initial copies into the slots are the
// only instructions that read such an operand (the regions read the slots),
// so it need not outlive them. An operand that is also an xs or an
// additional input is read by every iteration and lives to the exit.
func (l *layout) initOnly(u *ir.Node, v *ir.Value) (int, bool) {
	span, ok := l.loop[u]
	if !ok || l.wholeLoops || u.Graph != v.Graph {
		return 0, false
	}
	var init, rest []ir.Arg
	if _, _, ok := whileRegions(u); ok {
		init, rest = u.Args[2].List, u.Args[3].List
	} else if s, ok := ScanParts(u); ok {
		init, rest = s.Init, append(append([]ir.Arg(nil), s.Xs...), s.Extra...)
	} else {
		return 0, false
	}
	found := false
	for _, a := range init {
		found = found || a.Kind == ir.ArgValue && a.Value == v
	}
	for _, a := range rest {
		if a.Kind == ir.ArgValue && a.Value == v {
			return 0, false
		}
	}
	return span.Start, found
}

// enclosingLoop returns the span of the outermost while_loop or scan whose
// regions hold graph g (used only with Options.wholeLoops).
func (l *layout) enclosingLoop(g *ir.Graph) (Span, bool) {
	if l.loopOf == nil || l.loopOwned != len(l.owner) || l.loopLoops != len(l.loop) {
		l.loopOf = map[*ir.Graph]enclosing{}
		l.loopOwned, l.loopLoops = len(l.owner), len(l.loop)
	}
	// The answer is the outermost loop on the way up: that of the nearest
	// graph above with an answer, else the loop owning the graph. Walk up to
	// a known graph (or the top), then fill in the answers on the way back.
	var chain []*ir.Graph
	var res enclosing
	for h := g; ; {
		if e, ok := l.loopOf[h]; ok {
			res = e
			break
		}
		c := l.owner[h]
		if c == nil {
			break
		}
		chain = append(chain, h)
		h = c.Graph
	}
	for i := len(chain) - 1; i >= 0; i-- {
		h := chain[i]
		if !res.found {
			if s, ok := l.loop[l.owner[h]]; ok {
				res = enclosing{s, true}
			}
		}
		l.loopOf[h] = res
	}
	return res.span, res.found
}

// enclosing is a memoized enclosingLoop answer.
type enclosing struct {
	span  Span
	found bool
}

// resolve maps a cond region input to the outer value it stands for
// (through nested regions); other values map to themselves. It returns nil
// for a region input bound to no value (a literal operand or a region
// that is not a cond's).
func (l *layout) resolve(v *ir.Value) *ir.Value {
	for v != nil && v.Def == nil && v.Graph != l.main {
		v = l.operand[v]
	}
	return v
}

// storage is the value whose storage class an alias of v joins: resolve(v),
// or v itself for a scan's xs slice input (a value with storage of its own
// that resolve does not map). It is nil for v == nil and for a region input
// bound to no value.
func (l *layout) storage(v *ir.Value) *ir.Value {
	if v == nil {
		return nil
	}
	if _, ok := l.sliceDef[v]; ok {
		return v
	}
	return l.resolve(v)
}

// planned reports whether g is the main graph or a cond or while region of it.
func (l *layout) planned(g *ir.Graph) bool {
	if g == l.main {
		return true
	}
	_, ok := l.move[g]
	return ok
}

// usePos is the position at which use u reads a value defined in graph def:
// u's own position (a region's return is its move point, the main graph's
// return the end), lifted to the enclosing cond node in def when u sits in
// a region below def. A use inside any other kind of region counts as
// lasting to the end.
func (l *layout) usePos(u *ir.Node, def *ir.Graph) int {
	h := u.Graph
	var at int
	switch {
	case u.IsReturn() && h == l.main:
		return l.end
	case u.IsReturn():
		mv, ok := l.move[h]
		if !ok {
			return l.end
		}
		at = mv
	default:
		p, ok := l.pos[u]
		if !ok {
			return l.end
		}
		at = p
	}
	for h != def {
		c := l.owner[h]
		if c == nil {
			return l.end
		}
		at, h = l.pos[c], c.Graph
	}
	return at
}

// within reports whether graph g is h or a cond or while region nested in h:
// an interval test on the numbered owner tree (numberTree), O(1) however
// deep the regions nest.
// treeInterval is g's entry and exit numbers in the graph tree (ok false
// when g is not in it).
func (l *layout) treeInterval(g *ir.Graph) ([2]int, bool) {
	if l.tree == nil || l.treeOwned != len(l.owner) {
		l.numberTree()
	}
	iv, ok := l.tree[g]
	return iv, ok
}

func (l *layout) within(g, h *ir.Graph) bool {
	if l.tree == nil || l.treeOwned != len(l.owner) {
		l.numberTree()
	}
	if ng, ok := l.tree[g]; ok {
		if nh, ok := l.tree[h]; ok {
			return nh[0] <= ng[0] && ng[1] <= nh[1]
		}
	}
	return l.withinWalk(g, h)
}

// numberTree numbers every graph of the tree the owner map forms (a region
// under the graph of its cond or while node) with an explicit stack:
// entry and exit counters, so that g is within h when h's interval holds
// g's.
func (l *layout) numberTree() {
	children := map[*ir.Graph][]*ir.Graph{}
	var roots []*ir.Graph
	seen := map[*ir.Graph]bool{}
	for g, n := range l.owner {
		children[n.Graph] = append(children[n.Graph], g)
	}
	for parent := range children {
		if l.owner[parent] == nil && !seen[parent] {
			seen[parent] = true
			roots = append(roots, parent)
		}
	}
	l.tree = make(map[*ir.Graph][2]int, len(l.owner)+len(roots))
	clock := 0
	type frame struct {
		g    *ir.Graph
		next int
	}
	for _, r := range roots {
		stack := []frame{{g: r}}
		l.tree[r] = [2]int{clock, 0}
		clock++
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if kids := children[top.g]; top.next < len(kids) {
				k := kids[top.next]
				top.next++
				l.tree[k] = [2]int{clock, 0}
				clock++
				stack = append(stack, frame{g: k})
				continue
			}
			iv := l.tree[top.g]
			iv[1] = clock
			clock++
			l.tree[top.g] = iv
			stack = stack[:len(stack)-1]
		}
	}
	l.treeOwned = len(l.owner)
}

// withinWalk is within by walking up the owners (graphs outside the tree).
func (l *layout) withinWalk(g, h *ir.Graph) bool {
	for g != nil {
		if g == h {
			return true
		}
		c := l.owner[g]
		if c == nil {
			return false
		}
		g = c.Graph
	}
	return false
}
