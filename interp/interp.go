package interp

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/fxport/fxport/ir"
)

// Options control a run.
type Options struct {
	// Seed seeds the generator random ops draw from.
	Seed uint64
	// NoTypeCheck skips checking each result against the type its node
	// declares (and binding unbacked symbols from results).
	NoTypeCheck bool
	// Observe, when set, is called after every node (regions included)
	// with its results.
	Observe func(n *ir.Node, results []Value)
	// Weights caches decoded weights across runs; nil decodes them per run.
	Weights *WeightCache
	// MaxIterations bounds while_loop iterations (default 1,000,000).
	MaxIterations int
	// MissingWeight, when set, supplies the weights that have no data (no
	// source), e.g. random values for a program exported with fake weights;
	// without it such a weight is an error naming it.
	MissingWeight func(w *ir.Weight) (*Tensor, error)
}

// Result is what a run produced.
type Result struct {
	// Outputs are the main graph's outputs, in order.
	Outputs []Value
	// Random marks the outputs that depend on a random op's draws.
	Random []bool
	// Bindings are the symbol values the run used.
	Bindings map[string]int64
}

// Run interprets p on its user inputs: one value per user_input entry of the
// signature (every graph input when the program has no explicit signature),
// in order. Tensors passed in are copied, never modified.
func Run(p *ir.Program, inputs []Value, opts Options) (*Result, error) {
	m := newMachine(p, opts)
	args, err := m.mainInputs(inputs)
	if err != nil {
		return nil, err
	}
	outs, rnd, err := m.runGraph(p.Main, args, make([]bool, len(args)))
	if err != nil {
		return nil, err
	}
	return &Result{Outputs: outs, Random: rnd, Bindings: m.bind}, nil
}

// UserInputs lists the main-graph inputs a caller provides: the user_input
// entries of the signature, or every input when the signature lists none.
func UserInputs(p *ir.Program) []*ir.Value {
	if len(p.Signature.Inputs) == 0 {
		return append([]*ir.Value(nil), p.Main.Inputs...)
	}
	var out []*ir.Value
	for i, s := range p.Signature.Inputs {
		if s.Kind == ir.UserInput && i < len(p.Main.Inputs) {
			out = append(out, p.Main.Inputs[i])
		}
	}
	return out
}

// machine is the state of one run.
type machine struct {
	prog  *ir.Program
	opts  Options
	bind  map[string]int64
	rng   *rand.Rand
	draws int64 // random values drawn so far
	depth int
}

func newMachine(p *ir.Program, opts Options) *machine {
	if opts.MaxIterations == 0 {
		opts.MaxIterations = 1_000_000
	}
	return &machine{
		prog: p,
		opts: opts,
		bind: map[string]int64{},
		rng:  rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15)),
	}
}

