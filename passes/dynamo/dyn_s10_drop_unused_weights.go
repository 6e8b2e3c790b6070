package dynamo

import (
	"fmt"
	"strings"

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
	keepSpecs := make([]ir.InputSpec, 0, len(p.Signature.Inputs))
	var drop []*ir.Value
	var dropped []string
	for i, spec := range p.Signature.Inputs {
		in := g.Inputs[i]
		isWeight := spec.Kind == ir.Parameter || spec.Kind == ir.Buffer || spec.Kind == ir.ConstantTensor
		if isWeight && in.NumUses() == 0 && !mutated[spec.Target] {
			drop = append(drop, in)
			dropped = append(dropped, spec.Target)
			continue
		}
		keepSpecs = append(keepSpecs, spec)
	}
	if len(drop) == 0 {
		return false, nil
	}
	// One batch removal each: removing inputs or weights one at a time
	// renumbers and shifts the rest, quadratic in a stack of thousands of
	// blocks.
	if err := g.RemoveInputs(drop); err != nil {
		return false, err
	}
	c.Stat("dropped-inputs", int64(len(drop)))
	if len(keepSpecs) == 0 {
		keepSpecs = nil // as before the list was sized up front
	}
	p.Signature.Inputs = keepSpecs
	// A weight may back several inputs (tied weights); drop only orphans.
	stillUsed := make(map[string]bool, len(keepSpecs))
	for _, s := range keepSpecs {
		stillUsed[s.Target] = true
	}
	orphans := dropped[:0]
	for _, name := range dropped {
		if !stillUsed[name] {
			orphans = append(orphans, name)
		}
	}
	p.RemoveWeights(orphans)
	c.Fired(nil, "dropped "+joinNames(drop, maxNamesListed))
	return true, nil
}

// maxNamesListed bounds the values a report line names one by one; the rest
// are counted.
const maxNamesListed = 32

// joinNames lists at most max values, then how many more there are.
func joinNames(vs []*ir.Value, max int) string {
	var b strings.Builder
	for i, v := range vs {
		if i == max {
			fmt.Fprintf(&b, " and %d more (%d in all)", len(vs)-max, len(vs))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.String())
	}
	return b.String()
}
