package emit

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// checkInputMutations checks every user_input_mutation output after the
// outputs are emitted: its value must be the mutated input's own value (the
// result of the write-back copy_ that insert-write-back adds, which aliases
// its self operand), so the method leaves the new value in the input's
// storage. exir keeps these outputs in plan.outputs (pytorch/executorch
// issue 11870 tracks removing them), and so does the emitter: with a
// planned input the caller reads the new value there, with an unplanned
// one the copy_ has already written the caller's tensor.
func (m *method) checkInputMutations() error {
	g := m.p.Main
	byName := map[string]*ir.Value{}
	for i, in := range m.p.Signature.Inputs {
		if in.Kind != ir.UserInput || i >= len(g.Inputs) {
			continue
		}
		byName[g.Inputs[i].Name] = g.Inputs[i]
		if in.Target != "" {
			if _, ok := byName[in.Target]; !ok {
				byName[in.Target] = g.Inputs[i]
			}
		}
	}
	outs := g.Outputs()
	for i, o := range m.p.Signature.Outputs {
		if o.Kind != ir.UserInputMutation {
			continue
		}
		in := byName[o.Target]
		if in == nil {
			return fmt.Errorf("output %d mutates user input %q, which is no user input of the graph", i, o.Target)
		}
		if in.Tensor() == nil {
			return fmt.Errorf("output %d mutates user input %s, which is not a tensor", i, in)
		}
		if i >= len(outs) || outs[i].Kind != ir.ArgValue {
			return fmt.Errorf("output %d (mutation of user input %s) is not a value", i, in)
		}
		if m.index[outs[i].Value] != m.index[in] {
			return fmt.Errorf("output %d (mutation of user input %s) is %s, not written back into the input (run insert-write-back)", i, in, outs[i].Value)
		}
	}
	return nil
}
