package cuda_test

import (
	"testing"

	"github.com/fxport/fxport/difftest"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// The partition keeps the program's meaning, checked by interpreting it
// before and after (difftest): several partitions, device results passed
// on, item()s boxed into a later partition, s0*2 computed in the region.
func TestPartitionKeepsMeaning(t *testing.T) {
	pl, err := pm.ParsePipeline("executorch.cuda: executorch.lowering(cuda-partition)")
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{
		"split": split,
		"chain": `graph forward(%x: f32[4], %n: i64[4]) {
  %relu: f32[4] = aten.relu.default(%x)
  %sum: i64[] = aten.sum.default(%n)
  %a: Sym(u0) = aten._local_scalar_dense.default(%sum)
  %mul: f32[4] = aten.mul.Scalar(%relu, %a)
  %gt: b8[4] = aten.gt.Scalar(%mul, 0)
  %cnt: i64[] = aten.sum.default(%gt)
  %b: Sym(u1) = aten._local_scalar_dense.default(%cnt)
  %mul_1: f32[4] = aten.mul.Scalar(%mul, %b)
  %add_1: f32[4] = aten.add.Tensor(%mul_1, %relu)
  return %add_1
}
`,
		"computed": `symbol s0: [1, 8] hint 2
graph forward(%x: f32[s0, 4]) {
  %sym_size: Sym(s0) = aten.sym_size.int(%x, 0)
  %mul: Sym(2*s0) = operator.mul(%sym_size, 2)
  %relu: f32[s0, 4] = aten.relu.default(%x)
  %view: f32[2*s0, 2] = aten.view.default(%relu, [%mul, 2])
  return %view
}
`,
	} {
		p, err := ir.Parse([]byte(src), name+".fxir")
		if err != nil {
			t.Fatal(err)
		}
		if err := difftest.Check(p, pl); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
