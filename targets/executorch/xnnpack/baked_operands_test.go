package xnnpack_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// bakedMixSrc is one delegate region reading baked constants (the linear
// weight and bias) and runtime ones (an existing lifted constant of an
// add, and the 2.0 of a mul that liftScalars lifts next to it).
var bakedMixSrc = `input p_w: parameter "w"
input p_b: parameter "b"
input c_lifted_tensor_0: constant_tensor "_lifted_tensor_constant0"
input x: user_input
output user_output
weight "w": f32[4, 4] = inline("` + strings.Repeat("0000803f", 16) + `")
weight "b": f32[4] = inline("` + strings.Repeat("00000040", 4) + `")
weight "_lifted_tensor_constant0": f32[] = inline("00004040")
graph forward(%p_w: f32[4, 4], %p_b: f32[4], %c_lifted_tensor_0: f32[], %x: f32[2, 4]) {
  %l: f32[2, 4] = aten.linear.default(%x, %p_w, %p_b)
  %m: f32[2, 4] = aten.mul.Tensor(%l, 2.0)
  %a: f32[2, 4] = aten.add.Tensor(%m, %c_lifted_tensor_0)
  return %a
}
`

// TestBakedOperands: for every operand of every delegate call,
// BakedOperands answers what BakesOperand answers, and the region holds
// both kinds (weights baked, generic ops' constants passed at run time);
// values that are not operands, and calls that are not XNNPACK calls,
// bake.
func TestBakedOperands(t *testing.T) {
	p := loweredScalar(t, bakedMixSrc)
	baked, runtime := 0, 0
	calls := 0
	for _, n := range p.Main.Nodes() {
		b := xnnpack.BakedOperands(n)
		if n.Op != xnnpack.OpCallDelegate {
			for _, v := range n.Operands() {
				if !b.Bakes(v) {
					t.Errorf("%s: operand %s of a non-delegate node not baked", n.Short(), v)
				}
			}
			continue
		}
		calls++
		for _, v := range n.Operands() {
			got, want := b.Bakes(v), xnnpack.BakesOperand(n, v)
			if got != want {
				t.Errorf("%s: operand %s: BakedOperands says %v, BakesOperand %v", n.Short(), v, got, want)
			}
			if !v.IsInput() || !xnnpack.IsConstantKind(p.Signature.Inputs[v.Index].Kind) {
				continue
			}
			if got {
				baked++
			} else {
				runtime++
			}
		}
		for _, r := range n.Results {
			if !b.Bakes(r) {
				t.Errorf("%s: result %s (not an operand) not baked", n.Short(), r)
			}
		}
	}
	if calls == 0 {
		t.Fatalf("no delegate call:\n%s", ir.Print(p))
	}
	if baked < 2 || runtime < 2 {
		t.Errorf("%d baked and %d runtime constant operands, want the weight and bias baked and both lifted constants at run time:\n%s", baked, runtime, ir.Print(p))
	}
}

// TestLiftedNamesSkipTaken: a lifted scalar is named after the constants
// the program already holds, and every lifted target is distinct.
func TestLiftedNamesSkipTaken(t *testing.T) {
	p := loweredScalar(t, bakedMixSrc)
	var targets []string
	for _, s := range p.Signature.Inputs {
		if strings.HasPrefix(s.Target, "_lifted_tensor_constant") {
			targets = append(targets, s.Target)
		}
	}
	slices.Sort(targets)
	if want := []string{"_lifted_tensor_constant0", "_lifted_tensor_constant1"}; !slices.Equal(targets, want) {
		t.Errorf("lifted targets %v, want %v", targets, want)
	}
	if w := p.Weight("_lifted_tensor_constant1"); w == nil || w.Type.String() != "f32[]" {
		t.Errorf("weight of the lifted 2.0: %v", w)
	}
}
