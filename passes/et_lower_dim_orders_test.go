package passes

import (
	"slices"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// propagate-dim-orders: after to-edge-views, pointwise results follow
// their operands by TensorIterator's rule, view copies are contiguous, ops
// that laid their result out like their first operand keep following it,
// and results with a layout of their own keep it.
func TestPropagateDimOrders(t *testing.T) {
	src := `graph forward(%x: f32[2, 4, 10, 16], %c: f32[2, 3, 4, 5]{0,2,3,1}, %b: f32[3, 1, 1]) {
  %p: f32[2, 10, 4, 16]{0,2,1,3} = aten.permute.default(%x, [0, 2, 1, 3])
  %v: f32[2, 10, 64] = aten.view.default(%p, [2, 10, 64])
  %mul: f32[2, 4, 10, 16]{2,0,1,3} = aten.mul.Scalar(%x, 0.5)
  %pm: f32[2, 10, 4, 16]{0,2,1,3} = aten.mul.Scalar(%p, 2)
  %sm: f32[2, 10, 4, 16]{0,2,1,3} = aten._softmax.default(%pm, -1, False)
  %cl: f32[2, 3, 4, 5]{0,2,3,1} = aten.add.Tensor(%c, %b)
  %mix: f32[2, 3, 4, 5]{0,2,3,1} = aten.mul.Tensor(%c, %c)
  %m2: f32[2, 3, 4, 5] = aten.clone.default(%mix, memory_format=torch.contiguous_format)
  return %v, %mul, %sm, %cl, %m2
}
`
	p, err := ir.Parse([]byte(src), "dim_orders.fxir")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pm.ParsePipeline("executorch.portable: executorch.lowering(to-dim-order-ops, to-edge-views, propagate-dim-orders)")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{
		"p":   {0, 1, 2, 3}, // permute_copy: contiguous
		"mul": {0, 1, 2, 3}, // torch's {2,0,1,3} came from a view; x is contiguous
		"pm":  {0, 1, 2, 3}, // follows the permute_copy
		"sm":  {0, 1, 2, 3}, // laid out like its operand, which is now contiguous
		"cl":  {0, 2, 3, 1}, // channels-last operand decides; the bias broadcasts
		"mix": {0, 2, 3, 1},
	}
	got := map[string][]int{}
	for _, n := range p.Main.Nodes() {
		for _, r := range n.Results {
			if r.Tensor() != nil {
				got[r.Name] = EtCanonicalDimOrder(r.Tensor())
			}
		}
	}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Errorf("%%%s: dim order %v, want %v", name, got[name], w)
		}
	}
	pr, ok := rep.Pass(etlDimOrdersName)
	if !ok {
		t.Fatal("no report for the pass")
	}
	// to-edge-views re-infers the users of the permute_copy it built (pm,
	// sm); mul's operand did not change, so only this pass fixes it.
	if n := pr.Stat("dim-orders-changed"); n != 1 {
		t.Errorf("dim-orders-changed = %d, want 1", n)
	}
}

// propagate-dim-orders: a convolution follows its input's layout, so the
// portable kernel sees input and out in one dim order: torch traced a
// channels-last input (a permuted view) and result; the view is now a
// contiguous copy, so the result is contiguous too. A genuine channels-last
// input keeps a channels-last result, a contiguous one a contiguous result.
func TestPropagateDimOrdersConvolution(t *testing.T) {
	src := `graph forward(%x: f32[2, 4, 4, 3], %c: f32[2, 3, 4, 4]{0,2,3,1}, %d: f32[2, 3, 4, 4], %w: f32[5, 3, 1, 1]) {
  %p: f32[2, 3, 4, 4]{0,2,3,1} = aten.permute.default(%x, [0, 3, 1, 2])
  %conv: f32[2, 5, 4, 4]{0,2,3,1} = aten.convolution.default(%p, %w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
  %conv2: f32[2, 5, 4, 4] = aten.convolution.default(%c, %w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
  %conv3: f32[2, 5, 4, 4]{0,2,3,1} = aten.convolution.default(%d, %w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
  return %conv, %conv2, %conv3
}
`
	p, err := ir.Parse([]byte(src), "conv_dim_orders.fxir")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pm.ParsePipeline("executorch.portable: executorch.lowering(to-dim-order-ops, to-edge-views, propagate-dim-orders)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{
		"p":     {0, 1, 2, 3},
		"conv":  {0, 1, 2, 3},
		"conv2": {0, 2, 3, 1},
		"conv3": {0, 1, 2, 3},
	}
	for _, n := range p.Main.Nodes() {
		for _, r := range n.Results {
			if w, ok := want[r.Name]; ok && !slices.Equal(EtCanonicalDimOrder(r.Tensor()), w) {
				t.Errorf("%%%s: dim order %v, want %v", r.Name, EtCanonicalDimOrder(r.Tensor()), w)
			}
		}
	}
}

// TensorIterator's order: the first operand that orders two dims decides;
// a broadcast operand is skipped.
func TestIteratorOrder(t *testing.T) {
	src := `graph forward(%a: f32[2, 3, 4]{2,0,1}, %b: f32[2, 3, 4]{1,0,2}, %s: f32[4]) {
  %ab: f32[2, 3, 4] = aten.add.Tensor(%a, %b)
  %ba: f32[2, 3, 4] = aten.add.Tensor(%b, %a)
  %sa: f32[2, 3, 4] = aten.add.Tensor(%s, %a)
  return %ab, %ba, %sa
}
`
	p, err := ir.Parse([]byte(src), "iter.fxir")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{"ab": {2, 0, 1}, "ba": {1, 0, 2}, "sa": {2, 0, 1}}
	for _, n := range p.Main.Nodes() {
		if n.IsReturn() {
			continue
		}
		r := n.Result()
		if got := etlIteratorOrder(n, r.Tensor()); !slices.Equal(got, want[r.Name]) {
			t.Errorf("%%%s: %v, want %v", r.Name, got, want[r.Name])
		}
	}
}
