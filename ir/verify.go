package ir

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir/sym"
)

// VerifyError is one verifier finding. Graph and Node locate it (Node is the
// node's long form, or "" for program-level findings).
type VerifyError struct {
	Graph string
	Node  string
	Msg   string
}

func (e *VerifyError) Error() string {
	switch {
	case e.Node != "":
		return fmt.Sprintf("graph %s: %s: %s", e.Graph, e.Node, e.Msg)
	case e.Graph != "":
		return fmt.Sprintf("graph %s: %s", e.Graph, e.Msg)
	}
	return e.Msg
}

// VerifyErrors is the list of findings of one Verify call.
type VerifyErrors []*VerifyError

func (es VerifyErrors) Error() string {
	const max = 10
	var b strings.Builder
	for i, e := range es {
		if i == max {
			fmt.Fprintf(&b, "\n(and %d more)", len(es)-max)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap exposes the individual findings to errors.As.
func (es VerifyErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// VerifyOptions selects the optional, more expensive checks.
type VerifyOptions struct {
	// Types re-runs shape/dtype inference on every node with a rule and
	// requires the recorded result types to match.
	Types bool
}

// Verify checks the program's structural invariants: node/graph links and
// value ownership, unique names, definitions before uses, exact use lists,
// argument counts and kinds against the op schema, result counts, region
// rules and signature consistency. It returns nil or VerifyErrors.
func Verify(p *Program) error { return VerifyWith(p, VerifyOptions{}) }

// VerifyWith is Verify with options.
func VerifyWith(p *Program, opts VerifyOptions) error {
	v := &verifier{opts: opts}
	if p == nil || p.Main == nil {
		return VerifyErrors{{Msg: "program has no main graph"}}
	}
	v.graph(p.Main, p)
	v.signature(p)
	v.symbols(p) // verify_program.go
	v.weights(p)
	if len(v.errs) > 0 {
		return v.errs
	}
	return nil
}

type verifier struct {
	opts VerifyOptions
	errs VerifyErrors
}

func (v *verifier) add(g *Graph, n *Node, format string, args ...any) {
	e := &VerifyError{Msg: fmt.Sprintf(format, args...)}
	if g != nil {
		e.Graph = g.Name
	}
	if n != nil {
		e.Node = n.Short()
	}
	v.errs = append(v.errs, e)
}

func (v *verifier) graph(g *Graph, p *Program) {
	if g.Program != p {
		v.add(g, nil, "graph belongs to another program")
	}
	// slots records, per value, the position of its definition (inputs
	// at -1) and the uses counted here.
	slots := newValueSlots(g.nextID + 1)
	names := make(map[string]bool, g.numNodes+len(g.Inputs))
	order := make([]*Value, 0, g.numNodes+len(g.Inputs))
	for i, in := range g.Inputs {
		if in.Graph != g || in.Def != nil || in.Index != i {
			v.add(g, nil, "input %s is not linked to the graph as input %d", in, i)
		}
		if names[in.Name] {
			v.add(g, nil, "value name %%%s defined twice", in.Name)
		}
		names[in.Name] = true
		slots.get(in).define(-1)
		order = append(order, in)
	}
	pos := 0
	count := 0
	var prev *Node
	for n := g.first; n != nil; n = n.next {
		count++
		if n.prev != prev {
			v.add(g, n, "broken node list (prev link)")
		}
		prev = n
		if n.Graph != g {
			v.add(g, n, "node belongs to graph %s", graphName(n.Graph))
		}
		if n.dead {
			v.add(g, n, "erased node still in the graph")
		}
		if n.Op <= OpInvalid || int(n.Op) >= len(opTab) {
			v.add(g, n, "invalid op %d", n.Op)
			continue
		}
		for i := range n.Args {
			n.Args[i].walkValues(func(x *Value) {
				if x == nil {
					v.add(g, n, "nil operand")
					return
				}
				slot := slots.get(x)
				slot.uses++
				if x.Graph != g {
					v.add(g, n, "operand %s belongs to graph %s (regions see only their own inputs)", x, graphName(x.Graph))
					return
				}
				at, ok := slot.pos, slot.defined
				if !ok {
					v.add(g, n, "operand %s is not defined before its use", x)
				} else if at >= pos {
					v.add(g, n, "operand %s is defined by this node", x)
				}
			})
		}
		v.schema(g, n)
		v.cond(g, n)
		for i, r := range n.Results {
			if r.Def != n || r.Index != i || r.Graph != g {
				v.add(g, n, "result %d (%s) is not linked to its node", i, r)
			}
			if r.Type == nil {
				v.add(g, n, "result %s has no type", r)
			}
			if names[r.Name] {
				v.add(g, n, "value name %%%s defined twice", r.Name)
			}
			names[r.Name] = true
			slots.get(r).define(pos)
			order = append(order, r)
		}
		for _, region := range n.Regions() {
			if region.Parent != n {
				v.add(g, n, "region ^%s is not owned by this node", region.Name)
			}
			v.graph(region, p)
		}
		if v.opts.Types {
			v.types(g, n)
		}
		pos++
	}
	if prev != g.last {
		v.add(g, nil, "broken node list (last link)")
	}
	v.dims(g)
	if count != g.numNodes {
		v.add(g, nil, "node count %d does not match the list (%d)", g.numNodes, count)
	}
	for _, o := range g.ret.Args {
		o.walkValues(func(x *Value) {
			if x == nil {
				v.add(g, nil, "nil output")
				return
			}
			slot := slots.get(x)
			slot.uses++
			if x.Graph != g {
				v.add(g, nil, "output %s belongs to graph %s", x, graphName(x.Graph))
			} else if !slot.defined {
				v.add(g, nil, "output %s is not defined in the graph", x)
			}
		})
	}
	// Use lists must be exact; walk values in definition order so findings are deterministic.
	for _, x := range order {
		if got, want := len(x.uses), slots.get(x).uses; got != want {
			v.add(g, x.Def, "value %s records %d uses but has %d", x, got, want)
		}
		for _, u := range x.uses {
			if u.dead {
				v.add(g, x.Def, "value %s lists an erased node as a user", x)
				break
			}
		}
	}
}

// valueSlot is what the verifier records about one value of a graph.
type valueSlot struct {
	v       *Value
	defined bool
	pos     int // position of the defining node; -1 for graph inputs
	uses    int // uses counted while walking the graph
}

func (s *valueSlot) define(pos int) { s.defined, s.pos = true, pos }

// valueSlots holds a valueSlot per value, indexed by the value's ID, which
// is dense within a graph: a slice walk instead of pointer-keyed maps, whose
// cache misses made verifying 100k nodes cost 20× verifying 10k. A value
// whose ID is out of range or taken by another value (only in a broken or
// foreign graph) falls back to a map, so identity, not ID, decides.
type valueSlots struct {
	byID  []valueSlot
	extra map[*Value]*valueSlot
}

func newValueSlots(n int) *valueSlots { return &valueSlots{byID: make([]valueSlot, n)} }

func (s *valueSlots) get(x *Value) *valueSlot {
	if x.ID >= 0 && x.ID < len(s.byID) {
		slot := &s.byID[x.ID]
		if slot.v == x {
			return slot
		}
		if slot.v == nil {
			slot.v = x
			return slot
		}
	}
	if s.extra == nil {
		s.extra = map[*Value]*valueSlot{}
	}
	slot := s.extra[x]
	if slot == nil {
		slot = &valueSlot{v: x}
		s.extra[x] = slot
	}
	return slot
}

func graphName(g *Graph) string {
	if g == nil {
		return "<none>"
	}
	return g.Name
}

// schema checks arguments and results against the op schema.
func (v *verifier) schema(g *Graph, n *Node) {
	info := n.Op.Info()
	s := &info.Schema
	if !s.VarArgs {
		if len(n.Args) != len(s.Args) {
			v.add(g, n, "has %d arguments, schema %s has %d", len(n.Args), info.Name, len(s.Args))
			return
		}
		for i, as := range s.Args {
			if msg := checkArg(n.Args[i], as.Type); msg != "" {
				v.add(g, n, "argument %q (%s): %s", as.Name, as.Type, msg)
			}
		}
	}
	// Result count: a list return yields any number of results, otherwise one per return.
	fixed := true
	for _, r := range s.Returns {
		if r.Type.List {
			fixed = false
		}
	}
	if fixed && len(s.Returns) > 0 && len(n.Results) != len(s.Returns) && !(len(s.Returns) == 1 && s.Returns[0].Type.Base == KNone) {
		v.add(g, n, "has %d results, schema returns %d", len(n.Results), len(s.Returns))
	}
}

// checkArg returns "" when a fits t, else why not.
func checkArg(a Arg, t SchemaType) string {
	if a.Kind == ArgNone {
		if t.Optional || t.Base == KAny || t.Base == KNone {
			return ""
		}
		return "None for a non-optional argument"
	}
	if t.List {
		if a.Kind != ArgList {
			// torch accepts a bare int for int[N] and a bare value for SymInt[].
			if (t.Base == KInt || t.Base == KSymInt) && (a.Kind == ArgInt || a.Kind == ArgValue) {
				return checkScalarArg(a, t.Base)
			}
			return fmt.Sprintf("expected a list, got %s", a.Kind)
		}
		for i, e := range a.List {
			if e.Kind == ArgNone && (t.ElemOptional || t.Base == KAny) {
				continue
			}
			if msg := checkScalarArg(e, t.Base); msg != "" {
				return fmt.Sprintf("element %d: %s", i, msg)
			}
		}
		return ""
	}
	return checkScalarArg(a, t.Base)
}

func checkScalarArg(a Arg, base BaseKind) string {
	valueType := func() Type {
		if a.Kind == ArgValue && a.Value != nil {
			return a.Value.Type
		}
		return nil
	}
	if IsUnknown(valueType()) {
		return "" // any kind until inference says
	}
	switch base {
	case KAny:
		return ""
	case KTensor:
		// torch.export writes Python numbers where a schema says Tensor
		// ("wrapped numbers": aten.mul.Tensor(%x, 0.5)); they promote as scalars.
		if a.Kind == ArgInt || a.Kind == ArgFloat || a.Kind == ArgBool {
			return ""
		}
		if a.Kind != ArgValue {
			return fmt.Sprintf("expected a tensor, got %s %s", a.Kind, a)
		}
		if _, ok := valueType().(*TensorType); !ok {
			return fmt.Sprintf("expected a tensor, %s has type %s", a.Value, typeString(valueType()))
		}
	case KInt, KSymInt:
		switch a.Kind {
		case ArgInt:
		case ArgBool: // Python bools are ints
		case ArgValue:
			switch t := valueType().(type) {
			case *SymIntType:
			case *ScalarType:
				if t.Kind != IntKind {
					return fmt.Sprintf("expected an int, %s has type %s", a.Value, t)
				}
			default:
				return fmt.Sprintf("expected an int, %s has type %s", a.Value, typeString(t))
			}
		default:
			return fmt.Sprintf("expected an int, got %s %s", a.Kind, a)
		}
	case KFloat, KSymFloat:
		switch a.Kind {
		case ArgFloat, ArgInt:
		case ArgValue:
			switch valueType().(type) {
			case *SymFloatType, *SymIntType, *ScalarType:
			default:
				return fmt.Sprintf("expected a float, %s has type %s", a.Value, typeString(valueType()))
			}
		default:
			return fmt.Sprintf("expected a float, got %s %s", a.Kind, a)
		}
	case KBool, KSymBool:
		switch a.Kind {
		case ArgBool:
		case ArgValue:
			switch valueType().(type) {
			case *SymBoolType, *ScalarType:
			default:
				return fmt.Sprintf("expected a bool, %s has type %s", a.Value, typeString(valueType()))
			}
		default:
			return fmt.Sprintf("expected a bool, got %s %s", a.Kind, a)
		}
	case KScalar:
		switch a.Kind {
		case ArgInt, ArgFloat, ArgBool:
		case ArgValue:
			switch valueType().(type) {
			case *SymIntType, *SymFloatType, *SymBoolType, *ScalarType:
			default:
				return fmt.Sprintf("expected a scalar, %s has type %s", a.Value, typeString(valueType()))
			}
		default:
			return fmt.Sprintf("expected a scalar, got %s %s", a.Kind, a)
		}
	case KStr:
		if a.Kind != ArgString {
			return fmt.Sprintf("expected a string, got %s %s", a.Kind, a)
		}
	case KScalarType:
		if a.Kind != ArgDType && a.Kind != ArgInt {
			return fmt.Sprintf("expected a dtype, got %s %s", a.Kind, a)
		}
	case KLayout:
		if a.Kind != ArgLayout && a.Kind != ArgInt {
			return fmt.Sprintf("expected a layout, got %s %s", a.Kind, a)
		}
	case KMemoryFormat:
		if a.Kind != ArgMemoryFormat && a.Kind != ArgInt {
			return fmt.Sprintf("expected a memory format, got %s %s", a.Kind, a)
		}
	case KDevice:
		if a.Kind != ArgDevice && a.Kind != ArgString {
			return fmt.Sprintf("expected a device, got %s %s", a.Kind, a)
		}
	case KGraph:
		if a.Kind != ArgGraph || a.Graph == nil {
			return fmt.Sprintf("expected a region, got %s %s", a.Kind, a)
		}
	case KGenerator, KStorage, KDimname, KToken, KOpaque:
		if a.Kind != ArgValue {
			return fmt.Sprintf("expected a value, got %s %s", a.Kind, a)
		}
	}
	return ""
}

// types re-infers n's result types and compares.
func (v *verifier) types(g *Graph, n *Node) {
	if n.Op.Info().Infer == nil || hasUnknown(n) {
		return // UnknownValues reports what is not typed yet
	}
	want, err := InferTypes(n)
	if err != nil {
		var ne *NodeError
		if errors.As(err, &ne) {
			v.add(g, n, "type inference failed: %v", ne.Err)
		} else {
			v.add(g, n, "type inference failed: %v", err)
		}
		return
	}
	if len(want) != len(n.Results) {
		v.add(g, n, "op infers %d results, node has %d", len(want), len(n.Results))
		return
	}
	for i, t := range want {
		if !TypesCompatible(n.Results[i].Type, t) && !TypesCompatible(n.Results[i].Type, renameUnbacked(n, n.Results[i].Type, t)) {
			v.add(g, n, "result %s has type %s, op infers %s", n.Results[i], typeString(n.Results[i].Type), t)
		}
	}
}

// signature checks that the signature describes Main's inputs and outputs.
func (v *verifier) signature(p *Program) {
	g := p.Main
	s := &p.Signature
	if len(s.Inputs) != len(g.Inputs) {
		v.add(g, nil, "signature has %d inputs, graph has %d", len(s.Inputs), len(g.Inputs))
	} else {
		for i, in := range s.Inputs {
			if in.Name != g.Inputs[i].Name {
				v.add(g, nil, "signature input %d is %q, graph input is %s", i, in.Name, g.Inputs[i])
			}
			switch in.Kind {
			case Parameter, Buffer, ConstantTensor:
				if in.Target == "" {
					v.add(g, nil, "%s input %s has no target", in.Kind, g.Inputs[i])
				} else if len(p.Weights) > 0 && p.Weight(in.Target) == nil {
					v.add(g, nil, "%s input %s refers to missing weight %q", in.Kind, g.Inputs[i], in.Target)
				}
				if _, ok := g.Inputs[i].Type.(*TensorType); !ok && !IsUnknown(g.Inputs[i].Type) {
					v.add(g, nil, "%s input %s is not a tensor (%s)", in.Kind, g.Inputs[i], typeString(g.Inputs[i].Type))
				}
			case TokenInput:
				if _, ok := g.Inputs[i].Type.(*TokenType); !ok {
					v.add(g, nil, "token input %s has type %s", g.Inputs[i], typeString(g.Inputs[i].Type))
				}
			}
		}
	}
	outs := g.Outputs()
	if len(s.Outputs) != len(outs) {
		v.add(g, nil, "signature has %d outputs, graph returns %d", len(s.Outputs), len(outs))
		return
	}
	for i, o := range s.Outputs {
		switch o.Kind {
		case BufferMutation, ParameterMutation, UserInputMutation, GradientToParameter, GradientToUserInput:
			if o.Target == "" {
				v.add(g, nil, "output %d (%s) has no target", i, o.Kind)
			}
			if outs[i].Kind != ArgValue {
				v.add(g, nil, "output %d (%s) is not a value", i, o.Kind)
			}
		}
	}
}

// TypesCompatible compares a recorded result type with one computed for
// the same value (by shape inference, or by a pass's replacement). Dtype,
// shape and device must be equal. Layouts are compared only when both sides
// carry a non-default one: a source that records no strides (FX text, a
// hand-written golden) or a rule that does not model them (views other than
// permutations) says nothing about the layout. Dims of size 1 may sit
// anywhere in a layout (their stride never matters), so they are left out.
func TypesCompatible(recorded, computed Type) bool {
	rt, ok1 := recorded.(*TensorType)
	it, ok2 := computed.(*TensorType)
	if !ok1 || !ok2 {
		return TypeEqual(recorded, computed)
	}
	r, i := *rt, *it
	r.DimOrder, i.DimOrder = nil, nil
	if !TypeEqual(&r, &i) {
		return false
	}
	if rt.IsContiguous() || it.IsContiguous() {
		return true
	}
	return sameOrder(layoutWithoutUnitDims(rt), layoutWithoutUnitDims(it))
}

// renameUnbacked returns computed with its data-dependent sizes taken from
// recorded where they only name the same unknown differently: a fresh
// unbacked symbol inference made for n (u<node ID>, see unbackedSym) stands
// for whatever symbol the producer recorded at that place (torch numbers
// its own u0, u1, …), and a recorded unbacked symbol that no operand
// mentions is one the producer allocated at n (torch does for a slice with
// data-dependent bounds), which inference's expression cannot contradict.
func renameUnbacked(n *Node, recorded, computed Type) Type {
	fresh := "u" + strconv.Itoa(n.ID)
	isFresh := func(e sym.Expr) bool {
		name, ok := e.Name()
		return ok && (name == fresh || strings.HasPrefix(name, fresh+"_"))
	}
	var env *sym.Env
	if n.Graph != nil && n.Graph.Program != nil {
		env = n.Graph.Program.Env
	}
	producerFresh := func(e sym.Expr) bool {
		name, ok := e.Name()
		if !ok || env == nil || !env.IsUnbacked(name) {
			return false
		}
		for _, a := range n.Args {
			for _, x := range a.Values() {
				if typeMentions(x.Type, name) {
					return false
				}
			}
		}
		return true
	}
	pick := func(r, c sym.Expr) sym.Expr {
		if isFresh(c) && r.IsValid() && !r.IsConst() || producerFresh(r) {
			return r
		}
		return c
	}
	switch c := computed.(type) {
	case *SymIntType:
		if r, ok := recorded.(*SymIntType); ok {
			return &SymIntType{Expr: pick(r.Expr, c.Expr)}
		}
	case *TensorType:
		r, ok := recorded.(*TensorType)
		if !ok || len(r.Shape) != len(c.Shape) {
			return computed
		}
		out := *c
		out.Shape = make([]sym.Expr, len(c.Shape))
		for i := range c.Shape {
			out.Shape[i] = pick(r.Shape[i], c.Shape[i])
		}
		return &out
	}
	return computed
}

// typeMentions reports whether t's sizes or value mention the symbol name.
func typeMentions(t Type, name string) bool {
	switch t := t.(type) {
	case *SymIntType:
		return t.Expr.HasSymbol(name)
	case *TensorType:
		for _, d := range t.Shape {
			if d.HasSymbol(name) {
				return true
			}
		}
	}
	return false
}

// layoutWithoutUnitDims is t's dim order without the dims of static size 1.
func layoutWithoutUnitDims(t *TensorType) []int {
	out := []int{}
	for i := 0; i < t.Rank(); i++ {
		d := i
		if t.DimOrder != nil {
			d = t.DimOrder[i]
		}
		if v, ok := t.Shape[d].Const(); ok && v == 1 {
			continue
		}
		out = append(out, d)
	}
	return out
}

// hasUnknown reports a node with a result or operand of unknown type.
func hasUnknown(n *Node) bool {
	for _, r := range n.Results {
		if IsUnknown(r.Type) {
			return true
		}
	}
	unknown := false
	for _, a := range n.Args {
		a.walkValues(func(x *Value) { unknown = unknown || IsUnknown(x.Type) })
	}
	return unknown
}
