package partition_test

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/partition"
)

func parse(t *testing.T, src string) (*ir.Program, map[*ir.Node]int) {
	t.Helper()
	p, err := ir.Parse([]byte(src), "partition_test.fxir")
	if err != nil {
		t.Fatal(err)
	}
	pos := map[*ir.Node]int{}
	for i, n := range p.Main.Nodes() {
		pos[n] = i
	}
	return p, pos
}

// node returns the node defining %name.
func node(t *testing.T, p *ir.Program, name string) *ir.Node {
	t.Helper()
	v := p.Main.Value(name)
	if v == nil || v.Def == nil {
		t.Fatalf("no node defines %%%s", name)
	}
	return v.Def
}

// names lists the first result names of groups, "|" between groups.
func names(groups [][]*ir.Node) string {
	var gs []string
	for _, g := range groups {
		var ns []string
		for _, n := range g {
			ns = append(ns, n.Results[0].Name)
		}
		gs = append(gs, strings.Join(ns, ","))
	}
	return strings.Join(gs, "|")
}

// claimAllBut claims every node except the named ones.
func claimAllBut(names ...string) func(*ir.Node) bool {
	return func(n *ir.Node) bool {
		for _, s := range names {
			if n.Results[0].Name == s {
				return false
			}
		}
		return true
	}
}

// a feeds b directly and through the unclaimed c: {a, b} is not convex
// (a → c → b leaves it and comes back), {a} and {b} are.
const detour = `graph forward(%x: f32[4]) {
  %a: f32[4] = aten.relu.default(%x)
  %c: f32[4] = aten.cumsum.default(%a, 0)
  %b: f32[4] = aten.add.Tensor(%a, %c)
  %d: f32[4] = aten.neg.default(%b)
  return %d
}
`

func TestConvex(t *testing.T) {
	p, pos := parse(t, detour)
	a, b, c, d := node(t, p, "a"), node(t, p, "b"), node(t, p, "c"), node(t, p, "d")
	for _, tc := range []struct {
		set  []*ir.Node
		want bool
	}{
		{[]*ir.Node{a}, true},
		{[]*ir.Node{a, b}, false}, // a → c → b
		{[]*ir.Node{a, c, b}, true},
		{[]*ir.Node{b, d}, true},
		{[]*ir.Node{a, d}, false}, // a → b → d
		{[]*ir.Node{c, b, d}, true},
	} {
		if got := partition.Convex(tc.set, pos); got != tc.want {
			t.Errorf("Convex(%s) = %v, want %v", names([][]*ir.Node{tc.set}), got, tc.want)
		}
	}
}

func TestGroupKeepsGroupsConvex(t *testing.T) {
	p, pos := parse(t, detour)
	// c unclaimed: b cannot join a's group (a → c → b), so it starts a
	// new one that d joins.
	got := names(partition.Group(p.Main.Nodes(), pos, claimAllBut("c")))
	if want := "a|b,d"; got != want {
		t.Errorf("groups %q, want %q", got, want)
	}
	// Everything claimed: one group.
	got = names(partition.Group(p.Main.Nodes(), pos, claimAllBut()))
	if want := "a,c,b,d"; got != want {
		t.Errorf("groups %q, want %q", got, want)
	}
	if g := partition.Group(p.Main.Nodes(), pos, func(*ir.Node) bool { return false }); len(g) != 0 {
		t.Errorf("nothing claimed gave groups %q", names(g))
	}
}

// Two groups that a later node joins merge, the later group's nodes after
// the earlier's; when the union with both is not convex, the node joins the
// larger group alone.
func TestGroupMergesAndPicksLargest(t *testing.T) {
	p, pos := parse(t, `graph forward(%x: f32[4], %y: f32[4]) {
  %b1: f32[4] = aten.relu.default(%y)
  %a1: f32[4] = aten.relu.default(%x)
  %a2: f32[4] = aten.neg.default(%a1)
  %b2: f32[4] = aten.neg.default(%b1)
  %m: f32[4] = aten.add.Tensor(%a2, %b2)
  return %m
}
`)
	// b1 starts group 0, a1 group 1; m merges both into group 0.
	groups := partition.Group(p.Main.Nodes(), pos, claimAllBut())
	if got, want := names(groups), "b1,b2,a1,a2,m"; got != want {
		t.Errorf("groups %q, want %q", got, want)
	}
	if got, want := names(partition.InGraphOrder(groups, pos)), "b1,a1,a2,b2,m"; got != want {
		t.Errorf("in graph order %q, want %q", got, want)
	}

	p, pos = parse(t, `graph forward(%x: f32[4], %y: f32[4]) {
  %a1: f32[4] = aten.relu.default(%x)
  %a2: f32[4] = aten.neg.default(%a1)
  %b1: f32[4] = aten.relu.default(%y)
  %s: f32[4] = aten.cumsum.default(%a2, 0)
  %b2: f32[4] = aten.add.Tensor(%b1, %s)
  %m: f32[4] = aten.add.Tensor(%a2, %b2)
  return %m
}
`)
	// m reads a2 (group {a1, a2}) and b2 (group {b1, b2}); the union is
	// not convex (a2 → s → b2), nor is {a…, m} (a2 → s → b2 → m); m
	// joins {b1, b2}, the larger-or-first group it can join.
	got := names(partition.InGraphOrder(partition.Group(p.Main.Nodes(), pos, claimAllBut("s")), pos))
	if want := "a1,a2|b1,b2,m"; got != want {
		t.Errorf("groups %q, want %q", got, want)
	}
}

