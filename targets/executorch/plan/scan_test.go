package plan_test

import (
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/plan"
)

const scanSrc = `graph forward(%x: f32[4,16], %init: f32[16], %w: f32[16]) {
  %a: f32[16] = aten.mul.Tensor(%init, %w)
  %scan: f32[16], %scan_1: f32[4,16] = higher_order.scan(^combine_graph_0, [%a], [%x], [%w])
  ^combine_graph_0(%carry: f32[16], %row: f32[16], %weight: f32[16]) {
    %m: f32[16] = aten.mul.Tensor(%carry, %weight)
    %next: f32[16] = aten.add.Tensor(%m, %row)
    %y: f32[16] = aten.sub.Tensor(%next, %carry)
    return %next, %y
  }
  %out: f32[16] = aten.add.Tensor(%scan, %a)
  return %out, %scan_1
}
`

// A scan's xs slice inputs get storage of their own, written at the top of
// each iteration and live to their last read in it, kept apart from the
// carry slots, the stacked output, the values live across the loop and the
// body values live while the slice is (%y, defined after the slice's last
// read, may take its bytes); the plan records the slices on the scan node
// and reads them back.
func TestScanSlicesPlanned(t *testing.T) {
	p := parse(t, scanSrc)
	pl := mustPlan(t, p, plan.DefaultOptions())
	if err := checkNoOverlap(pl); err != nil {
		t.Fatalf("%v\n%s", err, pl.Table())
	}
	n := p.Main.Nodes()[1]
	sl := plan.ScanSlices(n)
	if len(sl) != 1 || sl[0].Name != "row" {
		t.Fatalf("scan slices %v, want [%%row]", sl)
	}
	row, ok := pl.Lookup(sl[0])
	if !ok || row.Size != 64 {
		t.Fatalf("slice %%row planned %v (%v), want 64 bytes", row, ok)
	}
	g := n.Args[0].Graph
	loopVals := []*ir.Value{n.Results[0], n.Results[1], g.Value("m"), g.Value("next"), p.Main.Value("a"), p.Main.Value("x"), p.Main.Value("w")}
	for _, v := range loopVals {
		a, ok := pl.Lookup(v)
		if !ok {
			t.Fatalf("%s not planned", v)
		}
		if a.Offset < row.Offset+row.Size && row.Offset < a.Offset+a.Size {
			t.Errorf("%s [%d,%d) overlaps slice %%row [%d,%d)\n%s", v, a.Offset, a.Offset+a.Size, row.Offset, row.Offset+row.Size, pl.Table())
		}
	}
	plan.Record(p, pl)
	if s, ok := n.Meta.Get(plan.MetaScanSlices); !ok || s != row.String() {
		t.Fatalf("meta %s = %q, want %q", plan.MetaScanSlices, s, row.String())
	}
	rec, err := plan.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Allocs[sl[0]]; got != row {
		t.Errorf("read back %v for %%row, want %v", got, row)
	}
	n.Meta.Set(plan.MetaScanSlices, row.String()+","+row.String())
	if _, err := plan.Read(p); err == nil {
		t.Error("a mem.xs entry count mismatch was not reported")
	}
}
