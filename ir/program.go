package ir

import (
	"fmt"
	"io"
	"sort"

	"github.com/fxport/fxport/ir/sym"
)

// Program is one exported program: the main graph, its signature, what is
// known about its symbols, its weights (as lazy handles) and its module call
// graph. It is the unit every pass transforms.
type Program struct {
	// Main is the entry graph ("forward").
	Main *Graph
	// Signature says what each input and output of Main is.
	Signature Signature
	// Env holds range constraints and hints of the program's symbols.
	Env *sym.Env
	// Weights are the parameters, buffers and lifted constants, sorted by name.
	// Their bytes are never read by the IR; a WeightSource opens them on demand.
	Weights []*Weight
	// ModuleCallGraph records the module hierarchy torch.export kept.
	ModuleCallGraph []ModuleCall
	// Meta is program-level metadata (export metadata, schema version, origin).
	Meta Meta

	// regionsMade counts the region graphs ever created for this program
	// (graphs_iter.go): while it is 0, no node can own a region, and
	// ForEachGraph skips reading every node's arguments.
	regionsMade int
}

// NewProgram returns a program with an empty main graph named "forward".
func NewProgram() *Program {
	p := &Program{Env: sym.NewEnv()}
	p.Main = newGraph("forward", p, nil)
	return p
}

// InputKind is the role of a graph input (torch.export InputSpec tag).
type InputKind uint8

// Input roles.
const (
	UserInput InputKind = iota
	Parameter
	Buffer
	ConstantTensor
	CustomObj
	ConstantInput
	TokenInput
)

var inputKindNames = [...]string{"user_input", "parameter", "buffer", "constant_tensor", "custom_obj", "constant_input", "token"}

func (k InputKind) String() string { return inputKindNames[k] }

// InputKindFromName parses the IR text spelling.
func InputKindFromName(s string) (InputKind, bool) {
	for i, n := range inputKindNames {
		if n == s {
			return InputKind(i), true
		}
	}
	return 0, false
}

// OutputKind is the role of a graph output (torch.export OutputSpec tag).
type OutputKind uint8

// Output roles.
const (
	UserOutput OutputKind = iota
	LossOutput
	BufferMutation
	GradientToParameter
	GradientToUserInput
	UserInputMutation
	TokenOutput
	ParameterMutation
)

var outputKindNames = [...]string{"user_output", "loss_output", "buffer_mutation", "gradient_to_parameter", "gradient_to_user_input", "user_input_mutation", "token", "parameter_mutation"}

func (k OutputKind) String() string { return outputKindNames[k] }

// OutputKindFromName parses the IR text spelling.
func OutputKindFromName(s string) (OutputKind, bool) {
	for i, n := range outputKindNames {
		if n == s {
			return OutputKind(i), true
		}
	}
	return 0, false
}

// InputSpec describes input i of the main graph.
type InputSpec struct {
	Kind InputKind
	// Name is the placeholder's value name.
	Name string
	// Target is the state-dict FQN (parameter, buffer), the constant's name,
	// the custom object's name, or the user input's name; "" for tokens.
	Target string
	// Persistent applies to buffers.
	Persistent bool
	// Value is the literal of a constant_input.
	Value Arg
}

// OutputSpec describes output i of the main graph.
type OutputSpec struct {
	Kind OutputKind
	// Target is the buffer, parameter or user input an output mutates or
	// belongs to; "" for user outputs.
	Target string
}

// Signature is the graph signature: one spec per main-graph input and output,
// in order, plus the pytree specs torch recorded for flattening.
type Signature struct {
	Inputs  []InputSpec
	Outputs []OutputSpec
	// InSpec and OutSpec are torch's serialized TreeSpec strings ("" if unknown).
	InSpec, OutSpec string
}

// IsTrivial reports a signature whose inputs are all user inputs named like
// their placeholders and whose outputs are all user outputs, with no pytree specs.
func (s *Signature) IsTrivial() bool {
	if s.InSpec != "" || s.OutSpec != "" {
		return false
	}
	for _, in := range s.Inputs {
		if in.Kind != UserInput || (in.Target != "" && in.Target != in.Name) {
			return false
		}
	}
	for _, out := range s.Outputs {
		if out.Kind != UserOutput || out.Target != "" {
			return false
		}
	}
	return true
}

// Weight is a lazily loaded tensor: a parameter, a buffer or a lifted constant.
type Weight struct {
	// Name is the state-dict FQN or constant name the signature's Target refers to.
	Name string
	Type *TensorType
	// Strides and StorageOffset are in elements; nil Strides means contiguous.
	Strides       []int64
	StorageOffset int64
	// Source opens the bytes; nil means the weight has no data (a fake tensor).
	Source WeightSource
}

