package onnx

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// loopModel emits the associative-scan program (one Loop in the main
// graph) and returns it with its Loop node.
func loopModel(t *testing.T) (*pb.ModelProto, *pb.NodeProto) {
	t.Helper()
	m, err := Emit(parse(t, ssmScan), Options{})
	if err != nil {
		t.Fatal(err)
	}
	loops := loopNodes(t, m)
	if len(loops) != 1 {
		t.Fatalf("want one Loop node, got %d", len(loops))
	}
	if err := CheckInvariants(m.Proto); err != nil {
		t.Fatalf("emitted model fails: %v", err)
	}
	return m.Proto, loops[0]
}

// locate finds the node named name in the main graph of m, or in a body.
func locate(m *pb.ModelProto, name string) *pb.NodeProto {
	var found *pb.NodeProto
	_ = eachNode(m, func(n *pb.NodeProto) error {
		if found == nil && n.GetName() == name {
			found = n
		}
		return nil
	})
	return found
}

// addIf appends to g an If node named name, reading cond, whose branches
// each pass outer through an Identity to two outputs.
func addIf(g *pb.GraphProto, name, cond, outer string) *pb.NodeProto {
	branch := func(tag string) *pb.GraphProto {
		a, b := name+"."+tag+".a", name+"."+tag+".b"
		return &pb.GraphProto{
			Name: proto.String(name + "." + tag),
			Node: []*pb.NodeProto{
				{OpType: proto.String("Identity"), Name: proto.String(a), Input: []string{outer}, Output: []string{a}},
				{OpType: proto.String("Identity"), Name: proto.String(b), Input: []string{outer}, Output: []string{b}},
			},
			Output: []*pb.ValueInfoProto{{Name: proto.String(a)}, {Name: proto.String(b)}},
		}
	}
	n := &pb.NodeProto{
		OpType: proto.String("If"), Name: proto.String(name),
		Input: []string{cond}, Output: []string{name + ".y0", name + ".y1"},
		Attribute: []*pb.AttributeProto{
			{Name: proto.String("then_branch"), Type: pb.AttributeProto_GRAPH.Enum(), G: branch("then")},
			{Name: proto.String("else_branch"), Type: pb.AttributeProto_GRAPH.Enum(), G: branch("else")},
		},
	}
	g.Node = append(g.Node, n)
	return n
}

// plant puts a violation of invariant id into g, a body whose first input
// (or, lacking inputs, first node output) is a name visible there.
func plant(id string, g *pb.GraphProto) bool {
	in := ""
	if len(g.GetInput()) > 0 {
		in = g.GetInput()[0].GetName()
	} else {
		in = g.GetNode()[0].GetOutput()[0]
	}
	node := func(op string, ins, outs []string, attrs ...*pb.AttributeProto) {
		g.Node = append(g.Node, &pb.NodeProto{OpType: proto.String(op), Name: proto.String("planted." + op), Input: ins, Output: outs, Attribute: attrs})
	}
	switch id {
	case "ONNX-IR01":
		node("TopK", []string{in, in}, []string{"planted.v", "planted.i"}, AttrInt("sorted", 0))
	case "ONNX-P08":
		node("Constant", nil, []string{"planted.c"}, AttrInts("value_ints"))
	case "ONNX-P13":
		node("ConstantOfShape", []string{in}, []string{"planted.f"})
	case "ONNX-S01":
		g.Output[1].Name = g.Output[0].Name
	case "ONNX-P25":
		g.Initializer = append(g.Initializer, &pb.TensorProto{Name: proto.String("w")}, &pb.TensorProto{Name: proto.String("w")})
	case "structure":
		node("Identity", []string{"nowhere"}, []string{"planted.id"})
	default:
		return false // ONNX-S03 is a property of the model, not of a graph
	}
	return true
}

// Every graph-level invariant is checked inside a Loop body, inside an If
// branch of the main graph, and inside an If branch nested in a Loop body,
// and the error names the path to the body.
func TestInvariantsCatchViolationsInSubgraphs(t *testing.T) {
	base, loop := loopModel(t)
	loopName := loop.GetName()
	cond := base.Graph.Input[0].GetName()
	sites := []struct {
		name string
		// body prepares a clone and returns the graph to plant into.
		body func(m *pb.ModelProto) *pb.GraphProto
		path string
	}{
		{"loop-body", func(m *pb.ModelProto) *pb.GraphProto {
			return attr(locate(m, loopName), "body").GetG()
		}, `Loop node "` + loopName + `" body: `},
		{"if-then", func(m *pb.ModelProto) *pb.GraphProto {
			return attr(addIf(m.Graph, "cf", cond, cond), "then_branch").GetG()
		}, `If node "cf" then_branch: `},
		{"loop-if-else", func(m *pb.ModelProto) *pb.GraphProto {
			body := attr(locate(m, loopName), "body").GetG()
			return attr(addIf(body, "inner", body.Input[0].GetName(), cond), "else_branch").GetG()
		}, `Loop node "` + loopName + `" body: If node "inner" else_branch: `},
	}
	for _, s := range sites {
		// The site alone (an If whose branches read outer values) is valid.
		clean := proto.Clone(base).(*pb.ModelProto)
		s.body(clean)
		if err := CheckInvariants(clean); err != nil {
			t.Fatalf("%s: model with the unviolated site fails: %v", s.name, err)
		}
		for _, inv := range Invariants {
			m := proto.Clone(base).(*pb.ModelProto)
			if !plant(inv.ID, s.body(m)) {
				if inv.ID != "ONNX-S03" {
					t.Errorf("invariant %s has no subgraph violation test", inv.ID)
				}
				continue
			}
			err := CheckInvariants(m)
			if err == nil || !strings.Contains(err.Error(), inv.ID) || !strings.Contains(err.Error(), s.path) {
				t.Errorf("%s %s: violation not caught with its path %q (err %v)", s.name, inv.ID, s.path, err)
			}
		}
	}
}

// Bodies see exactly the outer values defined before their node: a later
// outer value is not visible, and a body may not redefine an outer name.
func TestInvariantsSubgraphScoping(t *testing.T) {
	base, loop := loopModel(t)
	loopName := loop.GetName()
	cond := base.Graph.Input[0].GetName()
	// An outer value defined before the Loop is readable from its body.
	var before, after string
	for i, n := range base.Graph.Node {
		if n.GetName() == loopName {
			before = base.Graph.Node[i-1].GetOutput()[0]
			if i+1 < len(base.Graph.Node) {
				after = base.Graph.Node[i+1].GetOutput()[0]
			}
		}
	}
	if after == "" {
		after = loop.GetOutput()[0] // the Loop's own result is not visible in its body either
	}
	for _, c := range []struct {
		name, outer, out, want string
	}{
		{"outer-before", before, "scoped.ok", ""},
		{"outer-after", after, "scoped.late", `Loop node "` + loopName + `" body: If node "s" then_branch: node s.then.a (Identity): input "` + after + `" used before it is defined`},
		{"shadow", before, cond, `Loop node "` + loopName + `" body: node planted (Identity): output "` + cond + `" defined twice`},
	} {
		m := proto.Clone(base).(*pb.ModelProto)
		body := attr(locate(m, loopName), "body").GetG()
		if c.name == "shadow" {
			body.Node = append(body.Node, &pb.NodeProto{OpType: proto.String("Identity"), Name: proto.String("planted"), Input: []string{c.outer}, Output: []string{c.out}})
		} else {
			addIf(body, "s", body.Input[0].GetName(), c.outer)
		}
		err := CheckInvariants(m)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err = %v; want it to contain %q", c.name, err, c.want)
		}
	}
}
