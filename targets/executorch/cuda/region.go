package cuda

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
)

// RegionProgram returns the region of call (a CudaBackend delegate call of
// p's main graph) as a standalone ATen program, the one the AOTInductor
// compile step loads: operands that are constant placeholders of p become
// parameters, buffers or lifted constants (with p's weights, typed on
// Device), the other operands user inputs, in that order (torch.export's
// placeholder order); the region's outputs are user outputs. Its pytree
// specs are a flat (args, {}) tuple in and a flat tuple out. p is not
// changed.
func RegionProgram(p *ir.Program, call *ir.Node) (*ir.Program, error) {
	if call == nil || !isCudaCall(call) {
		return nil, fmt.Errorf("cuda: no CudaBackend delegate call")
	}
	region := call.Args[0].Graph
	if region == nil {
		return nil, call.Errorf("cuda: delegate call has no region")
	}
	operands := call.Args[2:]
	if len(operands) != len(region.Inputs) {
		return nil, call.Errorf("cuda: %d operands for %d region inputs", len(operands), len(region.Inputs))
	}
	np := ir.NewProgram()
	np.Env = p.Env
	if v, ok := p.Meta.Get(MetaModelClass); ok {
		np.Meta.Set(MetaModelClass, v)
	}
	vmap := map[*ir.Value]*ir.Value{}
	addInput := func(i int, spec ir.InputSpec) error {
		in := region.Inputs[i]
		if in.Tensor() == nil {
			return call.Errorf("cuda: region input %s is %s; the CUDA packager supports tensor inputs only", in, in.Type)
		}
		nv, err := np.Main.AddInput(in.Name, in.Type)
		if err != nil {
			return fmt.Errorf("cuda: region program input %s: %w", in, err)
		}
		vmap[in] = nv
		spec.Name = in.Name
		np.Signature.Inputs = append(np.Signature.Inputs, spec)
		return nil
	}
	var users []int
	for i, a := range operands {
		if a.Kind != ir.ArgValue {
			return nil, call.Errorf("cuda: operand %d of the delegate call is not a value", i)
		}
		if !isConstant(p, a.Value) {
			users = append(users, i)
			continue
		}
		spec := p.Signature.Inputs[a.Value.Index]
		w := p.Weight(spec.Target)
		if w == nil {
			return nil, call.Errorf("cuda: constant %s refers to missing weight %q", a.Value, spec.Target)
		}
		if err := addInput(i, spec); err != nil {
			return nil, err
		}
		if np.Weight(w.Name) == nil {
			nw := *w
			nw.Type = onDevice(w.Type).(*ir.TensorType)
			np.AddWeight(&nw)
		}
	}
	for _, i := range users {
		if err := addInput(i, ir.InputSpec{Kind: ir.UserInput, Target: region.Inputs[i].Name}); err != nil {
			return nil, err
		}
	}
	b := ir.NewBuilder(np.Main)
	for _, n := range region.Nodes() {
		args := make([]ir.Arg, len(n.Args))
		for i, a := range n.Args {
			if a.Kind == ir.ArgGraph {
				return nil, n.Errorf("cuda: region node has a region of its own; not supported")
			}
			args[i] = remap(a, vmap)
		}
		types := make([]ir.Type, len(n.Results))
		names := make([]string, len(n.Results))
		for i, r := range n.Results {
			types[i], names[i] = r.Type, r.Name
		}
		nn, err := b.Raw(n.Op, args, types, names)
		if err != nil {
			return nil, n.Errorf("cuda: copying the region: %v", err)
		}
		nn.Meta = n.Meta.Clone()
		for i, r := range n.Results {
			vmap[r] = nn.Results[i]
		}
	}
	var outs []ir.Arg
	for i, o := range region.Outputs() {
		if o.Kind != ir.ArgValue || o.Value.Tensor() == nil {
			return nil, call.Errorf("cuda: region output %d is not a tensor value", i)
		}
		outs = append(outs, remap(o, vmap))
		np.Signature.Outputs = append(np.Signature.Outputs, ir.OutputSpec{Kind: ir.UserOutput})
	}
	np.Main.SetOutputs(outs...)
	np.Signature.InSpec = flatSpec(len(users), true)
	np.Signature.OutSpec = flatSpec(len(outs), false)
	if err := ir.Verify(np); err != nil {
		return nil, fmt.Errorf("cuda: the partition program does not verify: %w", err)
	}
	return np, nil
}

// flatSpec is torch's TreeSpec (protocol 1) of n leaves: ((leaves…), {})
// for an in_spec, (leaves…) for an out_spec.
func flatSpec(n int, args bool) string {
	leaf := `{"type": null, "context": null, "children_spec": []}`
	leaves := make([]string, n)
	for i := range leaves {
		leaves[i] = leaf
	}
	tuple := `{"type": "builtins.tuple", "context": "null", "children_spec": [` + strings.Join(leaves, ", ") + `]}`
	if args {
		tuple = `{"type": "builtins.tuple", "context": "null", "children_spec": [` + tuple + `, {"type": "builtins.dict", "context": "[]", "children_spec": []}]}`
	}
	return "[1, " + tuple + "]"
}
