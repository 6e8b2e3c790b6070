package opt

import (
	"fmt"

	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// Defaults of Options.
const (
	DefaultFoldLimit     = 1024
	DefaultInputLimit    = 8192
	DefaultMaxIterations = 4
)

// Options configure Optimize. The zero value is the default configuration.
type Options struct {
	// FoldLimit is the largest folded output, in elements (0: DefaultFoldLimit;
	// < 0: no constant folding).
	FoldLimit int64
	// InputLimit skips folding a node with an input larger than this many
	// elements (0: DefaultInputLimit).
	InputLimit int64
	// MaxIterations caps the fixpoint loop (0: DefaultMaxIterations).
	MaxIterations int
	// FoldInitializers lets the folder read inline INT64/INT32 initializers.
	// Off by default: initializers are the program's weights, named by their
	// state-dict FQN, and the optimizer does not turn them into Constants
	// (it only removes those no node reads).
	FoldInitializers bool
}

func (o Options) foldLimit() int64 {
	if o.FoldLimit == 0 {
		return DefaultFoldLimit
	}
	return o.FoldLimit
}

func (o Options) inputLimit() int64 {
	if o.InputLimit <= 0 {
		return DefaultInputLimit
	}
	return o.InputLimit
}

func (o Options) maxIterations() int {
	if o.MaxIterations <= 0 {
		return DefaultMaxIterations
	}
	return o.MaxIterations
}

// Stats says what Optimize did.
type Stats struct {
	NodesBefore, NodesAfter int
	Folded                  int // nodes replaced by a Constant
	Rewritten               int // exact algebraic rewrites
	IdentitiesRemoved       int
	CSEMerged               int
	DeadNodes               int
	// RemovedInitializers names the initializers no node used any more, in
	// graph order (the emitter drops their pending weights).
	RemovedInitializers []string
	Iterations          int
}

func (s Stats) String() string {
	return fmt.Sprintf("%d → %d nodes (folded %d, rewritten %d, identities %d, cse %d, dead %d; %d initializers removed; %d iterations)",
		s.NodesBefore, s.NodesAfter, s.Folded, s.Rewritten, s.IdentitiesRemoved, s.CSEMerged, s.DeadNodes, len(s.RemovedInitializers), s.Iterations)
}

// Optimize rewrites m's main graph in place. It fails only on a malformed
// graph (a node input never defined), naming the node.
func Optimize(m *pb.ModelProto, opts Options) (Stats, error) {
	g := m.GetGraph()
	if g == nil {
		return Stats{}, fmt.Errorf("optimize: model has no graph")
	}
	st := Stats{NodesBefore: len(g.Node)}
	if err := checkDefined(g); err != nil {
		return st, fmt.Errorf("optimize: %w", err)
	}
	o := &optimizer{g: g, opts: opts, st: &st, pinned: subgraphRefs(g)}
	for it := 0; it < opts.maxIterations(); it++ {
		st.Iterations++
		// Only fold, rewrite and identity removal (and DCE freeing the sole
		// use of an output Identity's input) open opportunities for another
		// round: CSE resolves its merges in one forward walk and DCE runs
		// after it, so a round where only those changed is a fixpoint.
		again := false
		// One table of known values serves fold and rewrite: fold adds what
		// it folds, and rewrite only removes non-constant nodes.
		known := o.constants()
		if opts.foldLimit() > 0 {
			again = o.fold(known) || again
		}
		again = o.rewrite(known) || again
		again = o.identities() || again
		o.cse()
		if o.dce() && o.outputIdentities() {
			again = true
		}
		if !again {
			break
		}
	}
	o.dropInitializers()
	o.pruneValueInfo()
	st.NodesAfter = len(g.Node)
	return st, nil
}

type optimizer struct {
	g      *pb.GraphProto
	opts   Options
	st     *Stats
	pinned map[string]bool // names read inside subgraphs: never renamed or removed
}

// outputIdentities reports whether an Identity defines a graph output (DCE
// may have made it removable).
func (o *optimizer) outputIdentities() bool {
	outs := o.outputs()
	for _, n := range o.g.Node {
		if n.GetOpType() == "Identity" && len(n.Output) == 1 && outs[n.Output[0]] {
			return true
		}
	}
	return false
}

// outputs is the set of graph output names.
func (o *optimizer) outputs() map[string]bool {
	out := make(map[string]bool, len(o.g.Output))
	for _, v := range o.g.Output {
		out[v.GetName()] = true
	}
	return out
}

// rename applies a rename map to every node input (chains resolved).
func (o *optimizer) rename(r map[string]string) {
	if len(r) == 0 {
		return
	}
	for _, n := range o.g.Node {
		for i, in := range n.Input {
			n.Input[i] = resolve(r, in)
		}
	}
}

func resolve(r map[string]string, name string) string {
	for {
		to, ok := r[name]
		if !ok {
			return name
		}
		name = to
	}
}

func checkDefined(g *pb.GraphProto) error {
	size := len(g.Initializer) + len(g.Input) + 1
	for _, n := range g.Node {
		size += len(n.Output)
	}
	def := make(map[string]struct{}, size) // presized: no rehash while it grows
	def[""] = struct{}{}
	for _, v := range g.Input {
		def[v.GetName()] = struct{}{}
	}
	for _, t := range g.Initializer {
		def[t.GetName()] = struct{}{}
	}
	for _, n := range g.Node {
		if !hasSubgraph(n) {
			for _, in := range n.Input {
				if _, ok := def[in]; !ok {
					return fmt.Errorf("node %q (%s): input %q is not defined before it", n.GetName(), n.GetOpType(), in)
				}
			}
		}
		for _, out := range n.Output {
			def[out] = struct{}{}
		}
	}
	for _, v := range g.Output {
		if _, ok := def[v.GetName()]; !ok {
			return fmt.Errorf("graph output %q is never defined", v.GetName())
		}
	}
	return nil
}

// hasSubgraph reports whether n has a graph attribute (subgraphs(n) is not
// empty), without building the list.
func hasSubgraph(n *pb.NodeProto) bool {
	for _, a := range n.Attribute {
		if a.G != nil || len(a.Graphs) > 0 {
			return true
		}
	}
	return false
}

func subgraphs(n *pb.NodeProto) []*pb.GraphProto {
	var gs []*pb.GraphProto
	for _, a := range n.Attribute {
		if a.G != nil {
			gs = append(gs, a.G)
		}
		gs = append(gs, a.Graphs...)
	}
	return gs
}

// subgraphRefs collects every name a subgraph (If/Loop/Scan body) reads; an
// over-approximation of its outer-scope references.
func subgraphRefs(g *pb.GraphProto) map[string]bool {
	refs := map[string]bool{}
	var walk func(g *pb.GraphProto)
	walk = func(g *pb.GraphProto) {
		for _, n := range g.Node {
			for _, sg := range subgraphs(n) {
				for _, sn := range sg.Node {
					for _, in := range sn.Input {
						refs[in] = true
					}
				}
				for _, out := range sg.Output {
					refs[out.GetName()] = true
				}
				walk(sg)
			}
		}
	}
	walk(g)
	return refs
}

// dropInitializers removes initializers no node, output or subgraph reads.
func (o *optimizer) dropInitializers() {
	if len(o.g.Initializer) == 0 {
		return
	}
	// Mark uses in a set of the initializer names only (far smaller than the
	// set of every name a node reads).
	used := make(map[string]bool, len(o.g.Initializer))
	for _, t := range o.g.Initializer {
		used[t.GetName()] = false
	}
	mark := func(name string) {
		if u, ok := used[name]; ok && !u {
			used[name] = true
		}
	}
	for name := range o.outputs() {
		mark(name)
	}
	for name := range o.pinned {
		mark(name)
	}
	for _, n := range o.g.Node {
		for _, in := range n.Input {
			mark(in)
		}
	}
	kept := o.g.Initializer[:0]
	for _, t := range o.g.Initializer {
		if used[t.GetName()] {
			kept = append(kept, t)
		} else {
			o.st.RemovedInitializers = append(o.st.RemovedInitializers, t.GetName())
		}
	}
	o.g.Initializer = kept
}

// pruneValueInfo drops value_info entries of values that no longer exist.
func (o *optimizer) pruneValueInfo() {
	if len(o.g.ValueInfo) == 0 {
		return
	}
	def := map[string]bool{}
	for _, n := range o.g.Node {
		for _, out := range n.Output {
			def[out] = true
		}
	}
	kept := o.g.ValueInfo[:0]
	for _, v := range o.g.ValueInfo {
		if def[v.GetName()] {
			kept = append(kept, v)
		}
	}
	o.g.ValueInfo = kept
}
