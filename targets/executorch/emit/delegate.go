package emit

import (
	"fmt"
	"io"

	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// Delegates: each higher_order.executorch_call_delegate node (made by the
// xnnpack-partition pass) becomes a BackendDelegate whose processed data is
// a segment (so do the CUDA and OpenVINO delegates, cuda_delegate.go and
// openvino_delegate.go), and one DelegateCall instruction whose arguments are the
// runtime inputs then the results (the XNNPACK runtime indexes them by
// external id). Constants the payload refers to are named data, one segment
// per distinct sha256 key, after the delegate segments; their bytes are
// lazy (lazy_named.go).

// delegateState collects the delegates of a method.
type delegateState struct {
	payloads [][]byte
	named    []xnnpack.Named
	seen     map[string]bool
}

// emitDelegate emits a delegate call node.
func (m *method) emitDelegate(n *ir.Node) error {
	if isOpenVINODelegate(n) {
		return m.emitOpenVINODelegate(n)
	}
	if m.dels == nil {
		m.dels = &delegateState{seen: map[string]bool{}}
	}
	pay, err := xnnpack.Serialize(n, m.p.Env, m.delegateConstant)
	if err != nil {
		return err
	}
	var args []int32
	for _, v := range pay.Args {
		idx, err := m.operand(v)
		if err != nil {
			return n.Errorf("delegate argument: %v", err)
		}
		if k := m.plan.Values[idx].Val.Type; k != etfb.KernelTypesTensor {
			return n.Errorf("delegate argument %s is a %s value, not a tensor", v, etfb.EnumNamesKernelTypes[k])
		}
		args = append(args, idx)
	}
	for i, r := range n.Results {
		idx, err := m.emitResult(r)
		if err != nil {
			return n.Errorf("result %d: %v", i, err)
		}
		args = append(args, idx)
	}
	m.addSegmentDelegate(xnnpack.BackendID, []*etfb.CompileSpecT{}, pay.Data, args)
	for _, nd := range pay.Named {
		if !m.dels.seen[nd.Key] {
			m.dels.seen[nd.Key] = true
			m.dels.named = append(m.dels.named, nd)
		}
	}
	return nil
}

// addSegmentDelegate appends a BackendDelegate of backend id whose
// processed bytes become a segment (attachDelegates places it), and the
// DelegateCall instruction with args.
func (m *method) addSegmentDelegate(id string, specs []*etfb.CompileSpecT, processed []byte, args []int32) {
	if m.dels == nil {
		m.dels = &delegateState{seen: map[string]bool{}}
	}
	di := int32(len(m.plan.Delegates))
	// Processed.Index is the payload's index, made a segment index in
	// attachDelegates.
	m.plan.Delegates = append(m.plan.Delegates, &etfb.BackendDelegateT{
		Id:           id,
		Processed:    &etfb.BackendDelegateDataReferenceT{Location: etfb.DataLocationSEGMENT, Index: uint32(len(m.dels.payloads))},
		CompileSpecs: specs,
	})
	m.dels.payloads = append(m.dels.payloads, append([]byte{}, processed...))
	m.chain.Instructions = append(m.chain.Instructions, &etfb.InstructionT{InstrArgs: &etfb.InstructionArgumentsT{
		Type:  etfb.InstructionArgumentsDelegateCall,
		Value: &etfb.DelegateCallT{DelegateIndex: di, Args: args},
	}})
}

// delegateConstant returns a delegate operand that is a constant
// placeholder of the main graph as lazy bytes over its weight's source,
// unread: the serializer hashes what it stores (the weight as it is, or
// the weight transformed).
func (m *method) delegateConstant(v *ir.Value) (pte.Lazy, bool, error) {
	spec, ok := m.constantSpec(v)
	if !ok {
		return pte.Lazy{}, false, nil
	}
	w := m.p.Weight(spec.Target)
	if w == nil {
		return pte.Lazy{}, false, fmt.Errorf("no weight %q", spec.Target)
	}
	n, err := weightSize(w)
	if err != nil {
		return pte.Lazy{}, false, err
	}
	src, name := w.Source, w.Name
	return pte.Lazy{Name: fmt.Sprintf("weight %q", name), Size: uint64(n), Open: func() (io.ReadCloser, error) {
		r, err := src.Open()
		if err != nil {
			return nil, fmt.Errorf("weight %q: %w", name, err)
		}
		return r, nil
	}}, true, nil
}

// constantSpec is the signature entry of v when v is a constant placeholder.
func (m *method) constantSpec(v *ir.Value) (ir.InputSpec, bool) {
	if !v.IsInput() || v.Graph != m.p.Main || v.Index >= len(m.p.Signature.Inputs) {
		return ir.InputSpec{}, false
	}
	spec := m.p.Signature.Inputs[v.Index]
	return spec, xnnpack.IsConstantKind(spec.Kind)
}

// onlyDelegated reports a constant placeholder every use of which is a
// delegate call that bakes it (xnnpack.BakedOperands): its bytes live in
// named data, not in the program. Each call's answers are computed once,
// at its first constant, and kept in baked.
func onlyDelegated(v *ir.Value, baked map[*ir.Node]xnnpack.OperandBaking) bool {
	if v.NumUses() == 0 {
		return false
	}
	for _, u := range v.Uses() {
		if u.IsReturn() || u.Op != xnnpack.OpCallDelegate {
			return false // read by a kernel
		}
		b, ok := baked[u]
		if !ok {
			b = xnnpack.BakedOperands(u)
			baked[u] = b
		}
		if !b.Bakes(v) {
			return false // passed to a delegate at run time
		}
	}
	return true
}

// attachDelegates appends the delegate segments, then one segment per
// named constant, and points the delegates and named data at them.
func (m *method) attachDelegates(prog *etfb.ProgramT, segs []pte.Segment) []pte.Segment {
	if m.dels == nil {
		return segs
	}
	add := func(b []byte) uint32 {
		prog.Segments = append(prog.Segments, &etfb.DataSegmentT{Size: uint64(len(b))})
		segs = append(segs, pte.Segment{Size: uint64(len(b)), Data: b})
		return uint32(len(segs) - 1)
	}
	first := uint32(len(segs))
	for _, b := range m.dels.payloads {
		add(b)
	}
	for _, d := range m.plan.Delegates {
		if d.Processed.Location == etfb.DataLocationSEGMENT {
			d.Processed.Index += first
		}
	}
	for _, nd := range m.dels.named {
		prog.NamedData = append(prog.NamedData, &etfb.NamedDataT{Key: nd.Key, SegmentIndex: uint32(len(segs))})
		prog.Segments = append(prog.Segments, &etfb.DataSegmentT{Size: nd.Data.Size})
		segs = append(segs, namedSegment(nd))
	}
	return segs
}
