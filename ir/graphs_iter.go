package ir

// ForEachGraph calls f on the main graph and then, depth first in node order,
// on every region graph: the same graphs, in the same order, as Graphs, but
// without building a slice. f must not add or remove regions while it runs.
func (p *Program) ForEachGraph(f func(*Graph)) {
	if p.Main == nil {
		return
	}
	if p.regionsMade == 0 && (p.Main.Program == nil || p.Main.Program == p || p.Main.Program.regionsMade == 0) {
		// Every region is made by newGraph for its program and adopted by
		// its node, both of which count it: none was, so the main graph is
		// the only graph.
		f(p.Main)
		return
	}
	var walk func(g *Graph)
	walk = func(g *Graph) {
		f(g)
		for n := g.first; n != nil; n = n.next {
			n.forEachRegion(walk)
		}
	}
	walk(p.Main)
}

// forEachRegion calls f on each region graph of n's arguments, in argument
// order (the order of Regions). It reads the arguments in place: an Arg is a
// large struct, and copying every one made whole-program walks memory bound.
func (n *Node) forEachRegion(f func(*Graph)) {
	for i := range n.Args {
		a := &n.Args[i]
		switch a.Kind {
		case ArgGraph:
			if a.Graph != nil {
				f(a.Graph)
			}
		case ArgList:
			for j := range a.List {
				if e := &a.List[j]; e.Kind == ArgGraph && e.Graph != nil {
					f(e.Graph)
				}
			}
		}
	}
}

// adoptRegion makes n the owner of region r. It also counts r on n's program,
// so that a region made for another program and attached here is still
// walked by ForEachGraph.
func adoptRegion(r *Graph, n *Node) {
	r.Parent = n
	if n.Graph != nil && n.Graph.Program != nil {
		n.Graph.Program.regionsMade++
	}
}
