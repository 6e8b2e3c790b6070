package xnnpack

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/partition"
)

// mergeUnrelatedRef is the original, quadratic mergeUnrelated (every pair
// of partitions, each checked by a walk over the whole graph with a fresh
// owner map), kept as the reference that TestMergeUnrelatedMatchesRef
// compares the near-linear version against.
func mergeUnrelatedRef(groups [][]*ir.Node, pos map[*ir.Node]int) [][]*ir.Node {
	first := func(g []*ir.Node) int {
		m := -1
		for _, n := range g {
			if m < 0 || pos[n] < m {
				m = pos[n]
			}
		}
		return m
	}
	sort.SliceStable(groups, func(i, j int) bool { return first(groups[i]) < first(groups[j]) })
	for i := 0; i < len(groups); i++ {
		for j := i + 1; j < len(groups); j++ {
			union := append(append([]*ir.Node{}, groups[i]...), groups[j]...)
			if !convexAmongRef(union, groups, i, j) {
				continue
			}
			groups[i] = union
			groups = append(groups[:j], groups[j+1:]...)
			j--
		}
	}
	return groups
}

// convexAmongRef is the original convexity check of mergeUnrelatedRef: no
// path leaves set and re-enters it, where reaching any node of another
// partition reaches all of that partition's nodes.
func convexAmongRef(set []*ir.Node, groups [][]*ir.Node, i, j int) bool {
	in := map[*ir.Node]bool{}
	for _, n := range set {
		in[n] = true
	}
	owner := map[*ir.Node]int{}
	for k, g := range groups {
		if k == i || k == j {
			continue
		}
		for _, n := range g {
			owner[n] = k
		}
	}
	seen := map[*ir.Node]bool{}
	seenGroup := map[int]bool{}
	var work []*ir.Node
	var visit func(u *ir.Node)
	visit = func(u *ir.Node) {
		if seen[u] {
			return
		}
		seen[u] = true
		work = append(work, u)
		if k, ok := owner[u]; ok && !seenGroup[k] {
			seenGroup[k] = true
			for _, m := range groups[k] {
				visit(m)
			}
		}
	}
	users := func(n *ir.Node, f func(*ir.Node) bool) bool {
		for _, r := range n.Results {
			for _, u := range r.Uses() {
				if !u.IsReturn() && f(u) {
					return true
				}
			}
		}
		return false
	}
	for _, n := range set {
		users(n, func(u *ir.Node) bool {
			if !in[u] {
				visit(u)
			}
			return false
		})
	}
	for len(work) > 0 {
		u := work[len(work)-1]
		work = work[:len(work)-1]
		if users(u, func(w *ir.Node) bool { return in[w] }) {
			return false
		}
		users(u, func(w *ir.Node) bool {
			visit(w)
			return false
		})
	}
	return true
}

