package cuda

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// RegionName is the name of the CUDA partition's region graph.
const RegionName = "cuda_partition"

const passName = "cuda-partition"

// outline moves group (claimed nodes, graph order) into the region of a new
// CudaBackend delegate call placed after the last of them, with boundary
// copies. Tainted host nodes between the first and the last claimed node
// move after the call (with the device→host copies), keeping their order.
// It returns the call and the number of copies inserted.
func outline(p *ir.Program, group []*ir.Node, claimed, tainted map[*ir.Node]bool) (*ir.Node, int, error) {
	main := p.Main
	var inputs []*ir.Value
	seen := map[*ir.Value]bool{}
	for _, n := range group {
		for _, v := range n.Operands() {
			if (v.Def == nil || !claimed[v.Def]) && !seen[v] {
				seen[v] = true
				inputs = append(inputs, v)
			}
		}
	}
	inputs, anchored := anchorSymInputs(inputs)
	var outputs []*ir.Value
	for _, n := range group {
		for _, r := range n.Results {
			for _, u := range r.Uses() {
				if u.IsReturn() || !claimed[u] {
					outputs = append(outputs, r)
					break
				}
			}
		}
	}
	if len(outputs) == 0 {
		return nil, 0, group[0].Errorf("cuda partition: the claimed nodes have no outputs")
	}
	last := group[len(group)-1]
	var movers []*ir.Node
	for n := group[0]; n != nil && n != last; n = n.Next() {
		if tainted[n] {
			movers = append(movers, n)
		}
	}

	// Host→device copies, placed before the call (after the last claimed
	// node, so after every host node a claimed node could read).
	b := ir.NewBuilder(main)
	b.SetInsertAfter(last)
	b.Pass = passName
	copies := 0
	operands := make([]ir.Arg, len(inputs))
	for i, v := range inputs {
		operands[i] = ir.ValueArg(v)
		if v.Tensor() == nil || isConstant(p, v) {
			continue
		}
		n, err := b.CallKw(opToCopy, []ir.Arg{ir.ValueArg(v)}, map[string]ir.Arg{"device": ir.DeviceArg(Device)})
		if err != nil {
			return nil, 0, last.Errorf("cuda partition: host→device copy of %s: %v", v, err)
		}
		if err := n.Results[0].Rename(main.FreshName(v.Name + "_cuda")); err != nil {
			return nil, 0, fmt.Errorf("cuda partition: %w", err)
		}
		operands[i] = ir.ValueArg(n.Results[0])
		copies++
		b.SetInsertAfter(n)
	}

	// The region: the claimed nodes, typed on the device.
	region := group[0].NewRegion(RegionName)
	vmap := map[*ir.Value]*ir.Value{}
	for _, v := range inputs {
		nv, err := region.AddInput(v.Name, onDevice(v.Type))
		if err != nil {
			return nil, 0, fmt.Errorf("cuda partition: region input %s: %w", v, err)
		}
		vmap[v] = nv
	}
	rb := ir.NewBuilder(region)
	for _, a := range anchored {
		nn, err := rb.Raw(opSymSize, []ir.Arg{ir.ValueArg(vmap[a.tensor]), ir.IntArg(int64(a.dim))}, []ir.Type{a.v.Type}, []string{a.v.Name})
		if err != nil {
			return nil, 0, last.Errorf("cuda partition: recomputing %s in the region: %v", a.v, err)
		}
		nn.AddProvenance(passName)
		vmap[a.v] = nn.Results[0]
	}
	for _, n := range group {
		args := make([]ir.Arg, len(n.Args))
		for i, a := range n.Args {
			args[i] = remap(a, vmap)
		}
		deviceArgs(n.Op, args)
		types := make([]ir.Type, len(n.Results))
		names := make([]string, len(n.Results))
		for i, r := range n.Results {
			types[i], names[i] = onDevice(r.Type), r.Name
		}
		nn, err := rb.Raw(n.Op, args, types, names)
		if err != nil {
			return nil, 0, n.Errorf("cuda partition: copying into the region: %v", err)
		}
		nn.Meta = n.Meta.Clone()
		for i, r := range n.Results {
			vmap[r] = nn.Results[i]
		}
	}
	outs := make([]ir.Arg, len(outputs))
	types := make([]ir.Type, len(outputs))
	for i, o := range outputs {
		outs[i] = ir.ValueArg(vmap[o])
		types[i] = onDevice(o.Type)
	}
	region.SetOutputs(outs...)

	call, err := b.Raw(OpCallDelegate, append([]ir.Arg{ir.GraphArg(region), ir.StringArg(BackendID)}, operands...), types, nil)
	if err != nil {
		return nil, 0, last.Errorf("cuda partition: building the delegate call: %v", err)
	}
	call.AddProvenance(passName)
	call.Meta.Set(MetaMethodName, MethodName(p))
	b.SetInsertAfter(call)
	tail := call

	// Device→host copies take over the outputs' uses.
	backs := make([]*ir.Value, len(outputs))
	for i, o := range outputs {
		n, err := b.CallKw(opToCopy, []ir.Arg{ir.ValueArg(call.Results[i])}, map[string]ir.Arg{"device": ir.DeviceArg("cpu")})
		if err != nil {
			return nil, 0, call.Errorf("cuda partition: device→host copy of %s: %v", o, err)
		}
		backs[i] = n.Results[0]
		o.ReplaceAllUsesWith(n.Results[0])
		copies++
		b.SetInsertAfter(n)
		tail = n
	}
	at := tail.Next()
	for _, m := range movers {
		m.MoveBefore(at)
	}
	for i := len(group) - 1; i >= 0; i-- {
		if err := group[i].Erase(); err != nil {
			return nil, 0, group[i].Errorf("cuda partition: erasing a claimed node: %v", err)
		}
	}
	for i, o := range outputs {
		if err := call.Results[i].Rename(main.FreshName(o.Name + "_cuda")); err != nil {
			return nil, 0, fmt.Errorf("cuda partition: %w", err)
		}
		if err := backs[i].Rename(o.Name); err != nil {
			return nil, 0, fmt.Errorf("cuda partition: %w", err)
		}
	}
	return call, copies, nil
}

// deviceArgs points a region node's device arguments (factory ops,
// _to_copy) that name the host, or nothing, at Device.
func deviceArgs(op ir.Op, args []ir.Arg) {
	for i, s := range op.Info().Schema.Args {
		if i >= len(args) || s.Type.Base != ir.KDevice {
			continue
		}
		a := args[i]
		if a.Kind == ir.ArgNone || ((a.Kind == ir.ArgDevice || a.Kind == ir.ArgString) && (a.Str == "cpu" || a.Str == "cpu:0")) {
			args[i] = ir.DeviceArg(Device)
		}
	}
}

func remap(a ir.Arg, vmap map[*ir.Value]*ir.Value) ir.Arg {
	switch a.Kind {
	case ir.ArgValue:
		if nv, ok := vmap[a.Value]; ok {
			return ir.ValueArg(nv)
		}
	case ir.ArgList:
		l := make([]ir.Arg, len(a.List))
		for i, e := range a.List {
			l[i] = remap(e, vmap)
		}
		out := a
		out.List = l
		return out
	}
	return a
}
