package xnnpack_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
	"github.com/fxport/fxport/targets/executorch/internal/ettest"
	"github.com/fxport/fxport/targets/executorch/run"
)

// checkNumeric exports src to an XNNPACK .pte (pipeline, emit, encode,
// decode), runs it with targets/executorch/run and compares every output
// with the interpreter's on the unlowered IR. It requires that every node
// kind in kinds appears in a delegate graph and that none of the ops in
// delegated is left outside a delegate, and returns the delegate graphs'
// node kinds.
func checkNumeric(t *testing.T, src string, kinds []string, delegated []string) []string {
	t.Helper()
	c := xnnExport(t, src, "numeric", "", func(ref *ir.Program) []interp.Value {
		return ettest.Inputs(t, ref, func(i, k int) float64 { return math.Sin(float64(k*7+i*3+1)) * 2.5 })
	})
	for _, n := range c.p.Main.Nodes() {
		for _, d := range delegated {
			if n.Op.Info().Name == d {
				t.Fatalf("%s was not delegated:\n%s", d, ir.Print(c.p))
			}
		}
	}
	got := delegateKinds(c.f)
	all := strings.Join(got, " ")
	for _, k := range kinds {
		if !strings.Contains(" "+all+" ", " "+k+" ") {
			t.Errorf("delegate graph lacks %s: %v", k, got)
		}
	}
	wantWithin(t, c.run(t), c.want, func(w float64) float64 { return 1e-5 * (1 + math.Abs(w)) }, fmt.Sprintf("(nodes %v)", got))
	return got
}

func TestNumericMaxPool(t *testing.T) {
	checkNumeric(t, `input x: user_input
output user_output
output user_output
graph forward(%x: f32[1, 3, 7, 6]) {
  %m: f32[1, 3, 3, 3] = aten.max_pool2d.default(%x, [3, 2], [2, 2])
  %p: f32[1, 3, 4, 6] = aten.max_pool2d.default(%x, [3, 3], [2, 1], [1, 1], [1, 1])
  %r: f32[1, 3, 4, 6] = aten.relu.default(%p)
  return %m, %r
}
`, []string{"XNNMaxPooling2d", "XNNStaticTranspose"}, []string{"aten.max_pool2d.default"})
}

func TestNumericConstantPad(t *testing.T) {
	checkNumeric(t, `input x: user_input
output user_output
graph forward(%x: f32[2, 3, 4]) {
  %p: f32[2, 5, 7] = aten.constant_pad_nd.default(%x, [1, 2, 0, 2], -1.5)
  %a: f32[2, 5, 7] = aten.add.Tensor(%p, %p)
  return %a
}
`, []string{"XNNStaticConstantPad"}, []string{"aten.constant_pad_nd.default"})
}

func TestNumericSlice(t *testing.T) {
	checkNumeric(t, `input x: user_input
output user_output
output user_output
graph forward(%x: f32[4, 6, 5]) {
  %s: f32[4, 3, 5] = aten.slice.Tensor(%x, 1, 2, 5)
  %n: f32[4, 3, 5] = aten.neg.default(%s)
  %e: f32[4, 6, 2] = aten.slice.Tensor(%x, -1, -2, 9223372036854775807)
  %m: f32[4, 6, 2] = aten.mul.Tensor(%e, %e)
  return %n, %m
}
`, []string{"XNNStaticSlice", "XNNNegate"}, []string{"aten.slice_copy.Tensor"})
}

func TestNumericBMM(t *testing.T) {
	checkNumeric(t, `input x: user_input
input y: user_input
output user_output
graph forward(%x: f32[2, 3, 4], %y: f32[2, 4, 5]) {
  %b: f32[2, 3, 5] = aten.bmm.default(%x, %y)
  %r: f32[2, 3, 5] = aten.tanh.default(%b)
  return %r
}
`, []string{"XNNBatchMatrixMultiply", "XNNTanh"}, []string{"aten.bmm.default"})
}

// Unary kinds: ELU (alpha only), leaky relu, abs, neg, square, sqrt,
// ceil, floor and the others the rules accept.
func TestNumericUnary(t *testing.T) {
	checkNumeric(t, `input x: user_input
output user_output
output user_output
output user_output
graph forward(%x: f32[3, 8]) {
  %e: f32[3, 8] = aten.elu.default(%x, 0.7)
  %l: f32[3, 8] = aten.leaky_relu.default(%e, 0.2)
  %a: f32[3, 8] = aten.abs.default(%x)
  %q: f32[3, 8] = aten.sqrt.default(%a)
  %c: f32[3, 8] = aten.ceil.default(%q)
  %f: f32[3, 8] = aten.floor.default(%l)
  %s: f32[3, 8] = aten.pow.Tensor_Scalar(%f, 2)
  %n: f32[3, 8] = aten.neg.default(%s)
  %h: f32[3, 8] = aten.hardswish.default(%x)
  %g: f32[3, 8] = aten.sigmoid.default(%h)
  return %c, %n, %g
}
`, []string{"XNNELU", "XNNLeakyReLU", "XNNAbs", "XNNSquareRoot", "XNNCeiling", "XNNFloor", "XNNSquare", "XNNNegate", "XNNSigmoid"},
		[]string{"aten.elu.default", "aten.leaky_relu.default", "aten.abs.default", "aten.ceil.default", "aten.floor.default"})
}

