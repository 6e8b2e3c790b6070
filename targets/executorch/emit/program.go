package emit

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/provenance"
	"github.com/fxport/fxport/targets/executorch/callconv"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/plan"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// Options control emission.
type Options struct {
	// MethodName names the method of the main graph ("forward" when empty).
	MethodName string
	// NoMetadataMethod leaves out the export-metadata constant method.
	NoMetadataMethod bool
	// Provenance, when set, is recorded in the export-metadata method
	// (fxport version, pipeline text, workarounds that fired).
	Provenance *provenance.Record
	// CUDA supplies the compiled payload of each CudaBackend delegate call
	// (cuda_delegate.go); nil rejects such calls.
	CUDA func(call *ir.Node) (*CUDAPayload, error)
	// OpenVINO supplies the compiled payload of each OpenvinoBackend
	// delegate call (openvino_delegate.go); nil rejects such calls.
	OpenVINO func(call *ir.Node) (*OpenVINOPayload, error)
	// ExternalConstants stores constant tensors in the .ptd instead of the
	// constant segment (exir's external_constants=True; external.go).
	ExternalConstants bool
	// ExternalDelegateData moves delegates' named data (XNNPACK weights)
	// to the .ptd too (exir: a delegate_constant_tag on every constant).
	ExternalDelegateData bool
}

// ProgramWithData emits p like Program and returns the entries of its
// .ptd data file (none unless Options ask for external data; stream them
// with pte.WritePTD and PTDOptions). Constant bytes are lazy: the returned
// segments and entries read the weights' sources when written.
func ProgramWithData(p *ir.Program, opts Options) (*pte.File, []pte.NamedTensor, error) {
	if p == nil || p.Main == nil {
		return nil, nil, fmt.Errorf("emit: no program")
	}
	name := opts.MethodName
	if name == "" {
		name = "forward"
	}
	rec, err := plan.Read(p)
	if err != nil {
		return nil, nil, fmt.Errorf("emit: %w", err)
	}
	consts := newConstants()
	muts := newMutableData()
	m := &method{p: p, opts: opts, rec: rec, consts: consts, muts: muts, index: map[*ir.Value]int32{}, ops: map[string]int32{}}
	if opts.ExternalConstants {
		m.ext = newExternalConstants()
	}
	if err := m.emit(); err != nil {
		return nil, nil, fmt.Errorf("emit %s: %w", name, err)
	}
	m.plan.Name = name
	plans := []*etfb.ExecutionPlanT{&m.plan}
	if !opts.NoMetadataMethod {
		md, err := exportMetadata(p, opts.Provenance)
		if err != nil {
			return nil, nil, fmt.Errorf("emit: export metadata: %w", err)
		}
		plans = append(plans, constantMethod(MetadataMethod, evString(md)))
	}
	prog := &etfb.ProgramT{
		ExecutionPlan:       plans,
		ConstantBuffer:      []*etfb.BufferT{},
		BackendDelegateData: []*etfb.BackendDelegateInlineDataT{}, // every delegate payload is a segment (delegate.go)
		Segments:            []*etfb.DataSegmentT{{Offset: 0, Size: consts.size}},
		ConstantSegment:     &etfb.SubsegmentOffsetsT{SegmentIndex: 0, Offsets: consts.offsets},
		MutableDataSegments: []*etfb.SubsegmentOffsetsT{},
		NamedData:           []*etfb.NamedDataT{},
	}
	segs := []pte.Segment{consts.segment()} // lazy pieces (constants.go)
	if !muts.empty() {
		// Segment 1: the initial state of the mutable buffers.
		prog.Segments = append(prog.Segments, &etfb.DataSegmentT{Offset: 0, Size: muts.size})
		prog.MutableDataSegments = []*etfb.SubsegmentOffsetsT{{SegmentIndex: 1, Offsets: muts.offsets}}
		segs = append(segs, muts.segment())
	}
	segs = m.attachDelegates(prog, segs)
	var ptd []pte.NamedTensor
	if m.ext != nil {
		ptd = m.ext.entries
	}
	if opts.ExternalDelegateData {
		var named []pte.NamedTensor
		if segs, named, err = externalizeNamedData(prog, segs); err != nil {
			return nil, nil, fmt.Errorf("emit: external delegate data: %w", err)
		}
		ptd = append(ptd, named...)
	}
	return &pte.File{
		Name:     "emitted program",
		Program:  prog,
		Segments: segs,
	}, ptd, nil
}