// randomMergeProgram is a random DAG of n relu/add nodes over two inputs:
// each operand is a random earlier value, biased toward recent ones so the
// graph has both long chains and parallel branches; the values no node
// reads are returned (dead ends as far as the partitioner is concerned).
func randomMergeProgram(t *testing.T, rng *rand.Rand, n int) *ir.Program {
	t.Helper()
	var body strings.Builder
	vals := []string{"x", "y"}
	used := map[string]bool{}
	pick := func() string {
		v := vals[max(0, len(vals)-1-rng.IntN(4))]
		if rng.IntN(4) == 0 {
			v = vals[rng.IntN(len(vals))]
		}
		used[v] = true
		return v
	}
	for k := range n {
		name := fmt.Sprintf("v%d", k)
		if rng.IntN(3) == 0 {
			fmt.Fprintf(&body, "  %%%s: f32[4] = aten.relu.default(%%%s)\n", name, pick())
		} else {
			fmt.Fprintf(&body, "  %%%s: f32[4] = aten.add.Tensor(%%%s, %%%s)\n", name, pick(), pick())
		}
		vals = append(vals, name)
	}
	var b strings.Builder
	b.WriteString("input x: user_input\ninput y: user_input\n")
	var outs []string
	for _, v := range vals[2:] {
		if !used[v] {
			outs = append(outs, "%"+v)
			b.WriteString("output user_output\n")
		}
	}
	fmt.Fprintf(&b, "graph forward(%%x: f32[4], %%y: f32[4]) {\n%s  return %s\n}\n", body.String(), strings.Join(outs, ", "))
	p, err := ir.Parse([]byte(b.String()), "random_merge.fxir")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// groupNames prints partitions as their node names, for comparison.
func groupNames(groups [][]*ir.Node) string {
	var parts []string
	for _, g := range groups {
		var names []string
		for _, n := range g {
			names = append(names, n.Results[0].Name)
		}
		parts = append(parts, strings.Join(names, ","))
	}
	return strings.Join(parts, " | ")
}

// The near-linear mergeUnrelated gives exactly the reference's partitions
// (same partitions, same order, same node order in each) on random graphs:
// with the convex partitions partition.Group builds from a random claimed
// set, and with arbitrary random partitions of it; and so does it with
// merger.horizon's pruning turned off, which must walk more in all.
func TestMergeUnrelatedMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	merged, walked, walkedPlain := 0, 0, 0
	for iter := range 400 {
		n := 5 + rng.IntN(60)
		p := randomMergeProgram(t, rng, n)
		nodes := p.Main.Nodes()
		pos := make(map[*ir.Node]int, len(nodes))
		for i, x := range nodes {
			pos[x] = i
		}
		density := rng.IntN(4)
		claimed := map[*ir.Node]bool{}
		for _, x := range nodes {
			if !x.IsReturn() && rng.IntN(4) > density-1 {
				claimed[x] = true
			}
		}
		var groups [][]*ir.Node
		if iter%2 == 0 {
			groups = partition.Group(nodes, pos, func(x *ir.Node) bool { return claimed[x] })
		} else {
			k := 1 + rng.IntN(8)
			groups = make([][]*ir.Node, k)
			for _, x := range nodes {
				if claimed[x] {
					g := rng.IntN(k)
					groups[g] = append(groups[g], x)
				}
			}
			groups = slices.DeleteFunc(groups, func(g []*ir.Node) bool { return len(g) == 0 })
		}
		ref := make([][]*ir.Node, len(groups))
		for k, g := range groups {
			ref[k] = slices.Clone(g)
		}
		plain := make([][]*ir.Node, len(groups))
		for k, g := range groups {
			plain[k] = slices.Clone(g)
		}
		before := len(groups)
		want := groupNames(mergeUnrelatedRef(ref, pos))
		sortByFirst(groups, pos)
		m := newMerger(groups, pos)
		got := m.run()
		if g := groupNames(got); g != want {
			t.Fatalf("iteration %d: partitions\n%s\nwant (reference)\n%s\nprogram:\n%s", iter, g, want, ir.Print(p))
		}
		merged += before - len(got)
		// The same without merger.horizon's pruning: same partitions, and
		// over all cases the walks go on from more nodes.
		sortByFirst(plain, pos)
		mp := newMerger(plain, pos)
		mp.noHorizon = true
		if g := groupNames(mp.run()); g != want {
			t.Fatalf("iteration %d, without the horizon: partitions\n%s\nwant (reference)\n%s", iter, g, want)
		}
		walked += m.walked
		walkedPlain += mp.walked
	}
	if merged == 0 {
		t.Fatal("no random case merged anything: the comparison tested nothing")
	}
	t.Logf("%d merges across the random cases; the walks went on from %d nodes, %d without the horizon", merged, walked, walkedPlain)
	if walked >= walkedPlain {
		t.Errorf("the horizon pruned nothing: %d nodes walked, %d without it", walked, walkedPlain)
	}
}

