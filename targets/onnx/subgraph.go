package onnx

import (
	"fmt"
	"strconv"

	"github.com/fxport/fxport/ir"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// Subgraph is the body of a control-flow node (Loop) under construction. It
// embeds a child Builder with its own node list, constant cache, symbolic
// integer cache and shape cache, so nothing the body defines is ever reused
// by the enclosing graph and nothing cached in the enclosing graph is assumed
// to exist inside the body (each body materializes its own constants). The
// value namespace is shared with the enclosing graph: ONNX forbids a body
// name that shadows an outer one, and the body may read outer values by name
// (implicit inputs). IR values bound in the enclosing graph stay readable.
type Subgraph struct {
	*Builder
	parent  *Builder
	inputs  []*pb.ValueInfoProto
	outputs []*pb.ValueInfoProto
	defined map[string]bool // names produced by a body node or a body input
}

// NewSubgraph starts a body nested in b. scope names the body in its node
// names ("<scope>/" prefix, after the enclosing scope's).
func (b *Builder) NewSubgraph(scope string) *Subgraph {
	names := make(map[*ir.Value]string, len(b.names))
	for v, n := range b.names {
		names[v] = n
	}
	child := &Builder{
		opset: b.opset, prog: b.prog,
		names: names, reserved: map[*ir.Value]string{},
		used: b.used, next: b.next, // one namespace for the whole model
		consts: map[string]string{}, syms: map[string]string{}, symSrc: b.symSrc,
		shapes: map[string]string{},
		cur:    b.cur,
		scope:  b.scope + scope + "/",
	}
	return &Subgraph{Builder: child, parent: b, defined: map[string]bool{}}
}

// Input declares the next body input: a fresh name derived from base, of
// element type dt and the given rank (rank < 0: unknown rank).
func (s *Subgraph) Input(base string, dt ir.DType, rank int) (string, error) {
	name := s.fresh(s.tmpBase() + "." + base)
	vi, err := tensorInfo(name, dt, rank)
	if err != nil {
		return "", fmt.Errorf("subgraph input %s: %w", base, err)
	}
	s.inputs = append(s.inputs, vi)
	s.defined[name] = true
	return name, nil
}

// Output declares the next body output. A value the body does not define
// itself (an outer value, or a body input passed through) goes through an
// Identity so every body output is produced inside the body.
func (s *Subgraph) Output(name string, dt ir.DType, rank int) error {
	for _, n := range s.nodes {
		for _, o := range n.Output {
			s.defined[o] = true
		}
	}
	out := name
	if !s.defined[name] || s.isInput(name) || s.isOutput(name) {
		out = s.Tmp("Identity", []string{name})
		s.defined[out] = true
	}
	vi, err := tensorInfo(out, dt, rank)
	if err != nil {
		return fmt.Errorf("subgraph output %d: %w", len(s.outputs), err)
	}
	s.outputs = append(s.outputs, vi)
	return nil
}

func (s *Subgraph) isInput(name string) bool {
	for _, vi := range s.inputs {
		if vi.GetName() == name {
			return true
		}
	}
	return false
}

func (s *Subgraph) isOutput(name string) bool {
	for _, vi := range s.outputs {
		if vi.GetName() == name {
			return true
		}
	}
	return false
}

// Proto returns the finished body graph.
func (s *Subgraph) Proto(name string) *pb.GraphProto {
	return &pb.GraphProto{Name: &name, Node: s.nodes, Input: s.inputs, Output: s.outputs}
}

// AttrGraph is a GRAPH attribute.
func AttrGraph(name string, g *pb.GraphProto) *pb.AttributeProto {
	t := pb.AttributeProto_GRAPH
	return &pb.AttributeProto{Name: &name, Type: &t, G: g}
}

// tensorInfo is a ValueInfoProto of element type dt and the given rank with
// unknown dims (rank < 0: no shape).
func tensorInfo(name string, dt ir.DType, rank int) (*pb.ValueInfoProto, error) {
	et, err := elemType(dt)
	if err != nil {
		return nil, err
	}
	e := int32(et)
	tt := &pb.TypeProto_Tensor{ElemType: &e}
	if rank >= 0 {
		tt.Shape = &pb.TensorShapeProto{Dim: make([]*pb.TensorShapeProto_Dimension, rank)}
		for i := range tt.Shape.Dim {
			tt.Shape.Dim[i] = &pb.TensorShapeProto_Dimension{}
		}
	}
	return &pb.ValueInfoProto{Name: &name, Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: tt}}}, nil
}

