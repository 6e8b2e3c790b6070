package interp

import (
	"testing"

	"github.com/fxport/fxport/ir"
)

// executorch_prim.et_view (exir's memory.view) aliases its input: a later
// in-place write to the base shows through the view, where a view_copy
// keeps the values it copied; a -1 size is inferred. This is what lets
// difftest catch an aliasing rewrite that changes results.
func TestETViewAliases(t *testing.T) {
	out := runIR(t, `graph forward(%x: f32[2, 3]) {
  %r: f32[2, 3] = aten.relu.default(%x)
  %v: f32[6] = executorch_prim.et_view.default(%r, [-1])
  %c: f32[6] = aten.view_copy.default(%r, [6])
  %w: f32[2, 3] = aten.add_.Scalar(%r, 10)
  %nv: f32[6] = aten.neg.default(%v)
  %nc: f32[6] = aten.neg.default(%c)
  return %nv, %nc
}
`, f32(sh(2, 3), -1, 2, -3, 4, -5, 6))
	wantT(t, out[0], ir.Float32, sh(6), -10, -12, -10, -14, -10, -16)
	wantT(t, out[1], ir.Float32, sh(6), 0, -2, 0, -4, 0, -6)
}
