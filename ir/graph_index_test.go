package ir_test

import (
	"slices"
	"testing"

	"github.com/fxport/fxport/ir"
)

// Nodes (cached between edits) and OpCount stay what a walk of the list
// says through random insertions at the end and in the middle, moves and
// erasures.
func TestNodesCacheAndOpCountFollowEdits(t *testing.T) {
	p, err := ir.Parse([]byte("graph forward(%x: f32[4]) {\n  %y: f32[4] = aten.sin.default(%x)\n  return %y\n}\n"), "g.fxir")
	if err != nil {
		t.Fatal(err)
	}
	g := p.Main
	x := g.Inputs[0]
	ops := []ir.Op{ir.OpAtenSin, ir.OpAtenCos, ir.OpAtenNeg}
	rng := uint64(3)
	next := func(n int) int {
		rng = rng*6364136223846793005 + 1442695040888963407
		return int((rng >> 33) % uint64(n))
	}
	check := func(step int) {
		var walk []*ir.Node
		count := map[ir.Op]int{}
		for n := g.First(); n != nil; n = n.Next() {
			walk = append(walk, n)
			count[n.Op]++
		}
		if got := g.Nodes(); !slices.Equal(got, walk) {
			t.Fatalf("step %d: Nodes() has %d nodes, the list %d", step, len(got), len(walk))
		}
		for _, op := range ops {
			if g.OpCount(op) != count[op] {
				t.Fatalf("step %d: OpCount(%s) = %d, want %d", step, op, g.OpCount(op), count[op])
			}
			has := g.HasOpWhere(func(o ir.Op) bool { return o == op })
			if has != (count[op] > 0) {
				t.Fatalf("step %d: HasOpWhere(%s) = %v", step, op, has)
			}
		}
	}
	for step := 0; step < 3000; step++ {
		nodes := g.Nodes()
		b := ir.NewBuilder(g)
		switch r := next(10); {
		case r < 4 || len(nodes) < 2: // append
			b.SetInsertAtEnd()
			if _, err := b.Value(ops[next(len(ops))], ir.ValueArg(x)); err != nil {
				t.Fatal(err)
			}
		case r < 6: // insert in the middle
			b.SetInsertBefore(nodes[next(len(nodes))])
			if _, err := b.Value(ops[next(len(ops))], ir.ValueArg(x)); err != nil {
				t.Fatal(err)
			}
		case r < 7: // move
			n := nodes[next(len(nodes))]
			if n.Results[0].NumUses() == 0 {
				n.MoveBefore(nodes[next(len(nodes))])
			}
		default: // erase one without uses
			n := nodes[next(len(nodes))]
			if n.Results[0].NumUses() == 0 {
				if err := n.Erase(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if next(4) == 0 {
			g.Nodes()[0] = nil // callers may write to the slice they got
		}
		check(step)
	}
}
