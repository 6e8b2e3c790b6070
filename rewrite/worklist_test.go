package rewrite

import (
	"testing"

	"github.com/fxport/fxport/ir"
)

// The marked worklist behaves as a FIFO set keyed by node: random pushes
// and pops of nodes of two graphs, two of them sharing an ID, give the
// order a map-keyed reference gives; a second worklist over the same nodes
// afterwards starts empty.
func TestWorklistMatchesMapReference(t *testing.T) {
	g1, g2 := &ir.Graph{Name: "a"}, &ir.Graph{Name: "b"}
	var nodes []*ir.Node
	for i := 0; i < 40; i++ {
		g := g1
		if i%3 == 0 {
			g = g2
		}
		id := i * 7
		if i == 7 || i == 8 {
			id = 1000 // two nodes of g1 share an ID
		}
		nodes = append(nodes, &ir.Node{ID: id, Graph: g})
	}
	var w worklist
	var ref []*ir.Node
	in := map[*ir.Node]bool{}
	rng := uint64(7)
	for step := 0; step < 20000; step++ {
		rng = rng*6364136223846793005 + 1442695040888963407
		r := rng >> 33
		if r%3 != 0 {
			n := nodes[r%uint64(len(nodes))]
			w.push(n)
			if !in[n] {
				in[n] = true
				ref = append(ref, n)
			}
			continue
		}
		got := w.pop()
		var want *ir.Node
		if len(ref) > 0 {
			want, ref = ref[0], ref[1:]
			delete(in, want)
		}
		if got != want {
			t.Fatalf("step %d: pop = %v, want %v", step, got, want)
		}
		if w.len() != len(ref) {
			t.Fatalf("step %d: len = %d, want %d", step, w.len(), len(ref))
		}
	}
	var w2 worklist
	for _, n := range nodes {
		w2.push(n)
	}
	if w2.len() != len(nodes) {
		t.Fatalf("a second worklist holds %d of the %d nodes pushed", w2.len(), len(nodes))
	}
}