// WeightSource is where a weight's bytes live. Implementations never read the
// data until Open is called.
type WeightSource interface {
	// Open streams the raw bytes.
	Open() (io.ReadCloser, error)
	// Size is the number of bytes Open yields.
	Size() int64
	// String is the IR text spelling, e.g. file("w.bin", offset=0, size=64).
	String() string
}

// Weight returns the named weight or nil.
func (p *Program) Weight(name string) *Weight {
	i := sort.Search(len(p.Weights), func(i int) bool { return p.Weights[i].Name >= name })
	if i < len(p.Weights) && p.Weights[i].Name == name {
		return p.Weights[i]
	}
	return nil
}

// AddWeight inserts or replaces a weight, keeping Weights sorted.
func (p *Program) AddWeight(w *Weight) {
	i := sort.Search(len(p.Weights), func(i int) bool { return p.Weights[i].Name >= w.Name })
	if i < len(p.Weights) && p.Weights[i].Name == w.Name {
		p.Weights[i] = w
		return
	}
	p.Weights = append(p.Weights, nil)
	copy(p.Weights[i+1:], p.Weights[i:])
	p.Weights[i] = w
}

// RemoveWeight deletes the named weight if present.
func (p *Program) RemoveWeight(name string) {
	i := sort.Search(len(p.Weights), func(i int) bool { return p.Weights[i].Name >= name })
	if i < len(p.Weights) && p.Weights[i].Name == name {
		p.Weights = append(p.Weights[:i], p.Weights[i+1:]...)
	}
}

// ModuleCall is one entry of torch.export's module call graph.
type ModuleCall struct {
	FQN     string
	Inputs  []string
	Outputs []string
	InSpec  string
	OutSpec string
}

// KV is one metadata entry.
type KV struct{ Key, Value string }

// Meta is an ordered string map (torch node metadata is Dict[str, str]).
// Keys are kept sorted so printing is deterministic.
type Meta struct{ entries []KV }

// Well-known metadata keys.
const (
	MetaStackTrace    = "stack_trace"
	MetaNNModuleStack = "nn_module_stack"
	MetaSourceFnStack = "source_fn_stack"
	MetaTorchFn       = "torch_fn"
	MetaCustom        = "custom"
	// MetaProvenance lists, comma-separated, the passes that created or changed a node.
	MetaProvenance = "provenance"
)

// Get returns the value for key.
func (m *Meta) Get(key string) (string, bool) {
	i := sort.Search(len(m.entries), func(i int) bool { return m.entries[i].Key >= key })
	if i < len(m.entries) && m.entries[i].Key == key {
		return m.entries[i].Value, true
	}
	return "", false
}

// Set stores key=value.
func (m *Meta) Set(key, value string) {
	i := sort.Search(len(m.entries), func(i int) bool { return m.entries[i].Key >= key })
	if i < len(m.entries) && m.entries[i].Key == key {
		m.entries[i].Value = value
		return
	}
	m.entries = append(m.entries, KV{})
	copy(m.entries[i+1:], m.entries[i:])
	m.entries[i] = KV{key, value}
}

// Delete removes key.
func (m *Meta) Delete(key string) {
	i := sort.Search(len(m.entries), func(i int) bool { return m.entries[i].Key >= key })
	if i < len(m.entries) && m.entries[i].Key == key {
		m.entries = append(m.entries[:i], m.entries[i+1:]...)
	}
}

// Entries returns the entries sorted by key. The slice must not be modified.
func (m *Meta) Entries() []KV { return m.entries }

// Len is the number of entries.
func (m *Meta) Len() int { return len(m.entries) }

// Clone returns an independent copy.
func (m Meta) Clone() Meta { return Meta{entries: append([]KV(nil), m.entries...)} }

// Graphs returns the main graph followed by every region graph, depth first, in order.
func (p *Program) Graphs() []*Graph {
	var out []*Graph
	p.ForEachGraph(func(g *Graph) { out = append(out, g) })
	return out
}

// NumNodes counts the nodes of all graphs.
func (p *Program) NumNodes() int {
	total := 0
	p.ForEachGraph(func(g *Graph) { total += g.numNodes })
	return total
}

// String prints the program in IR text form.
func (p *Program) String() string { return Print(p) }

// Errorf builds an error located at a node: "node %add (aten.add.Tensor) in graph forward: …".
func (n *Node) Errorf(format string, args ...any) error {
	return &NodeError{Node: n.Short(), Graph: n.graphName(), Err: fmt.Errorf(format, args...)}
}

// NodeError is an error that names the node it concerns.
type NodeError struct {
	Graph string
	Node  string
	Err   error
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("node %s in graph %s: %v", e.Node, e.Graph, e.Err)
}

func (e *NodeError) Unwrap() error { return e.Err }

func (n *Node) graphName() string {
	if n.Graph == nil {
		return "<detached>"
	}
	return n.Graph.Name
}
