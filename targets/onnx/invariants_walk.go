package onnx

import (
	"fmt"

	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// The invariants hold in control-flow bodies too (Loop body, If branches,
// any graph-valued attribute): these walkers reach them, and every error
// found inside a body is prefixed with the path to it, outermost first, as
// in `Loop node "l" body: If node "c" then_branch: node …`.

// eachSubgraph calls f on every graph held by n's attributes, in attribute
// order, wrapping f's error with the body's path.
func eachSubgraph(n *pb.NodeProto, f func(g *pb.GraphProto) error) error {
	for _, a := range n.GetAttribute() {
		if g := a.GetG(); g != nil {
			if err := f(g); err != nil {
				return fmt.Errorf("%s node %q %s: %w", n.GetOpType(), n.GetName(), a.GetName(), err)
			}
		}
		for i, g := range a.GetGraphs() {
			if err := f(g); err != nil {
				return fmt.Errorf("%s node %q %s[%d]: %w", n.GetOpType(), n.GetName(), a.GetName(), i, err)
			}
		}
	}
	return nil
}

// eachGraph calls f on the main graph and then, depth first, on every body
// nested in it.
func eachGraph(m *pb.ModelProto, f func(g *pb.GraphProto) error) error {
	return walkGraph(m.GetGraph(), f)
}

func walkGraph(g *pb.GraphProto, f func(g *pb.GraphProto) error) error {
	if err := f(g); err != nil {
		return err
	}
	for _, n := range g.GetNode() {
		if !hasSubgraph(n) {
			continue
		}
		if err := eachSubgraph(n, func(sub *pb.GraphProto) error { return walkGraph(sub, f) }); err != nil {
			return err
		}
	}
	return nil
}

// hasSubgraph reports whether any attribute of n holds a graph. In the
// default domain only the control-flow ops have graph attributes, so the
// walks read no attribute of any other node there (they are on the hot
// path of every export); nodes of other domains have theirs scanned.
func hasSubgraph(n *pb.NodeProto) bool {
	switch n.GetOpType() {
	case "Loop", "If", "Scan", "SequenceMap":
		return true
	}
	if d := n.GetDomain(); d == "" || d == "ai.onnx" {
		return false
	}
	for _, a := range n.Attribute {
		if a.G != nil || len(a.Graphs) > 0 {
			return true
		}
	}
	return false
}

// eachNode calls f on every node of the main graph and of every body.
func eachNode(m *pb.ModelProto, f func(n *pb.NodeProto) error) error {
	return eachGraph(m, func(g *pb.GraphProto) error {
		for _, n := range g.GetNode() {
			if err := f(n); err != nil {
				return err
			}
		}
		return nil
	})
}
