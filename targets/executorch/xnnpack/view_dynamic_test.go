package xnnpack_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/run"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// A reshape of a dynamic tensor with a literal -1 is claimed as exir
// claims it (ViewCopyConfig: at most one inferred dim): XNNStaticReshape
// writes the size list with -1 as 0, and XNNPACK infers the dim at run
// time. A size list holding a SymInt value stays portable, as in exir
// ("Symbolic reshape is not supported"). Both run through run at several
// lengths within the bound.
const viewDynamicSrc = `symbol s0: [1, 6]
input x: user_input
output user_output
output user_output
graph forward(%x: f32[s0, 2, 2]) {
  %a: f32[s0, 2, 2] = aten.add.Tensor(%x, %x)
  %v: f32[s0, 4] = aten.view_copy.default(%a, [-1, 4])
  %r: f32[s0, 4] = aten.relu.default(%v)
  %n: Sym(s0) = aten.sym_size.int(%x, 0)
  %w: f32[s0, 4] = aten.view_copy.default(%a, [%n, 4])
  %s: f32[s0, 4] = aten.sigmoid.default(%w)
  return %r, %s
}
`

func TestViewCopyDynamic(t *testing.T) {
	p, err := ir.Parse([]byte(viewDynamicSrc), "view_dynamic.fxir")
	if err != nil {
		t.Fatal(err)
	}
	res, err := xnnpack.Run(p, xnnpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	symbolic := false
	for _, r := range res.Rejected {
		if r.Node.Results[0].Name == "w" {
			symbolic = true
			if !strings.Contains(r.Reason, "not a tensor") {
				t.Errorf("reshape with a SymInt size rejected for %q", r.Reason)
			}
		}
	}
	if !symbolic {
		t.Errorf("the reshape with a SymInt size was claimed: %+v", res.Rejected)
	}
	for _, n := range p.Main.Nodes() {
		if n.Op.Info().Name == "aten.view_copy.default" && n.Results[0].Name != "w" {
			t.Errorf("%s stayed outside the delegate", n.Results[0])
		}
	}

	p, err = ir.Parse([]byte(viewDynamicSrc), "view_dynamic.fxir")
	if err != nil {
		t.Fatal(err)
	}
	lower(t, p, "")
	ef, err := emit.Program(p, emit.Options{NoMetadataMethod: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := pte.Encode(ef)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pte.Decode("view_dynamic.pte", b)
	if err != nil {
		t.Fatal(err)
	}
	var shapes []string
	for _, d := range f.Methods[0].Delegates {
		for _, n := range d.XNNPACK.Graph.Xnodes {
			if r, ok := n.XnodeUnion.Value.(*xnnfb.XNNStaticReshapeT); ok {
				shapes = append(shapes, fmt.Sprint(r.NewShape))
			}
		}
	}
	if strings.Join(shapes, " ") != "[0 4]" {
		t.Fatalf("reshapes %v, want one [0 4]", shapes)
	}
	ref, err := ir.Parse([]byte(viewDynamicSrc), "view_dynamic.fxir")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{1, 3, 6} {
		xs := make([]float64, n*4)
		for i := range xs {
			xs[i] = math.Cos(float64(5*i+2)) * 3
		}
		in := []interp.Value{interp.FromFloat64(ir.Float32, []int64{n, 2, 2}, xs)}
		want, err := interp.Run(ref, in, interp.Options{})
		if err != nil {
			t.Fatalf("n=%d: interpreter: %v", n, err)
		}
		outs, err := run.Run(f, in, run.Options{})
		if err != nil {
			t.Fatalf("n=%d: run: %v", n, err)
		}
		for k := range outs {
			g, w := outs[k].(*interp.Tensor), want.Outputs[k].(*interp.Tensor)
			if fmt.Sprint(g.Shape) != fmt.Sprint(w.Shape) {
				t.Fatalf("n=%d: output %d shape %v, want %v", n, k, g.Shape, w.Shape)
			}
			gs, ws := g.Float64s(), w.Float64s()
			for i := range ws {
				if d := math.Abs(gs[i] - ws[i]); !(d <= 1e-6*(1+math.Abs(ws[i]))) {
					t.Fatalf("n=%d: output %d[%d] = %g, want %g", n, k, i, gs[i], ws[i])
				}
			}
		}
	}
}

// TestViewCopyInferredStatic: exir writes a literal -1 as 0 even when the
// result's size is static; the result is still right.
func TestViewCopyInferredStatic(t *testing.T) {
	const src = `input x: user_input
output user_output
graph forward(%x: f32[3, 2, 2]) {
  %a: f32[3, 2, 2] = aten.add.Tensor(%x, %x)
  %v: f32[3, 4] = aten.view_copy.default(%a, [3, -1])
  %r: f32[3, 4] = aten.relu.default(%v)
  return %r
}
`
	checkNumeric(t, src, []string{"XNNStaticReshape"}, []string{"aten.view_copy.default"})
	p, err := ir.Parse([]byte(src), "view_static.fxir")
	if err != nil {
		t.Fatal(err)
	}
	lower(t, p, "")
	for _, n := range p.Main.Nodes() {
		if n.Op != xnnpack.OpCallDelegate {
			continue
		}
		pay, err := xnnpack.Serialize(n, p.Env, func(*ir.Value) (pte.Lazy, bool, error) { return pte.Lazy{}, false, nil })
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range pay.Graph.Xnodes {
			if r, ok := x.XnodeUnion.Value.(*xnnfb.XNNStaticReshapeT); ok && fmt.Sprint(r.NewShape) != "[3 0]" {
				t.Errorf("new_shape %v, want [3 0]", r.NewShape)
			}
		}
	}
}

// An unsqueeze (or squeeze) whose result has two dynamic dims stays
// portable: XNNStaticReshape writes each dynamic dim as 0 and the genuine
// runtime refuses a new shape with two of them (found by the model sweep on
// every attention with dynamic batch and sequence); one dynamic dim is
// claimed.
const unsqueezeTwoDynSrc = `symbol s0: [1, 8]
symbol s1: [2, 32]
input x: user_input
input y: user_input
output user_output
output user_output
graph forward(%x: f32[s0, s1, 8], %y: f32[4, s1, 8]) {
  %a: f32[s0, s1, 8] = aten.add.Tensor(%x, %x)
  %u: f32[s0, 1, s1, 8] = aten.unsqueeze_copy.default(%a, 1)
  %r: f32[s0, 1, s1, 8] = aten.relu.default(%u)
  %b: f32[4, s1, 8] = aten.add.Tensor(%y, %y)
  %v: f32[4, 1, s1, 8] = aten.unsqueeze_copy.default(%b, 1)
  %s: f32[4, 1, s1, 8] = aten.sigmoid.default(%v)
  return %r, %s
}
`

func TestUnsqueezeTwoDynamicDims(t *testing.T) {
	p, err := ir.Parse([]byte(unsqueezeTwoDynSrc), "unsqueeze_dyn.fxir")
	if err != nil {
		t.Fatal(err)
	}
	res, err := xnnpack.Run(p, xnnpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rejected := map[string]string{}
	for _, r := range res.Rejected {
		rejected[r.Node.Results[0].Name] = r.Reason
	}
	if why, ok := rejected["u"]; !ok || !strings.Contains(why, "more than one dynamic dim") {
		t.Errorf("unsqueeze with two dynamic dims: rejected=%v (%q)", ok, why)
	}
	if _, ok := rejected["v"]; ok {
		t.Errorf("unsqueeze with one dynamic dim rejected: %q", rejected["v"])
	}
}
