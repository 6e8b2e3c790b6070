package xnnpack_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// A memory-format change into channels-last and back is delegated as
// XNNStaticTranspose; the channels-last result is also a delegate output,
// declared with NHWC dims, which the runtime reads as the buffer's memory
// order (run permutes it back to the logical order).
func TestNumericDimOrderCopy(t *testing.T) {
	got := checkNumeric(t, `input x: user_input
output user_output
output user_output
graph forward(%x: f32[1, 3, 4, 5]) {
  %a: f32[1, 3, 4, 5] = aten.relu.default(%x)
  %c: f32[1, 3, 4, 5]{0,2,3,1} = dim_order_ops._to_dim_order_copy.default(%a, dim_order=[0, 2, 3, 1])
  %d: f32[1, 3, 4, 5] = dim_order_ops._to_dim_order_copy.default(%c, dim_order=[0, 1, 2, 3])
  %e: f32[1, 3, 4, 5] = aten.neg.default(%d)
  return %c, %e
}
`, []string{"XNNStaticTranspose", "XNNNegate", "XNNClamp"}, []string{"dim_order_ops._to_dim_order_copy.default"})
	if n := countKind(got, "XNNStaticTranspose"); n != 2 {
		t.Errorf("%d transposes, want 2 (into and out of channels-last): %v", n, got)
	}
}

// A channels-last delegate input (made by a portable cast that also
// changes the dim order) is read as NHWC memory and cloned into the
// contiguous order (_clone_dim_order with a dim-order change); a clone that
// keeps the order is an XNNCopy.
func TestNumericDimOrderCloneInput(t *testing.T) {
	checkNumeric(t, `input x: user_input
output user_output
output user_output
graph forward(%x: f16[2, 3, 4, 5]) {
  %l: f32[2, 3, 4, 5]{0,2,3,1} = dim_order_ops._to_dim_order_copy.default(%x, dtype=torch.float32, dim_order=[0, 2, 3, 1])
  %c: f32[2, 3, 4, 5] = dim_order_ops._clone_dim_order.default(%l, dim_order=[0, 1, 2, 3])
  %s: f32[2, 3, 4, 5] = aten.sigmoid.default(%c)
  %k: f32[2, 3, 4, 5] = dim_order_ops._clone_dim_order.default(%s)
  %m: f32[2, 3, 4, 5] = aten.mul.Tensor(%k, %c)
  return %m, %k
}
`, []string{"XNNStaticTranspose", "XNNCopy", "XNNSigmoid", "XNNMultiply"}, []string{"dim_order_ops._clone_dim_order.default"})
}

// A convolution's result already has an NHWC value: the copy into
// channels-last reads it (XNNCopy), with no transpose there and back.
func TestNumericDimOrderAfterConv(t *testing.T) {
	got := checkNumeric(t, fmt.Sprintf(`input p_w: parameter "w"
input x: user_input
output user_output
weight "w": f32[4, 3, 3, 3] = inline("%s")
graph forward(%%p_w: f32[4, 3, 3, 3], %%x: f32[1, 3, 6, 6]) {
  %%c: f32[1, 4, 6, 6] = aten.convolution.default(%%x, %%p_w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  %%l: f32[1, 4, 6, 6]{0,2,3,1} = dim_order_ops._to_dim_order_copy.default(%%c, dim_order=[0, 2, 3, 1])
  return %%l
}
`, wF32(108, 0.1, 0.4)), []string{"XNNConv2d", "XNNCopy"}, []string{"dim_order_ops._to_dim_order_copy.default"})
	if n := countKind(got, "XNNStaticTranspose"); n != 1 {
		t.Errorf("%d transposes, want 1 (the input's): %v", n, got)
	}
}

// A dtype cast stays portable (exir: "dtype conversion ... is not
// supported"), as does an op reading a channels-last value, while the
// delegate around them still runs.
func TestNumericDimOrderCastPortable(t *testing.T) {
	src := `input x: user_input
output user_output
output user_output
graph forward(%x: f32[1, 2, 3, 4]) {
  %a: f32[1, 2, 3, 4] = aten.tanh.default(%x)
  %h: f16[1, 2, 3, 4] = dim_order_ops._to_dim_order_copy.default(%a, dtype=torch.float16)
  %c: f32[1, 2, 3, 4]{0,2,3,1} = dim_order_ops._to_dim_order_copy.default(%a, dim_order=[0, 2, 3, 1])
  %n: f32[1, 2, 3, 4]{0,2,3,1} = aten.neg.default(%c)
  return %h, %n
}
`
	checkNumeric(t, src, []string{"XNNTanh", "XNNStaticTranspose"}, nil)
	p, err := ir.Parse([]byte(src), "cast.fxir")
	if err != nil {
		t.Fatal(err)
	}
	res, err := xnnpack.Run(p, xnnpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var rs []string
	for _, r := range res.Rejected {
		rs = append(rs, r.Reason)
	}
	reasons := strings.Join(rs, "\n")
	for _, want := range []string{"dtype conversion from float32 to float16", "only a dim-order copy reads or writes one"} {
		if !strings.Contains(reasons, want) {
			t.Errorf("no rejection %q among:\n%s", want, reasons)
		}
	}
	var portable []string
	for _, n := range p.Main.Nodes() {
		if n.Op != xnnpack.OpCallDelegate {
			portable = append(portable, n.Op.Info().Name)
		}
	}
	if strings.Join(portable, " ") != "dim_order_ops._to_dim_order_copy.default aten.neg.default" {
		t.Errorf("portable nodes %v, want the cast and the neg", portable)
	}
}
