package ir

// DCE removes nodes whose results are unused and whose op has no side
// effects (in-place, out-variant and side-effecting ops stay), in g and in
// all its regions. It returns how many nodes it removed. It runs in one
// backward sweep, linear in the graph size.
func DCE(g *Graph) int {
	removed := 0
	for n := g.last; n != nil; {
		prev := n.prev
		n.forEachRegion(func(r *Graph) { removed += DCE(r) })
		if isDead(n) {
			n.eraseUnchecked()
			removed++
		}
		n = prev
	}
	return removed
}

// isDead reports whether n can be removed.
func isDead(n *Node) bool {
	for _, r := range n.Results {
		if len(r.uses) > 0 {
			return false
		}
	}
	return !HasSideEffects(n.Op)
}

// HasSideEffects reports ops that must stay even when unused.
func HasSideEffects(op Op) bool {
	return op.Info().Props&(PropSideEffects|PropInplace|PropOutVariant) != 0
}

// Clone returns a deep copy of p: new graphs, nodes and values with the same
// names, IDs and types (types are immutable and shared), copied metadata,
// signature, environment and module call graph. Weights are copied as new
// Weight values that share their (read-only) sources.
func (p *Program) Clone() *Program {
	c := &Program{
		Signature:       cloneSignature(p.Signature),
		ModuleCallGraph: append([]ModuleCall(nil), p.ModuleCallGraph...),
		Meta:            p.Meta.Clone(),
	}
	if p.Env != nil {
		c.Env = p.Env.Clone()
	}
	for _, w := range p.Weights {
		cw := *w
		cw.Strides = append([]int64(nil), w.Strides...)
		if w.Strides == nil {
			cw.Strides = nil
		}
		c.Weights = append(c.Weights, &cw)
	}
	c.Main = cloneGraph(p.Main, c, nil)
	return c
}

func cloneSignature(s Signature) Signature {
	c := s
	c.Inputs = append([]InputSpec(nil), s.Inputs...)
	c.Outputs = append([]OutputSpec(nil), s.Outputs...)
	return c
}

func cloneGraph(g *Graph, p *Program, parent *Node) *Graph {
	c := newGraph(g.Name, p, parent)
	c.nextID = g.nextID
	vmap := make(map[*Value]*Value, g.numNodes+len(g.Inputs))
	for _, in := range g.Inputs {
		nv := &Value{ID: in.ID, Name: in.Name, Type: in.Type, Index: in.Index, Graph: c}
		c.Inputs = append(c.Inputs, nv)
		c.names[nv.Name] = nv
		vmap[in] = nv
	}
	for n := g.first; n != nil; n = n.next {
		cn := &Node{ID: n.ID, Op: n.Op, Meta: n.Meta.Clone(), Graph: c}
		cn.Args = make([]Arg, len(n.Args))
		for i, a := range n.Args {
			cn.Args[i] = cloneArg(a, vmap, p, cn)
		}
		for _, r := range n.Results {
			nv := &Value{ID: r.ID, Name: r.Name, Type: r.Type, Def: cn, Index: r.Index, Graph: c}
			cn.Results = append(cn.Results, nv)
			c.names[nv.Name] = nv
			vmap[r] = nv
		}
		cn.addUses()
		c.linkBefore(cn, nil)
	}
	outs := make([]Arg, len(g.ret.Args))
	for i, a := range g.ret.Args {
		outs[i] = cloneArg(a, vmap, p, nil)
	}
	c.SetOutputs(outs...)
	return c
}

func cloneArg(a Arg, vmap map[*Value]*Value, p *Program, owner *Node) Arg {
	switch a.Kind {
	case ArgValue:
		if nv, ok := vmap[a.Value]; ok {
			return ValueArg(nv)
		}
		return a
	case ArgList:
		l := make([]Arg, len(a.List))
		for i, e := range a.List {
			l[i] = cloneArg(e, vmap, p, owner)
		}
		return ListArg(l...)
	case ArgGraph:
		if a.Graph == nil {
			return a
		}
		return GraphArg(cloneGraph(a.Graph, p, owner))
	}
	return a
}

// CloneNodeBefore copies n (same op and arguments, fresh result names) just
// before at, in at's graph; regions are deep-copied. Used by passes that
// duplicate work and by patch reverts.
func CloneNodeBefore(n *Node, at *Node, names []string) (*Node, error) {
	g := at.Graph
	args := make([]Arg, len(n.Args))
	for i, a := range n.Args {
		args[i] = cloneArg(a, nil, g.Program, nil)
	}
	types := make([]Type, len(n.Results))
	for i, r := range n.Results {
		types[i] = r.Type
	}
	c, err := g.newNode(n.Op, args, types, names)
	if err != nil {
		return nil, err
	}
	for i := range c.Args {
		fixRegionParents(&c.Args[i], c)
	}
	c.Meta = n.Meta.Clone()
	g.linkBefore(c, at)
	return c, nil
}

func fixRegionParents(a *Arg, owner *Node) {
	switch a.Kind {
	case ArgGraph:
		if a.Graph != nil {
			adoptRegion(a.Graph, owner)
		}
	case ArgList:
		for i := range a.List {
			fixRegionParents(&a.List[i], owner)
		}
	}
}