// constantMethod is a method with one value that it returns: no inputs, one
// empty chain, non_const_buffer_sizes [0] (exir's constant methods).
func constantMethod(name string, v *etfb.EValueT) *etfb.ExecutionPlanT {
	return &etfb.ExecutionPlanT{
		Name:                name,
		ContainerMetaType:   &etfb.ContainerMetadataT{},
		Values:              []*etfb.EValueT{v},
		Inputs:              []int32{},
		Outputs:             []int32{0},
		Chains:              []*etfb.ChainT{{Inputs: []int32{}, Outputs: []int32{}, Instructions: []*etfb.InstructionT{}, Stacktrace: nil}},
		Operators:           []*etfb.OperatorT{},
		Delegates:           []*etfb.BackendDelegateT{},
		NonConstBufferSizes: []int64{0},
	}
}

// method emits the main graph.
type method struct {
	p      *ir.Program
	opts   Options
	rec    *plan.Recorded
	consts *constants
	muts   *mutableData
	ext    *externalConstants // nil unless Options.ExternalConstants (external.go)
	dels   *delegateState     // delegate payloads and named data (delegate.go)
	plan   etfb.ExecutionPlanT
	chain  etfb.ChainT
	index  map[*ir.Value]int32 // IR value → EValue index
	ops    map[string]int32    // "name.overload" → operator index
}

func (m *method) add(v *etfb.EValueT) int32 {
	m.plan.Values = append(m.plan.Values, v)
	return int32(len(m.plan.Values) - 1)
}

func (m *method) emit() error {
	m.plan.ContainerMetaType = &etfb.ContainerMetadataT{EncodedInpStr: m.p.Signature.InSpec, EncodedOutStr: m.p.Signature.OutSpec}
	m.plan.Values = []*etfb.EValueT{}
	m.plan.Inputs = []int32{}
	m.plan.Outputs = []int32{}
	m.plan.Operators = []*etfb.OperatorT{}
	m.plan.Delegates = []*etfb.BackendDelegateT{}
	m.chain = etfb.ChainT{Inputs: []int32{}, Outputs: []int32{}, Instructions: []*etfb.InstructionT{}}
	if err := m.emitInputs(); err != nil {
		return err
	}
	for _, n := range m.p.Main.Nodes() {
		if err := m.emitNode(n); err != nil {
			return err
		}
	}
	if err := m.emitOutputs(); err != nil {
		return err
	}
	if err := m.checkInputMutations(); err != nil {
		return err
	}
	m.plan.Chains = []*etfb.ChainT{&m.chain}
	m.plan.NonConstBufferSizes = append([]int64(nil), m.rec.ArenaSize...)
	if len(m.plan.NonConstBufferSizes) == 0 || m.plan.NonConstBufferSizes[0] != 0 {
		return fmt.Errorf("memory plan: non_const_buffer_sizes %v must start with the 0 placeholder", m.rec.ArenaSize)
	}
	return m.arenaDevices()
}

// emitInputs emits the placeholders in signature order: parameters,
// buffers and lifted constants become constant tensors, user inputs
// planned (or run-time bound) values listed in plan.inputs.
func (m *method) emitInputs() error {
	sig := m.p.Signature.Inputs
	if len(sig) != len(m.p.Main.Inputs) {
		return fmt.Errorf("signature has %d inputs for %d graph inputs", len(sig), len(m.p.Main.Inputs))
	}
	mutated := map[string]ir.OutputKind{} // buffers and parameters by target
	for _, o := range m.p.Signature.Outputs {
		if o.Kind == ir.BufferMutation || o.Kind == ir.ParameterMutation {
			mutated[o.Target] = o.Kind
		}
	}
	baked := map[*ir.Node]xnnpack.OperandBaking{} // delegate calls' baked operands (onlyDelegated)
	for i, v := range m.p.Main.Inputs {
		spec := sig[i]
		where := fmt.Sprintf("input %s (%s)", v, spec.Kind)
		switch spec.Kind {
		case ir.Parameter, ir.Buffer, ir.ConstantTensor:
			if onlyDelegated(v, baked) {
				continue // baked into a delegate as named data (delegate.go)
			}
			if k, ok := mutated[spec.Target]; ok {
				if spec.Kind != ir.Buffer || k != ir.BufferMutation {
					return fmt.Errorf("%s: mutated %s %q is not supported by the emitter (buffer and user-input mutations are; parameters are read-only constants)", where, spec.Kind, spec.Target)
				}
				if err := m.emitMutableBuffer(v, spec.Target); err != nil {
					return fmt.Errorf("%s: %w", where, err)
				}
				continue
			}
			w := m.p.Weight(spec.Target)
			if w == nil {
				return fmt.Errorf("%s: no weight %q", where, spec.Target)
			}
			b, err := weightLazy(w)
			if err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			tv, err := tensorValue(w.Type, m.p.Env)
			if err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			if m.ext != nil && !isLifted(v, spec) {
				if err := m.ext.add(tv, spec.Target, b); err != nil {
					return fmt.Errorf("%s: %w", where, err)
				}
			} else {
				tv.DataBufferIdx = m.consts.add(b)
			}
			m.index[v] = m.add(evTensor(tv))
		case ir.UserInput:
			// A mutated user input is an ordinary input: its write-back
			// copy_ writes the input's value (planned, or the caller's
			// memory when unplanned); checkInputMutations checks the
			// outputs.
			idx, err := m.emitResult(v)
			if err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			m.plan.Inputs = append(m.plan.Inputs, idx)
		case ir.ConstantInput:
			// exir: a value holding the export-time literal, listed in
			// plan.inputs in signature order (the runtime checks that the
			// caller passes the same value).
			idx, err := m.constantInput(v, spec.Value)
			if err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
			m.plan.Inputs = append(m.plan.Inputs, idx)
		default:
			return fmt.Errorf("%s: input kind not supported by the emitter", where)
		}
	}
	return nil
}

