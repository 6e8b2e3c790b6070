package onnx

import (
	"fmt"

	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// Invariant is a named property every model the emitter writes satisfies,
// tied to the catalog row it replaces.
type Invariant struct {
	ID, Name, Doc string
	Check         func(m *pb.ModelProto) error
}

// Invariants are checked by Emit before a model leaves the target.
var Invariants = []Invariant{
	{"ONNX-IR01", "topk-sorted", "every TopK has sorted=1 before the file is written", checkTopKSorted},
	{"ONNX-P08", "no-empty-value-ints", "no Constant has an empty value_ints; empty INT64 lists are typed tensors", checkNoEmptyValueInts},
	{"ONNX-P13", "fills-typed", "every ConstantOfShape carries its value (and so its dtype) explicitly", checkFillsTyped},
	{"ONNX-S01", "distinct-outputs", "graph outputs have distinct names, none equal to an input, each defined by its own node", checkDistinctIO},
	{"ONNX-S03", "export-metadata", "the export metadata is stored in metadata_props", checkMetadata},
	{"ONNX-P25", "no-initializer-dedup", "initializers are never merged: each keeps its own name and bytes (no cross-device dedup)", checkInitializerNames},
	{"structure", "defined-before-use", "every node input is a graph input, an initializer or an earlier node output", checkTopological},
}

// CheckInvariants runs every invariant on a model.
func CheckInvariants(m *pb.ModelProto) error {
	for _, inv := range Invariants {
		if err := inv.Check(m); err != nil {
			return fmt.Errorf("%s %s: %w", inv.ID, inv.Name, err)
		}
	}
	return nil
}

func attr(n *pb.NodeProto, name string) *pb.AttributeProto {
	for _, a := range n.Attribute {
		if a.GetName() == name {
			return a
		}
	}
	return nil
}

func checkTopKSorted(m *pb.ModelProto) error {
	return eachNode(m, func(n *pb.NodeProto) error {
		if n.GetOpType() == "TopK" {
			if a := attr(n, "sorted"); a == nil || a.GetI() != 1 {
				return fmt.Errorf("node %s: TopK without sorted=1", n.GetName())
			}
		}
		return nil
	})
}

func checkNoEmptyValueInts(m *pb.ModelProto) error {
	return eachNode(m, func(n *pb.NodeProto) error {
		if n.GetOpType() != "Constant" {
			return nil
		}
		if a := attr(n, "value_ints"); a != nil && len(a.GetInts()) == 0 {
			return fmt.Errorf("node %s: Constant with an empty value_ints", n.GetName())
		}
		if len(n.Attribute) != 1 {
			return fmt.Errorf("node %s: Constant must set exactly one value attribute", n.GetName())
		}
		return nil
	})
}

func checkFillsTyped(m *pb.ModelProto) error {
	return eachNode(m, func(n *pb.NodeProto) error {
		if n.GetOpType() == "ConstantOfShape" {
			if a := attr(n, "value"); a == nil || a.GetT() == nil || a.GetT().GetDataType() == 0 {
				return fmt.Errorf("node %s: ConstantOfShape without a typed value", n.GetName())
			}
		}
		return nil
	})
}

// checkDistinctIO holds for the main graph and every body: a body output
// is produced inside the body (Subgraph.Output adds an Identity otherwise).
func checkDistinctIO(m *pb.ModelProto) error {
	return eachGraph(m, checkGraphDistinctIO)
}

func checkGraphDistinctIO(g *pb.GraphProto) error {
	seen := map[string]bool{}
	for _, i := range g.GetInput() {
		seen[i.GetName()] = true
	}
	// Count producers of the graph outputs only: a lookup in this small map
	// per node output is far cheaper than a set of every value name.
	producers := make(map[string]int, len(g.GetOutput()))
	for _, o := range g.GetOutput() {
		producers[o.GetName()] = 0
	}
	for _, n := range g.GetNode() {
		for _, o := range n.GetOutput() {
			if c, ok := producers[o]; ok {
				producers[o] = c + 1
			}
		}
	}
	for _, o := range g.GetOutput() {
		if seen[o.GetName()] {
			return fmt.Errorf("output %q is also an input or an earlier output", o.GetName())
		}
		seen[o.GetName()] = true
		if producers[o.GetName()] != 1 {
			return fmt.Errorf("output %q is defined by %d nodes, want 1", o.GetName(), producers[o.GetName()])
		}
	}
	return nil
}

func checkMetadata(m *pb.ModelProto) error {
	for _, kv := range m.GetMetadataProps() {
		if kv.GetKey() == MetadataKey && kv.GetValue() != "" {
			return nil
		}
	}
	return fmt.Errorf("metadata_props lacks %q", MetadataKey)
}

func checkInitializerNames(m *pb.ModelProto) error {
	return eachGraph(m, func(g *pb.GraphProto) error {
		seen := map[string]bool{}
		for _, t := range g.GetInitializer() {
			if t.GetName() == "" || seen[t.GetName()] {
				return fmt.Errorf("initializer %q unnamed or duplicated", t.GetName())
			}
			seen[t.GetName()] = true
		}
		return nil
	})
}

// checkTopological checks the main graph and, at each control-flow node,
// its bodies: a body reads its own inputs, initializers and earlier body
// nodes, and every value the enclosing graphs define before the node
// (implicit inputs); a body name may not shadow a visible outer one.
func checkTopological(m *pb.ModelProto) error {
	return checkGraphTopological(m.GetGraph(), nil)
}

// scope is the names one graph defines, chained to the names visible from
// the graphs enclosing it.
type scope struct {
	def   map[string]struct{}
	outer *scope
}

func (s *scope) has(name string) bool {
	for ; s != nil; s = s.outer {
		if _, ok := s.def[name]; ok {
			return true
		}
	}
	return false
}

func checkGraphTopological(g *pb.GraphProto, outer *scope) error {
	size := 1 + len(g.GetInput()) + len(g.GetInitializer())
	for _, n := range g.GetNode() {
		size += len(n.GetOutput())
	}
	sc := &scope{def: make(map[string]struct{}, size), outer: outer} // presized: no rehash while it grows
	sc.def[""] = struct{}{}
	for _, i := range g.GetInput() {
		sc.def[i.GetName()] = struct{}{}
	}
	for _, t := range g.GetInitializer() {
		sc.def[t.GetName()] = struct{}{}
	}
	for _, n := range g.GetNode() {
		for _, in := range n.Input {
			if _, ok := sc.def[in]; !ok && (outer == nil || !outer.has(in)) {
				return fmt.Errorf("node %s (%s): input %q used before it is defined", n.GetName(), n.GetOpType(), in)
			}
		}
		if hasSubgraph(n) {
			if err := eachSubgraph(n, func(sub *pb.GraphProto) error { return checkGraphTopological(sub, sc) }); err != nil {
				return err
			}
		}
		for _, o := range n.Output {
			if _, ok := sc.def[o]; (ok || outer != nil && outer.has(o)) && o != "" {
				return fmt.Errorf("node %s (%s): output %q defined twice", n.GetName(), n.GetOpType(), o)
			}
			sc.def[o] = struct{}{}
		}
	}
	for _, o := range g.GetOutput() {
		if !sc.has(o.GetName()) {
			return fmt.Errorf("graph output %q is never defined", o.GetName())
		}
	}
	return nil
}
