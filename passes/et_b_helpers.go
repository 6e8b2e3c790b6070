package passes

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// Helpers shared by the ExecuTorch backend prepares (ET-B*).

// etRetype re-runs shape and dtype inference on every node of g in order,
// after a prepare changed the types of graph inputs. Region graphs are
// isolated, so a node that owns regions keeps them as they are; its results
// are re-inferred like any other node's.
func etRetype(g *ir.Graph) error {
	for _, n := range g.Nodes() {
		ts, err := ir.InferTypes(n)
		if err != nil {
			return fmt.Errorf("graph %s: node %s: re-inferring types: %w", g.Name, n.Short(), err)
		}
		if len(ts) != len(n.Results) {
			return fmt.Errorf("graph %s: node %s: inference gave %d results, the node has %d", g.Name, n.Short(), len(ts), len(n.Results))
		}
		for i, r := range n.Results {
			r.SetType(ts[i])
		}
	}
	return nil
}

// etMakeInputsContiguous gives every user-input tensor of p a contiguous
// layout (ExecuTorch rejects strided input placeholders; the capture step
// ET-B05 makes the sample inputs contiguous before tracing, and a graph
// traced without it is brought to the same form here). It returns the names
// of the inputs it changed.
func etMakeInputsContiguous(p *ir.Program) []string {
	var changed []string
	for i, v := range p.Main.Inputs {
		if i >= len(p.Signature.Inputs) || p.Signature.Inputs[i].Kind != ir.UserInput {
			continue
		}
		t := v.Tensor()
		if t == nil || t.IsContiguous() {
			continue
		}
		c := *t
		c.DimOrder = nil
		v.SetType(&c)
		changed = append(changed, "%"+v.Name)
	}
	return changed
}

// etRequireHost fails when a graph input or weight of p lives on an
// accelerator: the backend named runs on the CPU, and the Python prepare
// moved the model there before tracing.
func etRequireHost(p *ir.Program, backend, capture string) error {
	var bad []string
	for _, v := range p.Main.Inputs {
		if t := v.Tensor(); t != nil && t.Device != "" && t.Device != "cpu" {
			bad = append(bad, fmt.Sprintf("%%%s (%s)", v.Name, t.Device))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s runs on the CPU, but graph forward has inputs on a device: %s; trace the model on the CPU (%s)",
			backend, strings.Join(bad, ", "), capture)
	}
	return nil
}

// etPrepareInputs runs the input part every ExecuTorch prepare shares and
// records it.
func etPrepareInputs(p *ir.Program, c *pm.Ctx) error {
	changed := etMakeInputsContiguous(p)
	if len(changed) == 0 {
		return nil
	}
	if err := etRetype(p.Main); err != nil {
		return err
	}
	c.Stat("inputs-made-contiguous", int64(len(changed)))
	c.Fired(nil, "inputs made contiguous (ET-B05): "+strings.Join(changed, ", "))
	return nil
}