// constantInput emits the literal of a constant_input placeholder v (an
// int, float, bool, string or None) as its value.
func (m *method) constantInput(v *ir.Value, lit ir.Arg) (int32, error) {
	switch lit.Kind {
	case ir.ArgInt, ir.ArgFloat, ir.ArgBool, ir.ArgString, ir.ArgNone:
	default:
		return 0, fmt.Errorf("constant input literal %s (%s) cannot be emitted (ints, floats, bools, strings and None can)", lit, lit.Kind)
	}
	idx, err := m.literal(lit)
	if err != nil {
		return 0, err
	}
	m.index[v] = idx
	return idx, nil
}

// emitMutableBuffer emits a mutated buffer: a planned tensor (the storage
// its write-back copy_ writes) whose initial state, the buffer's weight, is
// loaded from the mutable-data segment when the method is loaded
// (data_buffer_idx > 0 together with allocation_info).
func (m *method) emitMutableBuffer(v *ir.Value, target string) error {
	a, ok := m.rec.Allocs[v]
	if !ok {
		return fmt.Errorf("mutable buffer %q is not planned (alloc-mutable-buffers=false is not supported by the emitter)", target)
	}
	w := m.p.Weight(target)
	if w == nil {
		return fmt.Errorf("no weight %q", target)
	}
	b, err := weightLazy(w)
	if err != nil {
		return err
	}
	t := v.Tensor()
	if t == nil {
		return fmt.Errorf("mutable buffer %q is not a tensor", target)
	}
	tv, err := tensorValue(t, m.p.Env)
	if err != nil {
		return err
	}
	tv.AllocationInfo = &etfb.AllocationDetailsT{MemoryId: uint32(a.MemID), MemoryOffsetLow: uint32(a.Offset), MemoryOffsetHigh: uint32(uint64(a.Offset) >> 32)}
	tv.DataBufferIdx = m.muts.add(b)
	tv.ExtraTensorInfo = &etfb.ExtraTensorInfoT{MutableDataSegmentsIdx: 0, FullyQualifiedName: target, Location: etfb.TensorDataLocationSEGMENT}
	m.index[v] = m.add(evTensor(tv))
	return nil
}

// emitResult emits a fresh value for v (a graph input or a node result):
// a tensor with its planned allocation, or an Int/Double/Bool placeholder
// for a scalar the runtime fills in.
func (m *method) emitResult(v *ir.Value) (int32, error) {
	var ev *etfb.EValueT
	switch t := v.Type.(type) {
	case *ir.TensorType:
		tv, err := tensorValue(t, m.p.Env)
		if err != nil {
			return 0, err
		}
		if a, ok := m.rec.Allocs[v]; ok {
			tv.AllocationInfo = &etfb.AllocationDetailsT{MemoryId: uint32(a.MemID), MemoryOffsetLow: uint32(a.Offset), MemoryOffsetHigh: uint32(uint64(a.Offset) >> 32)}
		}
		ev = evTensor(tv)
	case *ir.SymIntType:
		ev = evInt(0)
	case *ir.SymFloatType:
		ev = evDouble(0)
	case *ir.SymBoolType:
		ev = evBool(false)
	case *ir.ScalarType:
		switch t.Kind {
		case ir.IntKind:
			ev = evInt(0)
		case ir.FloatKind:
			ev = evDouble(0)
		case ir.BoolKind:
			ev = evBool(false)
		default:
			return 0, fmt.Errorf("value %s of type %s cannot be emitted", v, v.Type)
		}
	default:
		return 0, fmt.Errorf("value %s of type %s cannot be emitted", v, v.Type)
	}
	idx := m.add(ev)
	m.index[v] = idx
	return idx, nil
}