// mainInputs builds the values of the main graph's inputs: user inputs from
// the caller, weights from the program, constants from the signature.
func (m *machine) mainInputs(inputs []Value) ([]Value, error) {
	p := m.prog
	g := p.Main
	specs := p.Signature.Inputs
	if len(specs) == 0 {
		specs = make([]ir.InputSpec, len(g.Inputs))
		for i, in := range g.Inputs {
			specs[i] = ir.InputSpec{Kind: ir.UserInput, Name: in.Name}
		}
	}
	if len(specs) != len(g.Inputs) {
		return nil, fmt.Errorf("interp: the signature lists %d inputs, graph %s has %d", len(specs), g.Name, len(g.Inputs))
	}
	nUser := 0
	for _, s := range specs {
		if s.Kind == ir.UserInput {
			nUser++
		}
	}
	if len(inputs) != nUser {
		return nil, fmt.Errorf("interp: the program takes %d user inputs, got %d", nUser, len(inputs))
	}
	args := make([]Value, len(g.Inputs))
	k := 0
	for i, s := range specs {
		in := g.Inputs[i]
		switch s.Kind {
		case ir.UserInput:
			v := inputs[k]
			k++
			if t, ok := v.(*Tensor); ok && in.Tensor() == nil && t.Numel() == 1 {
				// A scalar input given as a one-element tensor (as .npy stores it).
				item, err := t.Item()
				if err != nil {
					return nil, fmt.Errorf("interp: input %s: %w", in, err)
				}
				v = item
			} else if ok {
				if err := checkDType(t.DType); err != nil {
					return nil, fmt.Errorf("interp: input %s: %w", in, err)
				}
				v = t.Clone()
			}
			args[i] = v
		case ir.Parameter, ir.Buffer, ir.ConstantTensor:
			t, err := m.loadWeight(s.Target)
			if err != nil {
				return nil, fmt.Errorf("interp: input %s: %w", in, err)
			}
			args[i] = t
		case ir.ConstantInput:
			v, err := Literal(s.Value)
			if err != nil {
				return nil, fmt.Errorf("interp: constant input %s: %w", in, err)
			}
			args[i] = v
		case ir.TokenInput:
			args[i] = Token{}
		default:
			return nil, fmt.Errorf("interp: input %s: %s inputs are not supported", in, s.Kind)
		}
	}
	if err := m.bindInputs(g.Inputs, args); err != nil {
		return nil, err
	}
	return args, nil
}

func (m *machine) loadWeight(name string) (*Tensor, error) {
	w := m.prog.Weight(name)
	if w == nil {
		return nil, fmt.Errorf("no weight %q in the program", name)
	}
	if w.Source == nil && m.opts.MissingWeight != nil {
		t, err := m.opts.MissingWeight(w)
		if err != nil {
			return nil, fmt.Errorf("weight %q: %w", name, err)
		}
		return t, nil
	}
	if m.opts.Weights != nil {
		return m.opts.Weights.Load(w)
	}
	return LoadWeight(w)
}

// frame holds the values of one graph activation.
type frame struct {
	vals map[*ir.Value]Value
	rnd  map[*ir.Value]bool
}

// runGraph interprets g on its inputs and returns its outputs and which of
// them depend on random draws.
func (m *machine) runGraph(g *ir.Graph, inputs []Value, inRandom []bool) ([]Value, []bool, error) {
	if len(inputs) != len(g.Inputs) {
		return nil, nil, fmt.Errorf("graph %s takes %d inputs, got %d", g.Name, len(g.Inputs), len(inputs))
	}
	m.depth++
	defer func() { m.depth-- }()
	if m.depth > 64 {
		return nil, nil, fmt.Errorf("graph %s: regions nested deeper than 64", g.Name)
	}
	if m.depth > 1 {
		// Symbols a region binds (unbacked sizes of its own results) are
		// local to one execution: a loop body may bind them differently
		// on every iteration.
		before := make(map[string]bool, len(m.bind))
		for k := range m.bind {
			before[k] = true
		}
		defer func() {
			for k := range m.bind {
				if !before[k] {
					delete(m.bind, k)
				}
			}
		}()
	}
	f := &frame{vals: make(map[*ir.Value]Value, g.Len()+len(inputs)), rnd: map[*ir.Value]bool{}}
	for i, in := range g.Inputs {
		f.vals[in] = inputs[i]
		if inRandom[i] {
			f.rnd[in] = true
		}
	}
	for n := g.First(); n != nil; n = n.Next() {
		if err := m.runNode(f, n); err != nil {
			return nil, nil, err
		}
	}
	outs := g.Outputs()
	vals := make([]Value, len(outs))
	rnd := make([]bool, len(outs))
	for i, a := range outs {
		v, r, err := m.eval(f, a)
		if err != nil {
			return nil, nil, fmt.Errorf("graph %s: output %d: %w", g.Name, i, err)
		}
		vals[i], rnd[i] = v, r
	}
	return vals, rnd, nil
}

