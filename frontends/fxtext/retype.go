package fxtext

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// Retype gives a program read without types its input types and infers
// what depends on them. types is keyed by input name (FX placeholder name,
// or for code-form Dynamo graphs the forward's parameter name) or, for
// parameters, buffers and constants, by their target (conv1.weight). Inputs
// that already have a type keep it; a name that is no input is an error.
// Values whose type still cannot be told (opaque ops and what they feed)
// stay unknown; ir.UnknownValues lists them.
func Retype(p *ir.Program, types map[string]ir.Type) error {
	byName := map[string]int{}
	for i, in := range p.Main.Inputs {
		byName[in.Name] = i
	}
	for i, spec := range p.Signature.Inputs {
		if spec.Target != "" {
			if _, dup := byName[spec.Target]; !dup {
				byName[spec.Target] = i
			}
		}
	}
	keys := make([]string, 0, len(types))
	for k := range types {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var unknownNames []string
	for _, k := range keys {
		i, ok := byName[k]
		if !ok {
			unknownNames = append(unknownNames, k)
			continue
		}
		in := p.Main.Inputs[i]
		if ir.IsUnknown(in.Type) {
			in.SetType(types[k])
			declareAll(p, types[k])
		}
	}
	if len(unknownNames) > 0 {
		names := make([]string, len(p.Main.Inputs))
		for i, in := range p.Main.Inputs {
			names[i] = in.Name
		}
		return fmt.Errorf("input types name %s, which the program does not take (its inputs: %s)", strings.Join(unknownNames, ", "), strings.Join(names, ", "))
	}
	if err := retypeGraph(p, p.Main); err != nil {
		return err
	}
	return retypeWeights(p)
}

// retypeGraph re-infers the unknown results of g's nodes in order, typing
// the inputs of their regions from the operands first.
func retypeGraph(p *ir.Program, g *ir.Graph) error {
	for _, n := range g.Nodes() {
		if !needsRetype(n) {
			continue
		}
		for i, a := range n.Args {
			if a.Kind != ir.ArgGraph || a.Graph == nil {
				continue
			}
			argName := ""
			if s := &n.Op.Info().Schema; i < len(s.Args) {
				argName = s.Args[i].Name
			}
			ins := regionInputs(n.Op, argName, n.Args)
			if len(ins) == len(a.Graph.Inputs) {
				for j, in := range a.Graph.Inputs {
					if ir.IsUnknown(in.Type) && !ir.IsUnknown(ins[j]) {
						in.SetType(ins[j])
					}
				}
			}
			if err := retypeGraph(p, a.Graph); err != nil {
				return err
			}
		}
		if done, err := resolveTypeAs(p, n); done {
			if err != nil {
				return err
			}
			continue
		}
		if t := opaqueOutType(n.Op, n.Args); t != nil && len(n.Results) == 1 && ir.IsUnknown(n.Results[0].Type) {
			n.Results[0].SetType(t)
			continue
		}
		if isOpaque(n.Op) || anyUnknown(n.Args) {
			continue
		}
		inferred, err := ir.InferTypes(n)
		if err != nil || len(inferred) != len(n.Results) {
			continue // stays unknown; --verify-types reports it
		}
		for i, r := range n.Results {
			if ir.IsUnknown(r.Type) {
				r.SetType(inferred[i])
				declareAll(p, inferred[i])
			}
		}
	}
	return nil
}

// needsRetype reports a node with an unknown result or a region with an unknown input.
func needsRetype(n *ir.Node) bool {
	for _, r := range n.Results {
		if ir.IsUnknown(r.Type) {
			return true
		}
	}
	for _, g := range n.Regions() {
		for _, in := range g.Inputs {
			if ir.IsUnknown(in.Type) {
				return true
			}
		}
		for _, m := range g.Nodes() {
			if needsRetype(m) {
				return true
			}
		}
	}
	return false
}

func declareAll(p *ir.Program, t ir.Type) {
	for _, s := range typeSymbols(t) {
		if _, known := p.Env.Range(s); !known {
			p.Env.Declare(s, sym.Range{Lo: sym.Finite(0), Hi: sym.PosInf()}, nil, isUnbackedName(s))
		}
	}
}

// retypeWeights records the weights of the signature once all are typed.
func retypeWeights(p *ir.Program) error {
	if len(p.Weights) > 0 {
		return nil
	}
	for i, in := range p.Signature.Inputs {
		switch in.Kind {
		case ir.Parameter, ir.Buffer, ir.ConstantTensor:
		default:
			continue
		}
		if ir.IsUnknown(p.Main.Inputs[i].Type) {
			return nil
		}
	}
	gb := &gbuild{builder: &builder{prog: p}}
	return gb.weights()
}

// resolveTypeAs replaces an opaque x.type_as(y) of a Dynamo graph read
// without types by aten._to_copy(x, dtype=y's dtype) once both are typed.
func resolveTypeAs(p *ir.Program, n *ir.Node) (bool, error) {
	a := n.Args
	if !isOpaque(n.Op) || len(a) != 4 || a[0].Str != "Tensor.type_as" || a[1].Kind != ir.ArgList || len(a[1].List) != 0 ||
		a[2].Kind != ir.ArgValue || a[3].Kind != ir.ArgValue || len(n.Results) != 1 {
		return false, nil
	}
	self, other := ir.AsTensor(a[2].Value.Type), ir.AsTensor(a[3].Value.Type)
	if self == nil || other == nil {
		return false, nil
	}
	op := ir.MustLookupOp("aten._to_copy.default")
	bound, err := ir.BindArgs(op, []ir.Arg{a[2]}, map[string]ir.Arg{"dtype": ir.DTypeArg(other.DType)})
	if err != nil {
		return true, err
	}
	old := n.Results[0]
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	m, err := b.Raw(op, bound, []ir.Type{ir.Unknown}, nil)
	if err != nil {
		return true, err
	}
	m.Meta = n.Meta.Clone()
	m.Meta.Delete(MetaNote)
	types, err := ir.InferTypes(m)
	if err != nil || len(types) != 1 {
		_ = m.Erase()
		return false, nil
	}
	m.Results[0].SetType(types[0])
	name := old.Name
	old.ReplaceAllUsesWith(m.Results[0])
	if err := n.Erase(); err != nil {
		return true, err
	}
	return true, m.Results[0].Rename(name)
}
