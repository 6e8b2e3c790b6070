package ir_test

import (
	"testing"

	"github.com/fxport/fxport/ir"
)

func graphNames(gs []*ir.Graph) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.Name
	}
	return out
}

func forEachNames(p *ir.Program) []string {
	var out []string
	p.ForEachGraph(func(g *ir.Graph) { out = append(out, g.Name) })
	return out
}

func sameNames(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
}

const nestedRegions = `graph forward(%pred: b8[], %x: f32[s0, 4]) {
  %cond: f32[s0, 4] = higher_order.cond(%pred, ^true_graph_0, ^false_graph_0, [%x])
  ^true_graph_0(%a: f32[s0, 4]) {
    %sin: f32[s0, 4] = aten.sin.default(%a)
    return %sin
  }
  ^false_graph_0(%a: f32[s0, 4]) {
    %neg: f32[s0, 4] = aten.neg.default(%a)
    return %neg
  }
  return %cond
}
`

// ForEachGraph visits what Graphs lists, in the same order, for parsed,
// cloned and region-free programs.
func TestForEachGraphMatchesGraphs(t *testing.T) {
	p, err := ir.Parse([]byte(nestedRegions), "regions.fxir")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"forward", "true_graph_0", "false_graph_0"}
	sameNames(t, "Graphs", graphNames(p.Graphs()), want)
	sameNames(t, "ForEachGraph", forEachNames(p), want)
	sameNames(t, "ForEachGraph of a clone", forEachNames(p.Clone()), want)
	if got := p.NumNodes(); got != 3 {
		t.Errorf("NumNodes = %d, want 3", got)
	}

	flat, err := ir.Parse([]byte("graph forward(%x: f32[4]) {\n  %y: f32[4] = aten.sin.default(%x)\n  return %y\n}\n"), "flat.fxir")
	if err != nil {
		t.Fatal(err)
	}
	sameNames(t, "region-free", forEachNames(flat), []string{"forward"})
}

// A region made for one program and attached to a node of a region-free
// program is walked there.
func TestForEachGraphSeesAdoptedRegion(t *testing.T) {
	donor, err := ir.Parse([]byte(nestedRegions), "regions.fxir")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ir.Parse([]byte("graph forward(%x: f32[4]) {\n  %y: f32[4] = aten.sin.default(%x)\n  return %y\n}\n"), "flat.fxir")
	if err != nil {
		t.Fatal(err)
	}
	region := donor.Main.First().Regions()[0]
	n := p.Main.First()
	n.SetArg(0, ir.GraphArg(region))
	want := []string{"forward", "true_graph_0"}
	sameNames(t, "Graphs after SetArg", graphNames(p.Graphs()), want)
	sameNames(t, "ForEachGraph after SetArg", forEachNames(p), want)
	if region.Parent != n {
		t.Errorf("adopted region's parent is not the node")
	}
}