// eval resolves an argument to a value and whether it depends on random draws.
func (m *machine) eval(f *frame, a ir.Arg) (Value, bool, error) {
	switch a.Kind {
	case ir.ArgValue:
		v, ok := f.vals[a.Value]
		if !ok {
			return nil, false, fmt.Errorf("%s is used before it is computed", a.Value)
		}
		return v, f.rnd[a.Value], nil
	case ir.ArgList:
		l := make([]Value, len(a.List))
		anyRnd := false
		for i, e := range a.List {
			v, r, err := m.eval(f, e)
			if err != nil {
				return nil, false, err
			}
			l[i] = v
			anyRnd = anyRnd || r
		}
		return l, anyRnd, nil
	}
	v, err := Literal(a)
	return v, false, err
}

// runNode runs one node and stores its results.
func (m *machine) runNode(f *frame, n *ir.Node) error {
	args := make([]Value, len(n.Args))
	tainted := false
	for i, a := range n.Args {
		v, r, err := m.eval(f, a)
		if err != nil {
			return n.Errorf("%w", err)
		}
		args[i] = v
		tainted = tainted || r
	}
	k, schema, op := lookup(n.Op)
	if k == nil {
		return n.Errorf("op %s is not supported by the interpreter", n.Op)
	}
	draws := m.draws
	c := &call{m: m, node: n, op: op, schema: schema, args: args}
	outs, err := runKernel(k, c)
	if err != nil {
		var ne *ir.NodeError
		if errors.As(err, &ne) {
			return err
		}
		return n.Errorf("%s: %w", n.Op, err)
	}
	outs, err = fitResults(n, outs)
	if err != nil {
		return n.Errorf("%s: %w", n.Op, err)
	}
	if !m.opts.NoTypeCheck {
		for i, r := range n.Results {
			if err := m.checkType(r.Type, outs[i]); err != nil {
				return n.Errorf("%s: result %s: %w", n.Op, r, err)
			}
		}
	}
	tainted = tainted || m.draws != draws
	for i, r := range n.Results {
		f.vals[r] = outs[i]
		if tainted {
			f.rnd[r] = true
		}
	}
	if m.opts.Observe != nil {
		m.opts.Observe(n, outs)
	}
	return nil
}

// runKernel calls a kernel, turning a panic (a kernel bug or an input the
// kernel did not validate) into an error.
func runKernel(k kernel, c *call) (outs []Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(errTooLarge); ok {
				outs, err = nil, e
				return
			}
			outs, err = nil, fmt.Errorf("kernel panic: %v", r)
		}
	}()
	return k(c)
}

// fitResults matches a kernel's values to the node's results: a list
// result packs several values, several results unpack a list.
func fitResults(n *ir.Node, outs []Value) ([]Value, error) {
	want := len(n.Results)
	if len(outs) == want {
		return outs, nil
	}
	if want == 1 {
		switch n.Results[0].Type.(type) {
		case *ir.ListType, *ir.TupleType:
			return []Value{append([]Value(nil), outs...)}, nil
		}
	}
	if len(outs) == 1 {
		if l, ok := outs[0].([]Value); ok && len(l) == want {
			return l, nil
		}
	}
	if want == 0 {
		return nil, nil
	}
	return nil, fmt.Errorf("the kernel produced %d values for %d results", len(outs), want)
}

// drawFloat returns a uniform value in [0, 1) and counts the draw.
func (m *machine) drawFloat() float64 {
	m.draws++
	return m.rng.Float64()
}

// drawNormal returns a standard normal value and counts the draw.
func (m *machine) drawNormal() float64 {
	m.draws++
	return m.rng.NormFloat64()
}

// drawInt returns a uniform int in [0, n) and counts the draw.
func (m *machine) drawInt(n int64) int64 {
	m.draws++
	return m.rng.Int64N(n)
}

// sortedBindings lists bindings as "s0=4" in name order.
func sortedBindings(b map[string]int64) []string {
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%s=%d", k, b[k])
	}
	return out
}