// A chain of blocks, each with a node read from the inputs alone (a weight
// transpose or a mask, in a real model) and an undelegated node on the
// chain: the inputs-only nodes leave no cut node (merger.cuts), but the
// undelegated chain nodes form a spine (merger.spine) that separates every
// pair of blocks in O(1), and the merge still equals the reference.
func TestMergeUnrelatedSpineSeparatesBlocks(t *testing.T) {
	var body strings.Builder
	prev := "x"
	const blocks = 40
	for b := range blocks {
		fmt.Fprintf(&body, "  %%a%d: f32[4] = aten.relu.default(%%%s)\n", b, prev)
		fmt.Fprintf(&body, "  %%w%d: f32[4] = aten.relu.default(%%y)\n", b)
		fmt.Fprintf(&body, "  %%c%d: f32[4] = aten.add.Tensor(%%a%d, %%w%d)\n", b, b, b)
		fmt.Fprintf(&body, "  %%u%d: f32[4] = aten.abs.default(%%c%d)\n", b, b)
		prev = fmt.Sprintf("u%d", b)
	}
	src := fmt.Sprintf("input x: user_input\ninput y: user_input\noutput user_output\ngraph forward(%%x: f32[4], %%y: f32[4]) {\n%s  return %%%s\n}\n", body.String(), prev)
	p, err := ir.Parse([]byte(src), "spine.fxir")
	if err != nil {
		t.Fatal(err)
	}
	nodes := p.Main.Nodes()
	pos := make(map[*ir.Node]int, len(nodes))
	for i, x := range nodes {
		pos[x] = i
	}
	claimed := func(x *ir.Node) bool { return !x.IsReturn() && x.Op.Info().Name != "aten.abs.default" }
	groups := partition.Group(nodes, pos, claimed)
	if len(groups) != blocks {
		t.Fatalf("got %d partitions, want one per block (%d)", len(groups), blocks)
	}
	m := newMerger(groups, pos)
	separated, cut := 0, 0
	for i := range groups {
		for j := i + 1; j < len(groups); j++ {
			if m.first[j] > m.cut[i] || max(m.last[i], m.last[j]) > min(m.cut[i], m.cut[j]) {
				cut++
			}
			if m.spineSeparates(i, j) {
				separated++
			}
		}
	}
	if cut != 0 {
		t.Fatalf("the cut rule separates %d pairs: the test needs a program whose cuts separate nothing", cut)
	}
	if want := blocks * (blocks - 1) / 2; separated != want {
		t.Errorf("the spine separates %d pairs of blocks, want all %d", separated, want)
	}
	ref := make([][]*ir.Node, len(groups))
	for k, g := range groups {
		ref[k] = slices.Clone(g)
	}
	want := groupNames(mergeUnrelatedRef(ref, pos))
	if got := groupNames(mergeUnrelated(groups, pos)); got != want {
		t.Errorf("partitions\n%s\nwant (reference)\n%s", got, want)
	}
}

// merger.nextBelow finds what a linear scan finds, with leaves changed as
// merges change them.
func TestMergerNextBelowMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for iter := range 300 {
		n := 1 + rng.IntN(40)
		m := &merger{groups: make([][]*ir.Node, n)}
		m.size = 1
		for m.size < n {
			m.size *= 2
		}
		m.belows = make([]int, 2*m.size)
		for k := range m.belows {
			m.belows[k] = math.MaxInt
		}
		vals := make([]int, n)
		for k := range vals {
			vals[k] = rng.IntN(10) - 1
			m.setBelow(k, vals[k])
		}
		for step := range 50 {
			if step%5 == 4 {
				k := rng.IntN(n)
				vals[k] = math.MaxInt
				if rng.IntN(2) == 0 {
					vals[k] = rng.IntN(10) - 1
				}
				m.setBelow(k, vals[k])
			}
			lo, x := rng.IntN(n+1), rng.IntN(11)-1
			want := -1
			for k := lo; k < n; k++ {
				if vals[k] < x {
					want = k
					break
				}
			}
			if got := m.nextBelow(lo, x); got != want {
				t.Fatalf("iteration %d: nextBelow(%d, %d) = %d, want %d (values %v)", iter, lo, x, got, want, vals)
			}
		}
	}
}
