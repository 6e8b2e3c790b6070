package onnx

import (
	"testing"

	"github.com/fxport/fxport/ir"
)

// An as_strided that reads its contiguous input in order is a Reshape, so a
// symbolic size list (adaptive_avg_pool1d under a dynamic batch, swin's
// pooler in docs/models.md) lowers; ORT agrees with the interpreter.
func TestAsStridedSymbolicReshape(t *testing.T) {
	needORT(t)
	src := `symbol s0: [1, 8] hint 3
graph forward(%x: f32[s0, 32, 1]) {
  %n: Sym(s0) = aten.sym_size.int(%x, 0)
  %y: f32[s0, 32, 1, 1] = aten.as_strided.default(%x, [%n, 32, 1, 1], [32, 1, 1, 1])
  %z: f32[s0, 32, 1, 1] = aten.relu.default(%y)
  return %z
}
`
	p := parse(t, src)
	for _, n := range p.Main.Nodes() {
		if n.Op == ir.OpAtenAsStrided && !asStridedIsReshape(n) {
			t.Fatal("in-order as_strided not recognized as a reshape")
		}
	}
	checkInORT(t, p, 18, 1e-6)

	// Overlapping windows are not a reshape (the Gather path keeps them).
	q := parse(t, `graph forward(%x: f32[8]) {
  %y: f32[3, 4] = aten.as_strided.default(%x, [3, 4], [2, 1])
  return %y
}
`)
	for _, n := range q.Main.Nodes() {
		if n.Op == ir.OpAtenAsStrided && asStridedIsReshape(n) {
			t.Error("overlapping as_strided taken for a reshape")
		}
	}
	checkInORT(t, q, 18, 0)
}
