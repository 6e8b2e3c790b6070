package passes

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// InsertWriteBack makes every buffer mutation write into the buffer's own
// storage: aten::copy_(buffer, new value) before the return, whose result
// (the buffer) becomes the mutation output (exir's write-back of mutated
// buffers).
var InsertWriteBack = etlLowering(&pm.Pass{
	Name: etlWriteBackName,
	Doc: `write each mutated buffer's new value back into the buffer with copy_

torch.export returns a mutated buffer's new value as a buffer_mutation
output; ExecuTorch keeps the buffer in planned memory across executions,
so the new value must land in the buffer's storage. For every
buffer_mutation output whose value is not already the buffer, a node

  %copy_ = aten.copy_.default(%b_buffer, %new_value)

is placed before the return and the output becomes its result, which is
the buffer's storage (in-place). The planner gives the mutated buffer a
planned slot live for the whole method, and the emitter initialises it from
the buffer's weight (the mutable-data segment). Programs without buffer
mutations are unchanged. Parameter and user-input mutations are left alone
(the emitter rejects them).`,
	Run: runInsertWriteBack,
}, ToOutVariants)

const etlWriteBackName = "insert-write-back"

var etlOpCopy_ = ir.MustLookupOp("aten.copy_.default")

func runInsertWriteBack(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	g := p.Main
	if g == nil {
		return pm.Result{}, nil
	}
	buffers := map[string]*ir.Value{}
	for i, in := range p.Signature.Inputs {
		if in.Kind == ir.Buffer && i < len(g.Inputs) {
			buffers[in.Target] = g.Inputs[i]
		}
	}
	outs := g.Outputs()
	changed := false
	for i, o := range p.Signature.Outputs {
		if o.Kind != ir.BufferMutation || i >= len(outs) {
			continue
		}
		buf := buffers[o.Target]
		if buf == nil {
			return pm.Result{}, fmt.Errorf("graph %s: %s: output %d mutates buffer %q, which is no graph input", g.Name, etlWriteBackName, i, o.Target)
		}
		a := outs[i]
		if a.Kind != ir.ArgValue {
			return pm.Result{}, fmt.Errorf("graph %s: %s: output %d (mutation of %q) is a literal", g.Name, etlWriteBackName, i, o.Target)
		}
		v := a.Value
		if v == buf || (v.Def != nil && v.Def.Op == etlOpCopy_ && len(v.Def.Args) > 0 && v.Def.Args[0].Kind == ir.ArgValue && v.Def.Args[0].Value == buf) {
			continue // already written back
		}
		b := ir.NewBuilder(g)
		b.Pass = etlWriteBackName
		cp, err := b.Value(etlOpCopy_, ir.ValueArg(buf), ir.ValueArg(v))
		if err != nil {
			return pm.Result{}, fmt.Errorf("graph %s: %s: output %d (%q): %v", g.Name, etlWriteBackName, i, o.Target, err)
		}
		g.SetOutput(i, ir.ValueArg(cp))
		c.Fired(cp.Def, "write-back of buffer "+o.Target)
		changed = true
	}
	return pm.Result{Changed: changed}, nil
}