func TestBoundary(t *testing.T) {
	p, _ := parse(t, detour)
	g := []*ir.Node{node(t, p, "b"), node(t, p, "d")}
	in, out := partition.Boundary(g)
	if got := valueNames(in); got != "a,c" {
		t.Errorf("inputs %s, want a,c", got)
	}
	if got := valueNames(out); got != "d" {
		t.Errorf("outputs %s, want d", got)
	}
	in, out = partition.Boundary([]*ir.Node{node(t, p, "a")})
	if valueNames(in) != "x" || valueNames(out) != "a" {
		t.Errorf("boundary of a: %s → %s, want x → a", valueNames(in), valueNames(out))
	}
}

func valueNames(vs []*ir.Value) string {
	var s []string
	for _, v := range vs {
		s = append(s, v.Name)
	}
	return strings.Join(s, ",")
}

var spec = partition.Spec{Backend: "TestBackend", Region: "test_region", Pass: "test-partition", Prefix: "test partition"}

// Outlining {a, b} of a graph where the unrelated-but-dependent k sits
// between them: k moves after the call, the call's results keep the names
// of a and b, and the program verifies.
func TestOutline(t *testing.T) {
	p, _ := parse(t, `graph forward(%x: f32[4], %y: f32[4]) {
  %a: f32[4] = aten.relu.default(%x)
  %k: f32[4] = aten.cumsum.default(%a, 0)
  %j: f32[4] = aten.cumsum.default(%y, 0)
  %b: f32[4] = aten.add.Tensor(%a, %j)
  %c: f32[4] = aten.mul.Tensor(%k, %b)
  return %c, %a
}
`)
	call, err := partition.Outline([]*ir.Node{node(t, p, "a"), node(t, p, "b")}, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(p); err != nil {
		t.Fatalf("outlined program does not verify: %v\n%s", err, ir.Print(p))
	}
	want := `graph forward(%x: f32[4], %y: f32[4]) {
  %j: f32[4] = aten.cumsum.default(%y, 0)
  %a: f32[4], %b: f32[4] = higher_order.executorch_call_delegate(^test_region, "TestBackend", %x, %j) {provenance = "test-partition"}
  ^test_region(%x: f32[4], %j: f32[4]) {
    %a: f32[4] = aten.relu.default(%x)
    %b: f32[4] = aten.add.Tensor(%a, %j)
    return %a, %b
  }
  %k: f32[4] = aten.cumsum.default(%a, 0)
  %c: f32[4] = aten.mul.Tensor(%k, %b)
  return %c, %a
}`
	if got := ir.PrintGraph(p.Main); !strings.Contains(got, want) {
		t.Errorf("main graph:\n%s\nwant:\n%s", got, want)
	}
	region := call.Args[0].Graph
	if region == nil || region.Name != "test_region" {
		t.Fatalf("call has no region test_region: %s", call.LongString())
	}
}

// A group none of whose results is used is left alone.
func TestOutlineUnusedGroup(t *testing.T) {
	p, _ := parse(t, `graph forward(%x: f32[4]) {
  %a: f32[4] = aten.relu.default(%x)
  %b: f32[4] = aten.neg.default(%x)
  return %b
}
`)
	before := ir.Print(p)
	call, err := partition.Outline([]*ir.Node{node(t, p, "a")}, spec)
	if err != nil || call != nil {
		t.Fatalf("Outline = %v, %v; want nil, nil", call, err)
	}
	if after := ir.Print(p); after != before {
		t.Errorf("program changed:\n%s", after)
	}
}

func TestRemapList(t *testing.T) {
	p, _ := parse(t, `graph forward(%x: f32[4], %y: f32[4]) {
  %s: f32[4] = aten.add.Tensor(%x, %y)
  return %s
}
`)
	x, y, s := p.Main.Value("x"), p.Main.Value("y"), p.Main.Value("s")
	vmap := map[*ir.Value]*ir.Value{x: s, y: x}
	a := ir.ListArg(ir.ValueArg(x), ir.IntArg(3), ir.ValueArg(y))
	got := partition.Remap(a, vmap)
	if got.Kind != ir.ArgList || len(got.List) != 3 || got.List[0].Value != s || got.List[1].Int != 3 || got.List[2].Value != x {
		t.Errorf("Remap = %+v", got)
	}
	if a.List[0].Value != x {
		t.Errorf("Remap changed its argument")
	}
}

// MapValues reaches values in nested lists and leaves literals alone.
func TestMapValuesNested(t *testing.T) {
	p, _ := parse(t, `graph forward(%x: f32[4]) {
  %s: f32[4] = aten.relu.default(%x)
  return %s
}
`)
	x := p.Main.Value("x")
	a := ir.ListArg(ir.ListArg(ir.ValueArg(x), ir.FloatArg(0.5)), ir.ValueArg(x))
	n := 0
	got := partition.MapValues(a, func(v ir.Arg) ir.Arg {
		n++
		return ir.IntArg(int64(n))
	})
	if n != 2 || got.List[0].List[0].Int != 1 || got.List[0].List[1].Float != 0.5 || got.List[1].Int != 2 {
		t.Errorf("MapValues = %+v after %d calls", got, n)
	}
	if a.List[0].List[0].Value != x {
		t.Errorf("MapValues changed its argument")
	}
}
