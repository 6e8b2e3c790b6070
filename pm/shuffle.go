package pm

import (
	"math/rand/v2"

	"github.com/fxport/fxport/ir"
)

// shuffle reorders each graph's nodes into another valid order, seeded by
// seed, the graph's name and the pass's sequence number (so a failure
// reproduces). Nodes never move across a barrier: a node with side
// effects, mutation, randomness or regions.
func shuffle(p *ir.Program, seed uint64, seq int) {
	for _, g := range p.Graphs() {
		rng := rand.New(rand.NewPCG(seed, hashText(g.Name)^uint64(seq)))
		var seg []*ir.Node
		for _, n := range g.Nodes() {
			if isBarrier(n) {
				shuffleSegment(seg, n, rng)
				seg = nil
				continue
			}
			seg = append(seg, n)
		}
		shuffleSegment(seg, nil, rng)
	}
}

func isBarrier(n *ir.Node) bool {
	if ir.HasSideEffects(n.Op) || n.Op.Has(ir.PropRandom) || n.Op.Has(ir.PropHigherOrder) || len(n.Regions()) > 0 {
		return true
	}
	for _, a := range n.Op.Info().Schema.Args {
		if a.Mutates() {
			return true
		}
	}
	return false
}

// shuffleSegment puts seg, a run of nodes ending just before boundary (nil:
// the graph's end), into a random topological order.
func shuffleSegment(seg []*ir.Node, boundary *ir.Node, rng *rand.Rand) {
	if len(seg) < 2 {
		return
	}
	in := make(map[*ir.Node]bool, len(seg))
	for _, n := range seg {
		in[n] = true
	}
	indeg := make(map[*ir.Node]int, len(seg))
	users := make(map[*ir.Node][]*ir.Node, len(seg))
	for _, n := range seg {
		for _, v := range n.Operands() {
			if d := v.Def; d != nil && in[d] {
				indeg[n]++
				users[d] = append(users[d], n)
			}
		}
	}
	var ready []*ir.Node
	for _, n := range seg {
		if indeg[n] == 0 {
			ready = append(ready, n)
		}
	}
	order := make([]*ir.Node, 0, len(seg))
	for len(ready) > 0 {
		i := rng.IntN(len(ready))
		n := ready[i]
		ready = append(ready[:i], ready[i+1:]...)
		order = append(order, n)
		for _, u := range users[n] {
			if indeg[u]--; indeg[u] == 0 {
				ready = append(ready, u)
			}
		}
	}
	for _, n := range order {
		n.MoveBefore(boundary)
	}
}
