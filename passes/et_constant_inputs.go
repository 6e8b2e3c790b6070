package passes

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// Helpers for the passes that fold constant inputs of the main graph into
// new weights (fold-constant-views, xnnpack-fuse-batch-norm): finding the
// constants they may read, and dropping the ones a fold left unread.

// etConstantWeights maps each constant input of p's main graph (parameter,
// buffer or lifted constant) that the program does not mutate, and whose
// weight p holds, to that weight. The caller has checked that the main
// graph's inputs match the signature's.
func etConstantWeights(p *ir.Program) map[*ir.Value]*ir.Weight {
	mutated := map[string]bool{}
	for _, o := range p.Signature.Outputs {
		if o.Kind == ir.BufferMutation || o.Kind == ir.ParameterMutation {
			mutated[o.Target] = true
		}
	}
	weights := map[*ir.Value]*ir.Weight{}
	for i, spec := range p.Signature.Inputs {
		switch spec.Kind {
		case ir.Parameter, ir.Buffer, ir.ConstantTensor:
		default:
			continue
		}
		if mutated[spec.Target] {
			continue
		}
		if w := p.Weight(spec.Target); w != nil {
			weights[p.Main.Inputs[i]] = w
		}
	}
	return weights
}

// etDropUnusedInputs removes the inputs of p's main graph that droppable
// accepts and nothing reads, with their signature entries, and the weight
// of each (weights[input]: droppable accepts only inputs it maps) that no
// kept input names. Each removed input counts as a "dropped-inputs" stat;
// errors start with pass.
func etDropUnusedInputs(p *ir.Program, c *pm.Ctx, pass string, weights map[*ir.Value]*ir.Weight, droppable func(*ir.Value) bool) error {
	g := p.Main
	var keep []ir.InputSpec
	var drop []*ir.Value
	for i, spec := range p.Signature.Inputs {
		in := g.Inputs[i]
		if droppable(in) && in.NumUses() == 0 {
			drop = append(drop, in)
			continue
		}
		keep = append(keep, spec)
	}
	// One sweep each for the inputs and the weights: removing them one by
	// one is O(inputs) per input.
	if err := g.RemoveInputs(drop); err != nil {
		return fmt.Errorf("%s: %w", pass, err)
	}
	if len(drop) > 0 {
		c.Stat("dropped-inputs", int64(len(drop)))
	}
	used := map[string]bool{}
	for _, s := range keep {
		used[s.Target] = true
	}
	var gone []string
	for _, in := range drop {
		if w := weights[in]; !used[w.Name] {
			gone = append(gone, w.Name)
		}
	}
	p.RemoveWeights(gone)
	p.Signature.Inputs = keep
	return nil
}
