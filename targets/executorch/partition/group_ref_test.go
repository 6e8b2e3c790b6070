package partition

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

// groupRef is Group as it was before joinsConvex: every join checked by
// Convex over the whole union. TestGroupMatchesRef compares the two.
func groupRef(nodes []*ir.Node, pos map[*ir.Node]int, claimed func(*ir.Node) bool) [][]*ir.Node {
	member := map[*ir.Node]int{} // node → group index
	var groups [][]*ir.Node
	for _, n := range nodes {
		if !claimed(n) {
			continue
		}
		ids := producerGroups(n, member)
		joined := false
		if len(ids) > 0 {
			all := []*ir.Node{n}
			for _, id := range ids {
				all = append(all, groups[id]...)
			}
			if Convex(all, pos) {
				into := ids[0]
				for _, id := range ids[1:] {
					for _, m := range groups[id] {
						member[m] = into
					}
					groups[into] = append(groups[into], groups[id]...)
					groups[id] = nil
				}
				groups[into] = append(groups[into], n)
				member[n] = into
				joined = true
			} else {
				sort.SliceStable(ids, func(i, j int) bool { return len(groups[ids[i]]) > len(groups[ids[j]]) })
				for _, id := range ids {
					if Convex(append([]*ir.Node{n}, groups[id]...), pos) {
						groups[id] = append(groups[id], n)
						member[n] = id
						joined = true
						break
					}
				}
			}
		}
		if !joined {
			member[n] = len(groups)
			groups = append(groups, []*ir.Node{n})
		}
	}
	out := groups[:0]
	for _, g := range groups {
		if len(g) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// Group gives exactly groupRef's groups (same groups, order and node
// order) on random DAGs of relu/add nodes with random claimed sets, some
// of its joins rejected through the spine (groupSpine) without a walk.
func TestGroupMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	joins := 0
	for iter := range 400 {
		n := 3 + rng.IntN(70)
		var b strings.Builder
		b.WriteString("input x: user_input\ninput y: user_input\noutput user_output\ngraph forward(%x: f32[4], %y: f32[4]) {\n")
		vals := []string{"x", "y"}
		pick := func() string {
			if rng.IntN(4) == 0 {
				return vals[rng.IntN(len(vals))]
			}
			return vals[max(0, len(vals)-1-rng.IntN(5))]
		}
		for k := range n {
			if rng.IntN(3) == 0 {
				fmt.Fprintf(&b, "  %%v%d: f32[4] = aten.relu.default(%%%s)\n", k, pick())
			} else {
				fmt.Fprintf(&b, "  %%v%d: f32[4] = aten.add.Tensor(%%%s, %%%s)\n", k, pick(), pick())
			}
			vals = append(vals, fmt.Sprintf("v%d", k))
		}
		fmt.Fprintf(&b, "  return %%%s\n}\n", vals[len(vals)-1])
		p, err := ir.Parse([]byte(b.String()), "random_group.fxir")
		if err != nil {
			t.Fatal(err)
		}
		nodes := p.Main.Nodes()
		pos := make(map[*ir.Node]int, len(nodes))
		for i, x := range nodes {
			pos[x] = i
		}
		claimed := map[*ir.Node]bool{}
		keep := 1 + rng.IntN(4)
		for _, x := range nodes {
			if !x.IsReturn() && rng.IntN(5) < keep {
				claimed[x] = true
			}
		}
		names := func(groups [][]*ir.Node) string {
			var parts []string
			for _, g := range groups {
				var ns []string
				for _, x := range g {
					ns = append(ns, x.Results[0].Name)
				}
				parts = append(parts, strings.Join(ns, ","))
			}
			return strings.Join(parts, " | ")
		}
		is := func(x *ir.Node) bool { return claimed[x] }
		got, want := Group(nodes, pos, is), groupRef(nodes, pos, is)
		if g, w := names(got), names(want); g != w {
			t.Fatalf("iteration %d: groups\n%s\nwant (reference)\n%s\n%s", iter, g, w, ir.Print(p))
		}
		joins += len(claimed) - len(got)
	}
	if joins == 0 {
		t.Fatal("no node joined a group: the comparison tested nothing")
	}
	if spineRejects.Load() == 0 {
		t.Fatal("no join was rejected through the spine: the shortcut was not compared")
	}
	t.Logf("%d joins, %d rejected through the spine", joins, spineRejects.Load())
}
