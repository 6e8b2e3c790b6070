package xnnpack_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/run"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// ET-B02: the partitioner is selected by backend (executorch.xnnpack has
// it, executorch.portable does not: exir's partition=False), its configs are
// all configs minus partition_exclude, and excluding every config is an
// error.
func TestInvariant_ET_B02(t *testing.T) {
	src := `input x: user_input
output user_output
graph forward(%x: f32[4]) {
  %a: f32[4] = aten.add.Tensor(%x, %x)
  return %a
}
`
	count := func(backend string) int {
		p, err := ir.Parse([]byte(src), "b02.fxir")
		if err != nil {
			t.Fatal(err)
		}
		pl, err := pm.Build(pm.TargetExecuTorch, backend)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, nd := range p.Main.Nodes() {
			if nd.Op == xnnpack.OpCallDelegate {
				n++
			}
		}
		return n
	}
	if n := count("executorch.xnnpack"); n != 1 {
		t.Errorf("executorch.xnnpack: %d delegates, want 1", n)
	}
	if n := count("executorch.portable"); n != 0 {
		t.Errorf("executorch.portable: %d delegates, want 0 (no partitioner)", n)
	}
	p, _ := ir.Parse([]byte(src), "b02.fxir")
	if _, err := xnnpack.Run(p, xnnpack.Options{Exclude: xnnpack.Configs()}); err == nil {
		t.Error("excluding every config must fail")
	}
	if _, err := xnnpack.Run(p, xnnpack.Options{Exclude: []string{"AddConfig"}}); err != nil {
		t.Error(err)
	}
	for _, nd := range p.Main.Nodes() {
		if nd.Op == xnnpack.OpCallDelegate {
			t.Errorf("AddConfig excluded but add was delegated")
		}
	}
}

// ET-P16: squeeze/unsqueeze of a tensor with a symbolic dim are delegated
// and written as XNNStaticReshape with 0 for each dynamic dim.
func TestInvariant_ET_P16(t *testing.T) {
	_, p := partitionCount(t, `symbol s0: [2, 16] hint 4
input x: user_input
output user_output
graph forward(%x: f32[s0, 3]) {
  %u: f32[s0, 1, 3] = aten.unsqueeze.default(%x, 1)
  %r: f32[s0, 1, 3] = aten.relu.default(%u)
  %q: f32[s0, 3] = aten.squeeze.dim(%r, 1)
  %a: f32[s0, 3] = aten.add.Tensor(%q, %q)
  return %a
}
`, "")
	var call *ir.Node
	for _, n := range p.Main.Nodes() {
		switch n.Op.Info().Name {
		case "aten.unsqueeze_copy.default", "aten.squeeze_copy.dim", "aten.unsqueeze_copy.out", "aten.squeeze_copy.dim_out":
			t.Fatalf("%s kept outside the delegate:\n%s", n.Op.Info().Name, ir.Print(p))
		}
		if n.Op == xnnpack.OpCallDelegate {
			call = n
		}
	}
	if call == nil {
		t.Fatalf("nothing delegated:\n%s", ir.Print(p))
	}
	pay, err := xnnpack.Serialize(call, p.Env, func(*ir.Value) (pte.Lazy, bool, error) { return pte.Lazy{}, false, nil })
	if err != nil {
		t.Fatal(err)
	}
	var shapes []string
	for _, n := range pay.Graph.Xnodes {
		if r, ok := n.XnodeUnion.Value.(*xnnfb.XNNStaticReshapeT); ok {
			shapes = append(shapes, fmt.Sprint(r.NewShape))
		}
	}
	if strings.Join(shapes, "|") != "[0 1 3]|[0 3]" {
		t.Fatalf("reshape shapes %q, want [0 1 3] and [0 3]", shapes)
	}
}

// ET-P39: non-finite floats (±inf, NaN) reach the payload intact: in a
// constant's bytes and in output_min_max (the exporter rewrote flatc's JSON;
// our writer encodes floats directly).
func TestInvariant_ET_P39(t *testing.T) {
	nan := math.Float32frombits(0x7fc00001)
	vals := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), nan, 1.5}
	raw := make([]byte, 16)
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	// c is a fully-connected bias, so the delegate bakes it into named data
	// (a constant read only by an add is passed at run time instead:
	// const_external.go).
	eye := make([]byte, 64)
	for i := 0; i < 4; i++ {
		binary.LittleEndian.PutUint32(eye[4*(5*i):], math.Float32bits(1))
	}
	src := `input w: parameter "w"
input c: parameter "c"
input x: user_input
output user_output
weight "c": f32[4] = inline("` + hexOf(raw) + `")
weight "w": f32[4, 4] = inline("` + hexOf(eye) + `")
graph forward(%w: f32[4, 4], %c: f32[4], %x: f32[1, 4]) {
  %a: f32[1, 4] = aten.linear.default(%x, %w, %c)
  %r: f32[1, 4] = aten.clamp.default(%a, -2.0)
  return %r
}
`
	p, err := ir.Parse([]byte(src), "p39.fxir")
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
	f, err := pte.Decode("p39.pte", b)
	if err != nil {
		t.Fatal(err)
	}
	g := f.Methods[0].Delegates[0].XNNPACK.Graph
	mm := g.Xnodes[len(g.Xnodes)-1].OutputMinMax
	if mm == nil || mm.OutputMin != -2 || !math.IsInf(float64(mm.OutputMax), 1) {
		t.Fatalf("output_min_max %+v, want {-2, +inf}", mm)
	}
	found := false
	for _, nd := range f.Program.NamedData {
		if string(f.Segments[nd.SegmentIndex].Data[:16]) == string(raw) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no named constant holds the ±inf/NaN bytes bit for bit")
	}
	outs, err := run.Run(f, []interp.Value{interp.FromFloat64(ir.Float32, []int64{1, 4}, []float64{1, 1, 1, 1})}, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := outs[0].(*interp.Tensor).Float64s()
	if !math.IsInf(got[0], 1) || got[1] != -2 || !math.IsNaN(got[2]) || got[3] != 2.5 {
		t.Fatalf("clamp(x + c, -2) = %v, want [+Inf -2 NaN 2.5]", got)
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, x := range b {
		out = append(out, digits[x>>4], digits[x&15])
	}
	return string(out)
}