// LoopBody is a Loop body under construction: inputs (iteration number,
// condition, loop-carried values) are declared by NewLoop; the caller adds
// nodes and then calls Build with the next carried values and the scan
// outputs.
type LoopBody struct {
	*Subgraph
	Iter    string   // 0-d INT64 iteration number
	Cond    string   // 0-d BOOL condition in
	Carried []string // loop-carried values, in order
	types   []loopVar
}

type loopVar struct {
	dt   ir.DType
	rank int
}

// LoopVar describes a loop-carried value or a scan output: its element type
// and rank.
func LoopVar(dt ir.DType, rank int) loopVar { return loopVar{dt, rank} }

// NewLoop starts a Loop body with the given loop-carried values.
func (b *Builder) NewLoop(scope string, carried ...loopVar) (*LoopBody, error) {
	s := b.NewSubgraph(scope)
	lb := &LoopBody{Subgraph: s, types: carried}
	var err error
	if lb.Iter, err = s.Input("iter", ir.Int64, 0); err != nil {
		return nil, err
	}
	if lb.Cond, err = s.Input("cond", ir.Bool, 0); err != nil {
		return nil, err
	}
	for i, c := range carried {
		n, err := s.Input("carried"+strconv.Itoa(i), c.dt, c.rank)
		if err != nil {
			return nil, err
		}
		lb.Carried = append(lb.Carried, n)
	}
	return lb, nil
}

// Build finishes the body (condition passed through unchanged, next carried
// values, scan outputs) and adds the Loop node to the enclosing graph:
// Loop(tripCount, "" condition, initial...). It returns the Loop's outputs:
// the final carried values, then the scan outputs (stacked on axis 0).
func (lb *LoopBody) Build(tripCount string, initial, next []string, scans []string, scanTypes []loopVar) ([]string, error) {
	if len(initial) != len(lb.types) || len(next) != len(lb.types) {
		return nil, fmt.Errorf("Loop: %d carried types, %d initial values, %d next values", len(lb.types), len(initial), len(next))
	}
	if len(scans) != len(scanTypes) {
		return nil, fmt.Errorf("Loop: %d scan outputs, %d types", len(scans), len(scanTypes))
	}
	if err := lb.Output(lb.Cond, ir.Bool, 0); err != nil {
		return nil, err
	}
	for i, n := range next {
		if err := lb.Output(n, lb.types[i].dt, lb.types[i].rank); err != nil {
			return nil, err
		}
	}
	for i, n := range scans {
		if err := lb.Output(n, scanTypes[i].dt, scanTypes[i].rank); err != nil {
			return nil, err
		}
	}
	name := lb.parent.fresh(lb.scope[:len(lb.scope)-1] + ".body")
	g := lb.Proto(name)
	ins := append([]string{tripCount, ""}, initial...)
	return lb.parent.TmpN("Loop", ins, len(next)+len(scans), AttrGraph("body", g)), nil
}

// If adds If(cond) to b with the two finished branches (subgraphs of b
// without inputs, each declaring n outputs) and returns its n outputs.
func (b *Builder) If(cond string, then, els *Subgraph, n int) ([]string, error) {
	if len(then.outputs) != n || len(els.outputs) != n {
		return nil, fmt.Errorf("If: branches declare %d and %d outputs, want %d", len(then.outputs), len(els.outputs), n)
	}
	tn := b.fresh(then.scope[:len(then.scope)-1] + ".then")
	en := b.fresh(els.scope[:len(els.scope)-1] + ".else")
	return b.TmpN("If", []string{cond}, n, AttrGraph("then_branch", then.Proto(tn)), AttrGraph("else_branch", els.Proto(en))), nil
}
