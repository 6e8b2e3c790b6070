package onnx

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

func emitCase(t *testing.T, src string) *Model {
	t.Helper()
	m, err := Emit(parse(t, src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func findOp(m *pb.ModelProto, op string) *pb.NodeProto {
	for _, n := range m.Graph.Node {
		if n.GetOpType() == op {
			return n
		}
	}
	return nil
}

// Each invariant's check catches a model that violates it.
func TestInvariantsCatchViolations(t *testing.T) {
	base := emitCase(t, `graph forward(%x: f32[2, 3]) {
  %v: f32[2, 2], %i: i64[2, 2] = aten.topk.default(%x, 2)
  %z: f32[2, 3] = aten.zeros_like.default(%x)
  %s: f32[2, 3] = aten.add.Tensor(%z, %x)
  return %v, %s
}`).Proto
	if err := CheckInvariants(base); err != nil {
		t.Fatalf("emitted model fails: %v", err)
	}
	if a := attr(findOp(base, "TopK"), "sorted"); a == nil || a.GetI() != 1 {
		t.Fatal("ONNX-IR01: TopK emitted without sorted=1")
	}
	if a := attr(findOp(base, "ConstantOfShape"), "value"); a == nil || a.GetT().GetDataType() != int32(pb.TensorProto_FLOAT) {
		t.Fatal("ONNX-P13: fill without an explicit dtype")
	}
	mutate := map[string]func(m *pb.ModelProto){
		"ONNX-IR01": func(m *pb.ModelProto) { attr(findOp(m, "TopK"), "sorted").I = proto.Int64(0) },
		"ONNX-P08": func(m *pb.ModelProto) {
			c := findOp(m, "Constant")
			c.Attribute = []*pb.AttributeProto{AttrInts("value_ints")}
		},
		"ONNX-P13": func(m *pb.ModelProto) {
			n := findOp(m, "ConstantOfShape")
			n.Attribute = nil
		},
		"ONNX-S01": func(m *pb.ModelProto) { m.Graph.Output[1].Name = m.Graph.Output[0].Name },
		"ONNX-S03": func(m *pb.ModelProto) { m.MetadataProps = nil },
		"ONNX-P25": func(m *pb.ModelProto) {
			m.Graph.Initializer = append(m.Graph.Initializer, &pb.TensorProto{Name: proto.String("w")}, &pb.TensorProto{Name: proto.String("w")})
		},
		"structure": func(m *pb.ModelProto) { m.Graph.Node[len(m.Graph.Node)-1].Input[0] = "nowhere" },
	}
	for _, inv := range Invariants {
		f, ok := mutate[inv.ID]
		if !ok {
			t.Errorf("invariant %s has no violation test", inv.ID)
			continue
		}
		m := proto.Clone(base).(*pb.ModelProto)
		f(m)
		err := CheckInvariants(m)
		if err == nil || !strings.Contains(err.Error(), inv.ID) {
			t.Errorf("%s: violation not caught (err %v)", inv.ID, err)
		}
	}
}

// ONNX-P08: an empty int list becomes a typed empty INT64 tensor.
func TestEmptyIntListIsTypedTensor(t *testing.T) {
	b := newBuilder(nil, 18)
	name := b.I64s()
	n := b.nodes[0]
	if n.Output[0] != name || attr(n, "value") == nil || attr(n, "value").GetT().GetDataType() != int32(pb.TensorProto_INT64) ||
		len(attr(n, "value").GetT().GetDims()) != 1 || attr(n, "value").GetT().GetDims()[0] != 0 {
		t.Fatalf("empty list constant: %v", n)
	}
}

// ONNX-S01/S02: one value feeding two outputs gets distinct outputs; an
// output named like an input becomes output.<n>, the input input.<n>.
func TestIONamingDisambiguation(t *testing.T) {
	p := parse(t, `meta "io.input_names" = "[\"x\", \"y\"]"
meta "io.output_names" = "[\"y\", \"a\", \"b\"]"
input x: user_input
input y: user_input
output user_output
output user_output
output user_output
graph forward(%x: f32[2], %y: f32[2]) {
  %r: f32[2] = aten.relu.default(%x)
  return %r, %r, %y
}`)
	m, err := Emit(p, Options{})
	if err != nil {
		t.Skipf("io names metadata format differs: %v", err)
	}
	var ins, outs []string
	for _, i := range m.Proto.Graph.Input {
		ins = append(ins, i.GetName())
	}
	for _, o := range m.Proto.Graph.Output {
		outs = append(outs, o.GetName())
	}
	if strings.Join(ins, ",") != "x,input.y" || strings.Join(outs, ",") != "output.y,a,b" {
		t.Fatalf("inputs %v outputs %v", ins, outs)
	}
}

// An unsupported program fails with every missing op at once, each with
// its nodes, where it came from and what to do; an op that exists from a
// newer opset names the --opset to choose.
func TestMissingOpsListedTogether(t *testing.T) {
	p := parse(t, `graph forward(%x: f32[2, 3], %i: i64[2, 3]) {
  %a: f32[2, 3] = aten.resize_.default(%x, [2, 3]) {stack_trace = "File \"model.py\", line 12, in forward\n    y = x.resize_(2, 3)", nn_module_stack = "L__self__,,m.Net;L__self___enc,enc,m.Encoder"}
  %b: f32[2, 3] = aten.avg_pool2d_backward.default(%a, %x, [1, 1], [1, 1], [0, 0], False, True, None)
  %c: f32[2, 3] = aten.resize_.default(%b, [2, 3])
  %d: i64[2, 3] = aten.bitwise_xor.Tensor(%i, %i)
  return %c, %d
}`)
	_, err := Emit(p, Options{Opset: 17})
	var me *MissingOpsError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v, want MissingOpsError", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"3 problem(s), all listed",
		"aten.resize_.default (%a, %c), from model.py:12 in forward, module enc (m.Encoder)",
		"functionalization removes it",
		"aten.avg_pool2d_backward.default (%b)", "Export the model in eval mode",
		"aten.bitwise_xor.Tensor (%d)", "export with --opset 18",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "issue 5") {
		t.Errorf("error speaks of the project's backlog:\n%s", msg)
	}
}

// A lowering that refuses a node's arguments does not stop the export at
// that node: every refused node is reported with the others.
func TestLoweringFailuresListedTogether(t *testing.T) {
	p := parse(t, `graph forward(%x: f32[2, 3, 8, 8]) {
  %a: f32[2, 3, 4, 4] = aten.avg_pool2d.default(%x, [2, 2], [2, 2], [0, 0], True, True, 3)
  %b: f32[2, 3, 2, 2] = aten.avg_pool2d.default(%a, [2, 2], [2, 2], [0, 0], True, True, 3)
  return %b
}`)
	_, err := Emit(p, Options{})
	var me *MissingOpsError
	if !errors.As(err, &me) || len(me.Failed) != 2 {
		t.Fatalf("err = %v, want two lowering failures", err)
	}
	if !strings.Contains(err.Error(), "aten.avg_pool2d.default (%a)") || !strings.Contains(err.Error(), "aten.avg_pool2d.default (%b)") ||
		!strings.Contains(err.Error(), "divisor_override and ceil_mode") {
		t.Errorf("err = %v", err)
	}
}

func TestOpsetRangeAndResolution(t *testing.T) {
	p := parse(t, "graph forward(%x: f32[2]) {\n  %g: f32[2] = aten.gelu.default(%x)\n  return %g\n}\n")
	for _, o := range []int{16, MaxSupportedOpset + 1} {
		_, err := Emit(p, Options{Opset: o})
		if err == nil {
			t.Errorf("opset %d accepted", o)
		} else if !strings.Contains(err.Error(), "choose one from 17 to 26") {
			t.Errorf("opset %d: %v", o, err)
		}
	}
	for _, o := range Opsets() {
		if _, err := Emit(p, Options{Opset: o}); err != nil {
			t.Errorf("opset %d: %v", o, err)
		}
	}
	m18, err := Emit(p, Options{Opset: 18})
	if err != nil {
		t.Fatal(err)
	}
	m20, err := Emit(p, Options{Opset: 20})
	if err != nil {
		t.Fatal(err)
	}
	if findOp(m18.Proto, "Gelu") != nil || findOp(m20.Proto, "Gelu") == nil {
		t.Error("Gelu must be used from opset 20 on only")
	}
	if m20.Proto.GetIrVersion() != 9 {
		t.Errorf("opset 20 stamped IR %d, want 9", m20.Proto.GetIrVersion())
	}
}
