package extcompile

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/partition"
)

// RegionSpec describes how one backend's delegate region becomes a
// standalone program.
type RegionSpec struct {
	// Prefix starts every error ("cuda", "openvino").
	Prefix string
	// Backend is the delegate id, for errors ("CudaBackend").
	Backend string
	// Packager names the packager in errors ("the CUDA packager").
	Packager string
	// IsCall reports a delegate call of the backend.
	IsCall func(*ir.Node) bool
	// WeightType, when set, retypes the weights the region program carries
	// (CUDA places them on its device).
	WeightType func(*ir.TensorType) *ir.TensorType
}

// MetaModelClass is the program metadata key naming the model class; the
// region program keeps it.
const MetaModelClass = "export.model_class"

// Region returns the region of call (a delegate call of p's main graph) as
// a standalone ATen program, the one the external compile step loads:
// operands that are constant placeholders of p become parameters, buffers
// or lifted constants (with p's weights), the other operands user inputs,
// in that order (torch.export's placeholder order); the region's outputs
// are user outputs. Its pytree specs are a flat (args, {}) tuple in and a
// flat tuple out. p is not changed.
func Region(p *ir.Program, call *ir.Node, s RegionSpec) (*ir.Program, error) {
	if call == nil || !s.IsCall(call) {
		return nil, fmt.Errorf("%s: no %s delegate call", s.Prefix, s.Backend)
	}
	region := call.Args[0].Graph
	if region == nil {
		return nil, call.Errorf("%s: delegate call has no region", s.Prefix)
	}
	operands := call.Args[2:]
	if len(operands) != len(region.Inputs) {
		return nil, call.Errorf("%s: %d operands for %d region inputs", s.Prefix, len(operands), len(region.Inputs))
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
			return call.Errorf("%s: region input %s is %s; %s supports tensor inputs only", s.Prefix, in, in.Type, s.Packager)
		}
		nv, err := np.Main.AddInput(in.Name, in.Type)
		if err != nil {
			return fmt.Errorf("%s: region program input %s: %w", s.Prefix, in, err)
		}
		vmap[in] = nv
		spec.Name = in.Name
		np.Signature.Inputs = append(np.Signature.Inputs, spec)
		return nil
	}
	var users []int
	for i, a := range operands {
		if a.Kind != ir.ArgValue {
			return nil, call.Errorf("%s: operand %d of the delegate call is not a value", s.Prefix, i)
		}
		if !IsConstant(p, a.Value) {
			users = append(users, i)
			continue
		}
		spec := p.Signature.Inputs[a.Value.Index]
		w := p.Weight(spec.Target)
		if w == nil {
			return nil, call.Errorf("%s: constant %s refers to missing weight %q", s.Prefix, a.Value, spec.Target)
		}
		if err := addInput(i, spec); err != nil {
			return nil, err
		}
		if np.Weight(w.Name) == nil {
			nw := *w
			if s.WeightType != nil {
				nw.Type = s.WeightType(w.Type)
			}
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
		for _, a := range n.Args {
			if a.Kind == ir.ArgGraph {
				return nil, n.Errorf("%s: region node has a region of its own; not supported", s.Prefix)
			}
		}
		if _, err := partition.CopyNode(b, n, vmap); err != nil {
			return nil, n.Errorf("%s: copying the region: %v", s.Prefix, err)
		}
	}
	var outs []ir.Arg
	for i, o := range region.Outputs() {
		if o.Kind != ir.ArgValue || o.Value.Tensor() == nil {
			return nil, call.Errorf("%s: region output %d is not a tensor value", s.Prefix, i)
		}
		outs = append(outs, partition.Remap(o, vmap))
		np.Signature.Outputs = append(np.Signature.Outputs, ir.OutputSpec{Kind: ir.UserOutput})
	}
	np.Main.SetOutputs(outs...)
	np.Signature.InSpec = FlatSpec(len(users), true)
	np.Signature.OutSpec = FlatSpec(len(outs), false)
	if err := ir.Verify(np); err != nil {
		return nil, fmt.Errorf("%s: the partition program does not verify: %w", s.Prefix, err)
	}
	return np, nil
}

// IsConstant reports a constant placeholder (parameter, buffer or lifted
// constant) of p's main graph.
func IsConstant(p *ir.Program, v *ir.Value) bool {
	if !v.IsInput() || v.Graph != p.Main || v.Index >= len(p.Signature.Inputs) {
		return false
	}
	switch p.Signature.Inputs[v.Index].Kind {
	case ir.Parameter, ir.Buffer, ir.ConstantTensor:
		return true
	}
	return false
}

// FlatSpec is torch's TreeSpec (protocol 1) of n leaves: ((leaves…), {})
// for an in_spec, (leaves…) for an out_spec.
func FlatSpec(n int, args bool) string {
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