// mean over the spatial dims is global average pooling, in NHWC.
func TestNumericGlobalAvgPool(t *testing.T) {
	checkNumeric(t, `input x: user_input
output user_output
graph forward(%x: f32[2, 3, 4, 5]) {
  %m: f32[2, 3, 1, 1] = aten.mean.dim(%x, [-1, -2], True)
  %r: f32[2, 3, 1, 1] = aten.relu.default(%m)
  return %r
}
`, []string{"XNNGlobalAvgPooling2d"}, []string{"aten.mean.dim"})
}

// cat of more than five inputs is chained: 7 inputs → Concatenate5 then
// Concatenate3.
func TestNumericCatChained(t *testing.T) {
	var ins, params, refs []string
	for i := 0; i < 7; i++ {
		ins = append(ins, fmt.Sprintf("input x%d: user_input\n", i))
		params = append(params, fmt.Sprintf("%%x%d: f32[2, %d]", i, i+1))
		refs = append(refs, fmt.Sprintf("%%x%d", i))
	}
	src := strings.Join(ins, "") + "output user_output\ngraph forward(" + strings.Join(params, ", ") + ") {\n" +
		"  %c: f32[2, 28] = aten.cat.default([" + strings.Join(refs, ", ") + "], 1)\n" +
		"  %r: f32[2, 28] = aten.relu.default(%c)\n  return %r\n}\n"
	got := checkNumeric(t, src, []string{"XNNConcatenate5", "XNNConcatenate3"}, []string{"aten.cat.default"})
	if strings.Join(got, " ") != "XNNConcatenate5 XNNConcatenate3 XNNClamp" {
		t.Errorf("nodes %v, want Concatenate5, Concatenate3, Clamp", got)
	}
}

// A rejected constraint keeps the op outside the delegate: max pooling
// with a stride larger than the kernel, slice with step 2, ELU with a scale.
func TestNumericRejectedStayPortable(t *testing.T) {
	for _, c := range []struct{ name, in, body, out, op string }{
		{"maxpool-stride", "f32[1, 2, 6, 6]", `aten.max_pool2d.default(%x, [2, 2], [3, 3])`, "f32[1, 2, 2, 2]", "aten.max_pool2d_with_indices.out"},
		{"slice-step", "f32[2, 3, 4]", `aten.slice.Tensor(%x, 2, 0, 4, 2)`, "f32[2, 3, 2]", "aten.slice_copy.Tensor_out"},
		{"elu-scale", "f32[2, 3, 4]", `aten.elu.default(%x, 1.0, 2.0)`, "f32[2, 3, 4]", "aten.elu.out"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "input x: user_input\noutput user_output\ngraph forward(%x: " + c.in + ") {\n  %p: " + c.out + " = " + c.body +
				"\n  %a: " + c.out + " = aten.add.Tensor(%p, %p)\n  return %a\n}\n"
			p, err := ir.Parse([]byte(src), "x.fxir")
			if err != nil {
				t.Fatal(err)
			}
			lower(t, p, "")
			found := false
			for _, n := range p.Main.Nodes() {
				found = found || n.Op.Info().Name == c.op
			}
			if !found {
				t.Fatalf("%s was delegated:\n%s", c.op, ir.Print(p))
			}
		})
	}
}

// A global average pooling followed by a 4-D consumer (a squeeze-excite
// style rescale) carries exir's XNN_FLAG_KEEP_DIMS: without it XNNPACK's
// output has 2 dims ("number of dimensions (2) must be 4" on the genuine
// runtime), and the runner refuses the node as XNNPACK does.
func TestGlobalAvgPoolKeepsDims(t *testing.T) {
	c := xnnExport(t, `input x: user_input
output user_output
graph forward(%x: f32[2, 3, 4, 5]) {
  %m: f32[2, 3, 1, 1] = aten.mean.dim(%x, [-1, -2], True)
  %s: f32[2, 3, 1, 1] = aten.sigmoid.default(%m)
  %y: f32[2, 3, 4, 5] = aten.mul.Tensor(%x, %s)
  return %y
}
`, "gap_keep_dims", "", func(ref *ir.Program) []interp.Value {
		return ettest.Inputs(t, ref, func(i, k int) float64 { return math.Sin(float64(k*7+i*3+1)) * 2.5 })
	})
	wantAllDelegated(t, c.p)
	var gap []*xnnfb.XNNNode1x1T
	for _, d := range c.f.Methods[0].Delegates {
		for _, n := range d.XNNPACK.Graph.Xnodes {
			if n.XnodeUnion.Type == xnnfb.XNodeUnionXNNGlobalAvgPooling2d {
				gap = append(gap, n.XnodeUnion.Value.(*xnnfb.XNNNode1x1T))
			}
		}
	}
	if len(gap) != 1 {
		t.Fatalf("%d XNNGlobalAvgPooling2d nodes, want 1: %v", len(gap), delegateKinds(c.f))
	}
	if gap[0].Flags != 0x40 {
		t.Errorf("XNNGlobalAvgPooling2d flags %#x, want XNN_FLAG_KEEP_DIMS (0x40)", gap[0].Flags)
	}
	wantWithin(t, c.run(t), c.want, func(w float64) float64 { return 1e-5 * (1 + math.Abs(w)) }, "")
	gap[0].Flags = 0
	if _, err := run.Run(c.f, c.ins, run.Options{}); err == nil || !strings.Contains(err.Error(), "XNN_FLAG_KEEP_DIMS") {
		t.Errorf("without XNN_FLAG_KEEP_DIMS: %v, want the runner to refuse the node", err)
	}
}
