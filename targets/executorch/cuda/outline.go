package cuda

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/extcompile"
	"github.com/fxport/fxport/targets/executorch/partition"
)

// RegionName is the name of the CUDA partition's region graph.
const RegionName = "cuda_partition"

const passName = "cuda-partition"

// outlined is what outline made.
type outlined struct {
	call            *ir.Node
	copies          int
	computed, boxed int
}

// outline moves group (the claimed nodes of one partition, in graph order)
// into the region of a new CudaBackend delegate call placed after the last
// of them, with boundary copies. Nodes between the first and the last of
// the group for which later reports true (host nodes and claimed nodes of
// later partitions, which may read the group's results) move after the
// call and its device→host copies, keeping their order; everything else
// between them feeds the group or is independent of it and stays before.
func outline(p *ir.Program, group []*ir.Node, later func(*ir.Node) bool) (*outlined, error) {
	main := p.Main
	claimed := make(map[*ir.Node]bool, len(group))
	for _, n := range group {
		claimed[n] = true
	}
	inputs, outputs := partition.Boundary(group)
	if len(outputs) == 0 {
		return nil, group[0].Errorf("cuda partition: the claimed nodes have no outputs")
	}
	last := group[len(group)-1]
	var movers []*ir.Node
	for n := group[0]; n != nil && n != last; n = n.Next() {
		if !claimed[n] && later(n) {
			movers = append(movers, n)
		}
	}
	var tensors []*ir.Value // the tensor inputs, whose dims SymInts may be computed from
	for _, v := range inputs {
		if v.Tensor() != nil {
			tensors = append(tensors, v)
		}
	}

	// Host side, placed before the call (after the last claimed node, so
	// after every host node a claimed node could read): host→device copies
	// of host tensors, boxes of non-tensor values the region cannot
	// compute. A device→host copy of an earlier partition's result is
	// bypassed: that partition's device tensor is the operand.
	b := ir.NewBuilder(main)
	b.SetInsertAfter(last)
	b.Pass = passName
	out := &outlined{}
	type regionIn struct {
		v        *ir.Value // the main-graph value the region reads
		operand  *ir.Value // the delegate call's operand
		boxed    bool      // operand is a 0-dim tensor holding v
		computed bool      // recomputed in the region; no operand
	}
	var ins []regionIn
	var bypassed []*ir.Node
	h2d := func(v *ir.Value, name string) (*ir.Value, error) {
		n, err := b.CallKw(opToCopy, []ir.Arg{ir.ValueArg(v)}, map[string]ir.Arg{"device": ir.DeviceArg(Device)})
		if err != nil {
			return nil, last.Errorf("cuda partition: host→device copy of %s: %v", v, err)
		}
		if err := n.Results[0].Rename(main.FreshName(name + "_cuda")); err != nil {
			return nil, fmt.Errorf("cuda partition: %w", err)
		}
		out.copies++
		b.SetInsertAfter(n)
		return n.Results[0], nil
	}
	for _, v := range inputs {
		switch {
		case v.Tensor() != nil && extcompile.IsConstant(p, v):
			ins = append(ins, regionIn{v: v, operand: v})
		case v.Tensor() != nil && deviceResult(v) != nil:
			ins = append(ins, regionIn{v: v, operand: deviceResult(v)})
			bypassed = append(bypassed, v.Def)
		case v.Tensor() != nil:
			c, err := h2d(v, v.Name)
			if err != nil {
				return nil, err
			}
			ins = append(ins, regionIn{v: v, operand: c})
		default:
			if e, ok := symExpr(v); ok && canBuild(e, tensors) {
				ins = append(ins, regionIn{v: v, computed: true})
				out.computed++
				continue
			}
			dt, ok := boxDType(v.Type)
			if !ok {
				return nil, last.Errorf("cuda partition: the partition reads %s (%s), which is neither a tensor nor a scalar that can be passed as a 0-dim tensor", v, v.Type)
			}
			box, err := b.CallKw(opFull, []ir.Arg{ir.ListArg(), ir.ValueArg(v)}, map[string]ir.Arg{"dtype": ir.DTypeArg(dt)})
			if err != nil {
				return nil, last.Errorf("cuda partition: boxing %s as a 0-dim tensor: %v", v, err)
			}
			if err := box.Results[0].Rename(main.FreshName(v.Name + "_box")); err != nil {
				return nil, fmt.Errorf("cuda partition: %w", err)
			}
			b.SetInsertAfter(box)
			c, err := h2d(box.Results[0], box.Results[0].Name)
			if err != nil {
				return nil, err
			}
			ins = append(ins, regionIn{v: v, operand: c, boxed: true})
			out.boxed++
		}
	}

	// The region: its inputs, the SymInts it computes or unboxes, then the
	// claimed nodes, typed on the device.
	region := group[0].NewRegion(RegionName)
	vmap := map[*ir.Value]ir.Arg{}
	var operands []ir.Arg
	for _, in := range ins {
		if in.computed {
			continue
		}
		name, typ := in.v.Name, onDevice(in.v.Type)
		if in.boxed {
			name, typ = in.operand.Name, in.operand.Type
		}
		nv, err := region.AddInput(name, typ)
		if err != nil {
			return nil, fmt.Errorf("cuda partition: region input %s: %w", in.v, err)
		}
		vmap[in.v] = ir.ValueArg(nv)
		operands = append(operands, ir.ValueArg(in.operand))
	}
	rb := ir.NewBuilder(region)
	var rtensors []*ir.Value
	for _, v := range tensors {
		rtensors = append(rtensors, vmap[v].Value)
	}
	sb := &symBuilder{b: rb, tensors: rtensors, built: map[string]*ir.Value{}}
	rb.Pass = passName
	named := map[*ir.Value]bool{}
	for _, in := range ins {
		switch {
		case in.boxed:
			nn, err := rb.Raw(opLocalScalarDense, []ir.Arg{vmap[in.v]}, []ir.Type{in.v.Type}, []string{in.v.Name})
			if err != nil {
				return nil, last.Errorf("cuda partition: unboxing %s in the region: %v", in.v, err)
			}
			vmap[in.v] = ir.ValueArg(nn.Results[0])
		case in.computed:
			e, _ := symExpr(in.v)
			if t, d, ok := findDim(e, rtensors); ok {
				// One sym_size: it keeps the value's name.
				nn, err := rb.Raw(opSymSize, []ir.Arg{ir.ValueArg(t), ir.IntArg(int64(d))}, []ir.Type{in.v.Type}, []string{in.v.Name})
				if err != nil {
					return nil, last.Errorf("cuda partition: recomputing %s in the region: %v", in.v, err)
				}
				sb.built[e.String()] = nn.Results[0]
				named[nn.Results[0]] = true
				vmap[in.v] = ir.ValueArg(nn.Results[0])
				continue
			}
			a, err := sb.build(e)
			if err != nil {
				return nil, last.Errorf("cuda partition: recomputing %s in the region: %v", in.v, err)
			}
			if a.Kind == ir.ArgValue && !named[a.Value] && region.Value(in.v.Name) == nil {
				// The value built for it takes its name.
				if err := a.Value.Rename(in.v.Name); err != nil {
					return nil, fmt.Errorf("cuda partition: %w", err)
				}
				named[a.Value] = true
			}
			vmap[in.v] = a
		}
	}
	rb.Pass = ""
	// The values built above got names fresh in the region; the claimed
	// nodes keep theirs, so a built value that took one moves aside.
	reserved := map[string]bool{}
	for _, n := range group {
		for _, r := range n.Results {
			reserved[r.Name] = true
		}
	}
	for _, n := range region.Nodes() {
		for _, r := range n.Results {
			if !reserved[r.Name] {
				continue
			}
			name := r.Name + "_sym"
			for i := 1; region.Value(name) != nil || reserved[name]; i++ {
				name = fmt.Sprintf("%s_sym_%d", r.Name, i)
			}
			if err := r.Rename(name); err != nil {
				return nil, fmt.Errorf("cuda partition: %w", err)
			}
		}
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
			return nil, n.Errorf("cuda partition: copying into the region: %v", err)
		}
		nn.Meta = n.Meta.Clone()
		for i, r := range n.Results {
			vmap[r] = ir.ValueArg(nn.Results[i])
		}
	}
	outs := make([]ir.Arg, len(outputs))
	types := make([]ir.Type, len(outputs))
	for i, o := range outputs {
		outs[i] = vmap[o]
		types[i] = onDevice(o.Type)
	}
	region.SetOutputs(outs...)

	call, err := b.Raw(OpCallDelegate, append([]ir.Arg{ir.GraphArg(region), ir.StringArg(BackendID)}, operands...), types, nil)
	if err != nil {
		return nil, last.Errorf("cuda partition: building the delegate call: %v", err)
	}
	call.AddProvenance(passName)
	call.Meta.Set(MetaMethodName, MethodName(p))
	b.SetInsertAfter(call)
	tail := call
	out.call = call

	// Device→host copies take over the outputs' uses (a later partition
	// reading one bypasses its copy again).
	backs := make([]*ir.Value, len(outputs))
	for i, o := range outputs {
		n, err := b.CallKw(opToCopy, []ir.Arg{ir.ValueArg(call.Results[i])}, map[string]ir.Arg{"device": ir.DeviceArg("cpu")})
		if err != nil {
			return nil, call.Errorf("cuda partition: device→host copy of %s: %v", o, err)
		}
		backs[i] = n.Results[0]
		o.ReplaceAllUsesWith(n.Results[0])
		out.copies++
		b.SetInsertAfter(n)
		tail = n
	}
	at := tail.Next()
	for _, m := range movers {
		m.MoveBefore(at)
	}
	for i := len(group) - 1; i >= 0; i-- {
		if err := group[i].Erase(); err != nil {
			return nil, group[i].Errorf("cuda partition: erasing a claimed node: %v", err)
		}
	}
	for _, n := range bypassed {
		if !n.IsErased() && n.Results[0].NumUses() == 0 {
			if err := n.Erase(); err != nil {
				return nil, n.Errorf("cuda partition: erasing a bypassed device→host copy: %v", err)
			}
			out.copies--
		}
	}
	for i, o := range outputs {
		if err := call.Results[i].Rename(main.FreshName(o.Name + "_cuda")); err != nil {
			return nil, fmt.Errorf("cuda partition: %w", err)
		}
		if err := backs[i].Rename(o.Name); err != nil {
			return nil, fmt.Errorf("cuda partition: %w", err)
		}
	}
	return out, nil
}

// deviceResult returns, for v made by a device→host copy of a CudaBackend
// call's result, that device result (nil otherwise).
func deviceResult(v *ir.Value) *ir.Value {
	n := v.Def
	if n == nil || !isDeviceCopy(n) || n.Args[0].Kind != ir.ArgValue {
		return nil
	}
	src := n.Args[0].Value
	if src.Def == nil || !isCudaCall(src.Def) {
		return nil
	}
	if t, st := v.Tensor(), src.Tensor(); t == nil || st == nil || t.DType != st.DType {
		return nil
	}
	return src
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

// remap replaces the values of a that vmap maps (at any list depth).
func remap(a ir.Arg, vmap map[*ir.Value]ir.Arg) ir.Arg {
	return partition.MapValues(a, func(v ir.Arg) ir.Arg {
		if na, ok := vmap[v.Value]; ok {
			return na
		}
		return v
	})
}
