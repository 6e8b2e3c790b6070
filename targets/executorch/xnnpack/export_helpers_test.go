package xnnpack_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/internal/ettest"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/run"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// Export-and-run helpers of the numeric XNNPACK tests: a program exported
// for XNNPACK next to what the interpreter computes on it unlowered.

// xnnCase is a program exported for XNNPACK.
type xnnCase struct {
	p    *ir.Program    // the lowered program
	f    *pte.File      // emitted, encoded and decoded
	ins  []interp.Value // the inputs
	want []interp.Value // the interpreter's outputs on the unlowered IR
}

// xnnExport parses src (name.fxir), runs the interpreter on it with the
// inputs made from the unlowered program, lowers it with executorch.xnnpack
// (or the pipeline text) and emits, encodes and decodes it (name.pte).
func xnnExport(t *testing.T, src, name, text string, inputs func(ref *ir.Program) []interp.Value) *xnnCase {
	t.Helper()
	ref := ettest.Parse(t, src, name+".fxir")
	c := &xnnCase{ins: inputs(ref)}
	res, err := interp.Run(ref, c.ins, interp.Options{})
	if err != nil {
		t.Fatalf("interpreter: %v", err)
	}
	c.want = res.Outputs
	c.p = ettest.Parse(t, src, name+".fxir")
	lower(t, c.p, text)
	c.f, _ = ettest.Emit(t, c.p, name+".pte", emit.Options{NoMetadataMethod: true})
	return c
}

// run runs the file on the inputs.
func (c *xnnCase) run(t *testing.T) []interp.Value {
	t.Helper()
	got, err := run.Run(c.f, c.ins, run.Options{})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, ir.Print(c.p))
	}
	return got
}

// inputs returns an inputs function of xnnExport that ignores the program.
func inputs(vs ...interp.Value) func(*ir.Program) []interp.Value {
	return func(*ir.Program) []interp.Value { return vs }
}

// wantAllDelegated fails unless every node of p's main graph is an
// XNNPACK delegate call.
func wantAllDelegated(t *testing.T, p *ir.Program) {
	t.Helper()
	for _, n := range p.Main.Nodes() {
		if n.Op != xnnpack.OpCallDelegate {
			t.Fatalf("%s left outside the delegate:\n%s", n.Op.Info().Name, ir.Print(p))
		}
	}
}

// delegateKinds lists the node kinds of f's XNNPACK delegate graphs.
func delegateKinds(f *pte.File) []string {
	var kinds []string
	for _, d := range f.Methods[0].Delegates {
		if d.XNNPACK == nil {
			continue
		}
		for _, n := range d.XNNPACK.Graph.Xnodes {
			kinds = append(kinds, n.XnodeUnion.Type.String())
		}
	}
	return kinds
}

// countKind counts kind in kinds.
func countKind(kinds []string, kind string) int {
	n := 0
	for _, k := range kinds {
		if k == kind {
			n++
		}
	}
	return n
}

// wantWithin checks got against the interpreter's outputs: as many, each a
// tensor of the same dtype and shape whose elements differ by at most
// tol(interpreter's element). note ends a failure's message.
func wantWithin(t *testing.T, got, want []interp.Value, tol func(w float64) float64, note string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d outputs, want %d", len(got), len(want))
	}
	for i := range got {
		g, ok1 := got[i].(*interp.Tensor)
		w, ok2 := want[i].(*interp.Tensor)
		if !ok1 || !ok2 {
			t.Fatalf("output %d: %s vs %s", i, interp.Describe(got[i]), interp.Describe(want[i]))
		}
		if g.DType != w.DType || fmt.Sprint(g.Shape) != fmt.Sprint(w.Shape) {
			t.Fatalf("output %d: %s%v, want %s%v", i, g.DType, g.Shape, w.DType, w.Shape)
		}
		gs, ws := g.Float64s(), w.Float64s()
		for k := range ws {
			if d := math.Abs(gs[k] - ws[k]); !(d <= tol(ws[k])) {
				t.Fatalf("output %d[%d] = %g, interpreter %g (tolerance %g) %s", i, k, gs[k], ws[k], tol(ws[k]), note)
			}
		}
	}
}

// within is a fixed tolerance of wantWithin (0: exact).
func within(d float64) func(float64) float64 { return func(float64) float64 { return d } }

// wantDistinct fails when v, a tensor of several elements, holds fewer
// than 4 distinct values: comparing it would say little.
func wantDistinct(t *testing.T, v interp.Value) {
	t.Helper()
	ws := v.(*interp.Tensor).Float64s()
	distinct := map[float64]bool{}
	for _, w := range ws {
		distinct[w] = true
	}
	if len(distinct) < 4 {
		t.Errorf("degenerate outputs %v", ws)
	}
}
