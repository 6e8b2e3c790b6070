package passes

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// InsertWriteBack makes every buffer and user-input mutation write into the
// mutated tensor's own storage: aten::copy_(input, new value) before the
// return, whose result (the input's storage) becomes the mutation output
// (exir's insert_write_back_for_buffers_pass). Parameter mutations are an
// error naming the parameter and the node.
var InsertWriteBack = etlLowering(&pm.Pass{
	Name: etlWriteBackName,
	Doc: `write each mutated buffer's or user input's new value back into it with copy_

torch.export returns a mutated buffer's new value as a buffer_mutation
output and a mutated user input's as a user_input_mutation output;
ExecuTorch runs the method in place, so the new value must land in the
mutated tensor's storage. For every such output whose value is not already
that input (directly or through a chain of in-place ops on it), a node

  %copy_ = aten.copy_.default(%b_buffer_or_input, %new_value)

is placed before the return and the output becomes its result, which is
the input's storage (in-place). The output keeps its place and kind in the
signature (exir keeps user_input_mutation outputs in plan.outputs). The
planner gives a mutated buffer a planned slot live for the whole method,
and the emitter initialises it from the buffer's weight (the mutable-data
segment); a mutated user input is planned or bound at run time like any
user input (alloc-graph-input), and the copy_ writes its planned slot or
the caller's memory. A user_input_mutation output names its input by the
placeholder's name (torch's user_input_name). A parameter_mutation output
is an error naming the parameter and the node that computes its new value:
parameters live in the read-only constant segment (exir does not write
them back either). Programs without mutations are unchanged.`,
	Run: runInsertWriteBack,
})

const etlWriteBackName = "insert-write-back"

var etlOpCopy_ = ir.OpAtenCopy_

func runInsertWriteBack(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	g := p.Main
	if g == nil {
		return pm.Result{}, nil
	}
	buffers := map[string]*ir.Value{}
	users := map[string]*ir.Value{} // user inputs by placeholder name and by target
	for i, in := range p.Signature.Inputs {
		if i >= len(g.Inputs) {
			break
		}
		switch in.Kind {
		case ir.Buffer:
			buffers[in.Target] = g.Inputs[i]
		case ir.UserInput:
			users[g.Inputs[i].Name] = g.Inputs[i]
		}
	}
	for i, in := range p.Signature.Inputs {
		if i < len(g.Inputs) && in.Kind == ir.UserInput && in.Target != "" && users[in.Target] == nil {
			users[in.Target] = g.Inputs[i]
		}
	}
	outs := g.Outputs()
	changed := false
	for i, o := range p.Signature.Outputs {
		if i >= len(outs) {
			break
		}
		var dst *ir.Value
		what := ""
		switch o.Kind {
		case ir.BufferMutation:
			dst, what = buffers[o.Target], "buffer"
		case ir.UserInputMutation:
			dst, what = users[o.Target], "user input"
		case ir.ParameterMutation:
			return pm.Result{}, etlParameterMutation(g, i, o.Target, outs[i])
		default:
			continue
		}
		if dst == nil {
			return pm.Result{}, fmt.Errorf("graph %s: %s: output %d mutates %s %q, which is no graph input", g.Name, etlWriteBackName, i, what, o.Target)
		}
		a := outs[i]
		if a.Kind != ir.ArgValue {
			return pm.Result{}, fmt.Errorf("graph %s: %s: output %d (mutation of %s %q) is a literal", g.Name, etlWriteBackName, i, what, o.Target)
		}
		v := a.Value
		if etlInPlaceLineage(v, dst) {
			continue // already written back
		}
		b := ir.NewBuilder(g)
		b.Pass = etlWriteBackName
		cp, err := b.Value(etlOpCopy_, ir.ValueArg(dst), ir.ValueArg(v))
		if err != nil {
			return pm.Result{}, fmt.Errorf("graph %s: %s: output %d (%s %q): %v", g.Name, etlWriteBackName, i, what, o.Target, err)
		}
		g.SetOutput(i, ir.ValueArg(cp))
		c.Fired(cp.Def, "write-back of "+what+" "+o.Target)
		changed = true
	}
	return pm.Result{Changed: changed}, nil
}

// etlInPlaceLineage reports whether v is dst's storage: dst itself, or the
// result of a chain of in-place ops (copy_ included) whose first operand
// leads back to dst (exir's _inplace_lineage).
func etlInPlaceLineage(v, dst *ir.Value) bool {
	for v != dst {
		n := v.Def
		if n == nil || !n.Op.Has(ir.PropInplace) || len(n.Args) == 0 || n.Args[0].Kind != ir.ArgValue {
			return false
		}
		v = n.Args[0].Value
	}
	return true
}

// etlParameterMutation is the error for a parameter_mutation output: it
// names the parameter and the node computing the new value (or the value,
// when no node defines it).
func etlParameterMutation(g *ir.Graph, i int, target string, a ir.Arg) error {
	msg := fmt.Sprintf("%s: output %d mutates parameter %q, which ExecuTorch cannot write back: parameters are read-only constants of the .pte (exir refuses parameter mutations too); register the tensor as a buffer (register_buffer) to make it mutable state", etlWriteBackName, i, target)
	if a.Kind == ir.ArgValue && a.Value.Def != nil {
		return a.Value.Def.Errorf("%s", msg)
	}
	if a.Kind == ir.ArgValue {
		return fmt.Errorf("graph %s: %s (new value %s)", g.Name, msg, a.Value)
	}
	return fmt.Errorf("graph %s: %s", g.Name, msg)
}
