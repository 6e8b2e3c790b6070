package partition_test

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/partition"
)

// order lists the main graph's nodes by first result name (a delegate
// call by its region's name).
func order(p *ir.Program) string {
	var ns []string
	for _, n := range p.Main.Nodes() {
		if n.Op == partition.OpCallDelegate {
			ns = append(ns, "^"+n.Args[0].Graph.Name)
			continue
		}
		ns = append(ns, n.Results[0].Name)
	}
	return strings.Join(ns, ",")
}

func legalize(t *testing.T, p *ir.Program, calls ...*ir.Node) {
	t.Helper()
	if err := partition.Legalize(p.Main, calls); err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(p); err != nil {
		t.Fatalf("re-sorted program does not verify: %v\n%s", err, ir.Print(p))
	}
}

// Independent chains written one after the other come out interleaved,
// breadth-first from the placeholders, as legalize_graph's FIFO queue
// emits them; the join waits for both.
func TestLegalizeInterleavesBranches(t *testing.T) {
	p, _ := parse(t, `graph forward(%x: f32[4], %y: f32[4]) {
  %a1: f32[4] = aten.relu.default(%x)
  %a2: f32[4] = aten.neg.default(%a1)
  %a3: f32[4] = aten.tanh.default(%a2)
  %b1: f32[4] = aten.relu.default(%y)
  %b2: f32[4] = aten.neg.default(%b1)
  %out: f32[4] = aten.add.Tensor(%a3, %b2)
  return %out
}
`)
	legalize(t, p)
	if got, want := order(p), "a1,b1,a2,b2,a3,out"; got != want {
		t.Errorf("order %s, want %s", got, want)
	}
	text := ir.Print(p)
	legalize(t, p)
	if ir.Print(p) != text {
		t.Errorf("a second sort changed a sorted graph")
	}
}

// A delegate call's results reach their users through getitem nodes in
// FX, one more queue step: the independent chain gets one node ahead.
func TestLegalizeDelegateResultsThroughGetitem(t *testing.T) {
	p, _ := parse(t, `graph forward(%x: f32[4], %y: f32[4]) {
  %c: f32[4] = aten.relu.default(%x)
  %u: f32[4] = aten.cumsum.default(%c, 0)
  %v1: f32[4] = aten.neg.default(%y)
  %v2: f32[4] = aten.neg.default(%v1)
  %v3: f32[4] = aten.neg.default(%v2)
  return %u, %v3
}
`)
	call, err := partition.Outline([]*ir.Node{node(t, p, "c")}, partition.Spec{Backend: "B", Region: "r0", Pass: "test", Prefix: "test"})
	if err != nil || call == nil {
		t.Fatalf("outline: %v", err)
	}
	legalize(t, p, call)
	if got, want := order(p), "^r0,v1,v2,u,v3"; got != want {
		t.Errorf("order %s, want %s", got, want)
	}
}

// An earlier delegate call waits for its lowered module's get_attr, which
// is seeded after the operand-less nodes; the call just made has none.
func TestLegalizeEarlierCallWaitsForGetAttr(t *testing.T) {
	p, _ := parse(t, `graph forward(%x: f32[4]) {
  %a: f32[4] = aten.relu.default(%x)
  %b: f32[4] = aten.tanh.default(%x)
  %z: f32[4] = aten.zeros.default([4])
  %s: f32[4] = aten.add.Tensor(%a, %z)
  %t: f32[4] = aten.add.Tensor(%b, %z)
  return %s, %t
}
`)
	spec := func(r string) partition.Spec {
		return partition.Spec{Backend: "B", Region: r, Pass: "test", Prefix: "test"}
	}
	c0, err := partition.Outline([]*ir.Node{node(t, p, "b")}, spec("r0"))
	if err != nil {
		t.Fatal(err)
	}
	legalize(t, p, c0)
	if got, want := order(p), "z,a,^r0,s,t"; got != want {
		t.Fatalf("first sort: order %s, want %s", got, want)
	}
	c1, err := partition.Outline([]*ir.Node{node(t, p, "a")}, spec("r1"))
	if err != nil {
		t.Fatal(err)
	}
	legalize(t, p, c0, c1)
	// x releases r1 (no get_attr yet); r0 waits for its get_attr, seeded after z.
	if got, want := order(p), "z,^r1,^r0,s,t"; got != want {
		t.Errorf("second sort: order %s, want %s", got, want)
	}
}

// Groups are fused latest-first; equal ends keep their order.
func TestLatestFirst(t *testing.T) {
	p, pos := parse(t, `graph forward(%x: f32[4]) {
  %a: f32[4] = aten.relu.default(%x)
  %b: f32[4] = aten.neg.default(%a)
  %c: f32[4] = aten.tanh.default(%b)
  %d: f32[4] = aten.sigmoid.default(%c)
  return %d
}
`)
	n := func(s string) *ir.Node { return node(t, p, s) }
	groups := [][]*ir.Node{{n("a"), n("c")}, {n("b")}, {n("d")}}
	partition.LatestFirst(groups, pos)
	if got, want := names(groups), "d|a,c|b"; got != want {
		t.Errorf("groups %s, want %s", got, want)
	}
}

// Symbolic arithmetic jumps the queue once ready (legalize_graph's
// prioritized ops go to the deque's front).
func TestLegalizePrioritizesSymbolicArithmetic(t *testing.T) {
	p, _ := parse(t, `graph forward(%x: f32[s0, 4], %y: f32[4]) {
  %n: Sym(s0) = aten.sym_size.int(%x, 0)
  %a: f32[s0, 4] = aten.relu.default(%x)
  %b: f32[4] = aten.neg.default(%y)
  %m: Sym(s0 + 1) = operator.add(%n, 1)
  %c: f32[4] = aten.tanh.default(%b)
  return %a, %c, %m
}
`)
	legalize(t, p)
	// x releases n and a; y releases b; n releases m, which goes first.
	if got, want := order(p), "n,m,a,b,c"; got != want {
		t.Errorf("order %s, want %s", got, want)
	}
}
