package dynamo

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// DropUnusedWeights erases parameter and buffer inputs nothing reads (DYN-S10).
var DropUnusedWeights = pm.RegisterProgramFix(&pm.ProgramFix{
	ID:      "DYN-S10",
	Name:    "drop-unused-weights",
	Backend: pm.BackendAll,
	Stage:   pm.StageStateCleanup,
	Doc: `erase parameter, buffer and constant inputs that have no users

A component traced through a wrapper lifts every weight of the whole model;
the ones its graph never reads are dropped together with their signature
entries and their weights. Buffers the program mutates are kept (their
mutation is an output), as are weights shared with a kept input.`,
	Fix: dropUnusedWeights,
})

func dropUnusedWeights(p *ir.Program, c *pm.Ctx) (bool, error) {
	g := p.Main
	mutated := map[string]bool{}
	for _, o := range p.Signature.Outputs {
		if o.Kind == ir.BufferMutation || o.Kind == ir.ParameterMutation {
			mutated[o.Target] = true
		}
	}
	var keepSpecs []ir.InputSpec
	var drop []*ir.Value
	dropped := map[string]bool{}
	for i, spec := range p.Signature.Inputs {
		in := g.Inputs[i]
		isWeight := spec.Kind == ir.Parameter || spec.Kind == ir.Buffer || spec.Kind == ir.ConstantTensor
		if isWeight && in.NumUses() == 0 && !mutated[spec.Target] {
			drop = append(drop, in)
			dropped[spec.Target] = true
			continue
		}
		keepSpecs = append(keepSpecs, spec)
	}
	if len(drop) == 0 {
		return false, nil
	}
	for _, in := range drop {
		if err := g.RemoveInput(in); err != nil {
			return false, err
		}
		c.Stat("dropped-inputs", 1)
	}
	p.Signature.Inputs = keepSpecs
	// A weight may back several inputs (tied weights); drop only orphans.
	stillUsed := map[string]bool{}
	for _, s := range keepSpecs {
		stillUsed[s.Target] = true
	}
	for name := range dropped {
		if !stillUsed[name] {
			p.RemoveWeight(name)
		}
	}
	c.Fired(nil, "dropped "+joinNames(drop))
	return true, nil
}

func joinNames(vs []*ir.Value) string {
	s := ""
	for i, v := range vs {
		if i > 0 {
			s += ", "
		}
		s += v.String()
	}
	return s
}