// emitOutputs lists the graph's outputs; literal outputs get fresh values.
func (m *method) emitOutputs() error {
	for i, a := range m.p.Main.Outputs() {
		if a.Kind == ir.ArgValue {
			idx, ok := m.index[a.Value]
			if !ok {
				return fmt.Errorf("output %d: %s was never emitted", i, a.Value)
			}
			m.plan.Outputs = append(m.plan.Outputs, idx)
			continue
		}
		idx, err := m.literal(a)
		if err != nil {
			return fmt.Errorf("output %d: %w", i, err)
		}
		m.plan.Outputs = append(m.plan.Outputs, idx)
	}
	return nil
}

// operatorIndex returns the operators[] index of op, adding it when new.
func (m *method) operatorIndex(info *ir.OpInfo) (int32, error) {
	if info.Namespace == "" || info.Base == "" {
		return 0, fmt.Errorf("op %s has no ExecuTorch operator name (namespace::name)", info.Name)
	}
	overload := info.Overload
	if overload == "default" {
		overload = ""
	}
	name := info.Namespace + "::" + info.Base
	key := name + "." + overload
	if i, ok := m.ops[key]; ok {
		return i, nil
	}
	m.plan.Operators = append(m.plan.Operators, &etfb.OperatorT{Name: name, Overload: overload})
	i := int32(len(m.plan.Operators) - 1)
	m.ops[key] = i
	return i, nil
}

// OpMemoryAlloc is the allocation op of lowered programs; it emits a
// tensor value and no instruction.
var opMemoryAlloc = ir.OpMemoryAlloc

func (m *method) emitNode(n *ir.Node) error {
	info := n.Op.Info()
	if n.Op == opMemoryAlloc {
		if len(n.Results) != 1 {
			return n.Errorf("memory.alloc with %d results", len(n.Results))
		}
		if _, planned := m.rec.Allocs[n.Results[0]]; !planned && n.Graph != m.p.Main {
			return n.Errorf("memory.alloc in region %s has no planned storage (meta mem missing; re-run plan-memory after changing the region)", n.Graph.Name)
		}
		if _, err := m.emitResult(n.Results[0]); err != nil {
			return n.Errorf("%v", err)
		}
		return nil
	}
	if n.Op == opETView {
		return m.emitView(n)
	}
	if n.Op == opCond {
		return m.emitCond(n)
	}
	if n.Op == opWhile {
		return m.emitWhile(n)
	}
	if n.Op == opScan || n.Op == opMapImpl {
		return m.emitScan(n)
	}
	if n.Op == xnnpack.OpCallDelegate && isCUDADelegate(n) {
		return m.emitCUDADelegate(n)
	}
	if n.Op == xnnpack.OpCallDelegate {
		return m.emitDelegate(n)
	}
	switch {
	case n.Op.Has(ir.PropHigherOrder) || len(n.Regions()) > 0:
		return n.Errorf("control flow (%s) is not supported by the emitter yet (only higher_order.cond, while_loop, scan and map_impl are emitted)", info.Name)
	case info.Schema.VarArgs || strings.Contains(info.Namespace, "."):
		return n.Errorf("op %s has no ExecuTorch kernel (Python builtins must be lowered to executorch_prim ops)", info.Name)
	}
	if err := checkKernel(n.Op); err != nil {
		return n.Errorf("%v", err)
	}
	if err := checkKernelArgs(n); err != nil {
		return n.Errorf("%v", err)
	}
	opIdx, err := m.operatorIndex(info)
	if err != nil {
		return n.Errorf("%v", err)
	}
	schema := info.Schema.Args
	if len(n.Args) != len(schema) {
		return n.Errorf("%d arguments for %d schema arguments", len(n.Args), len(schema))
	}
	args := make([]int32, 0, callconv.Arity(&info.Schema))
	var mutable []int32 // the tensors the op writes (a! arguments; a Tensor[] out's items)
	for i, as := range schema {
		idx, err := m.arg(as.Type, n.Args[i])
		if err != nil {
			return n.Errorf("argument %q: %v", as.Name, err)
		}
		args = append(args, idx)
		if as.Mutates() {
			mutable = append(mutable, m.writtenTensors(idx)...)
		}
	}
	slot, err := m.returnSlot(n, info, mutable)
	if err != nil {
		return err
	}
	if slot >= 0 {
		args = append(args, slot)
	}
	m.chain.Instructions = append(m.chain.Instructions, &etfb.InstructionT{InstrArgs: &etfb.InstructionArgumentsT{
		Type:  etfb.InstructionArgumentsKernelCall,
		Value: &etfb.KernelCallT{OpIndex: opIdx, Args: args},
	}})
	return nil
}
