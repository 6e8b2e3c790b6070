package run

import (
	"fmt"

	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// Options configure Load.
type Options struct {
	// Method is the method to run; "" means "forward".
	Method string
	// Data are external data files (.ptd) holding EXTERNAL constants.
	Data []*pte.DataFile
	// MaxArenaBytes bounds the planned arenas' total size; 0 means
	// DefaultMaxArenaBytes.
	MaxArenaBytes int64
	// MaxTensorBytes bounds one tensor (declared, constant, input or
	// result); 0 means DefaultMaxTensorBytes.
	MaxTensorBytes int64
	// MaxInstructions bounds the instructions one chain runs per
	// execution (JumpFalseCall loops back); 0 means
	// DefaultMaxInstructions.
	MaxInstructions int
	// AliasingMoves runs MoveCall as ExecuTorch's runtime does: the
	// destination value is assigned the source value, so a tensor
	// destination then shares the source's memory (and shape) instead of
	// receiving a copy of its contents. Off, a MoveCall into a tensor copies
	// into the destination's own memory. Tests use it to check that emitted
	// programs do not depend on the copy.
	AliasingMoves bool
}

// Method is a loaded method: its arenas and its value table.
type Method struct {
	file      *pte.File
	name      string
	plan      *etfb.ExecutionPlanT
	dels      []pte.Delegate
	data      []*pte.DataFile // Options.Data: EXTERNAL constants and external named data
	arenas    [][]byte
	alias     bool          // Options.AliasingMoves
	maxTensor int64         // Options.MaxTensorBytes, defaulted
	maxSteps  int           // Options.MaxInstructions, defaulted
	vals      []any         // *slot, int64, float64, bool, string, nil, or a list (lists.go)
	shared    []sharedInput // unplanned tensor inputs of the current execution (shared_inputs.go)
}

// intList, tensorList and optTensorList hold value indices; doubleList and
// boolList hold their items inline.
type (
	intList       []int64
	tensorList    []int32
	optTensorList []int32
	doubleList    []float64
	boolList      []bool
)

// Load prepares a method of f for execution: it allocates the planned
// arenas (non_const_buffer_sizes), places every planned tensor at its
// (memory_id, offset) window and loads constants.
//
// Load validates what it uses (sizes against the bytes present and the
// limits of opts, offsets, indices); a runner bug that panics on a
// malformed program is returned as an error naming the file.
func Load(f *pte.File, opts Options) (m *Method, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("%s: internal error, please report it (runner panic while loading: %v)", f.Name, r)
		}
	}()
	return load(f, opts)
}

func load(f *pte.File, opts Options) (*Method, error) {
	name := opts.Method
	if name == "" {
		name = "forward"
	}
	var mi = -1
	var names []string
	for i, m := range f.Methods {
		names = append(names, m.Plan.Name)
		if m.Plan.Name == name {
			mi = i
		}
	}
	if mi < 0 {
		return nil, fmt.Errorf("%s: no method %q (methods: %v)", f.Name, name, names)
	}
	m := &Method{file: f, name: name, plan: f.Methods[mi].Plan, dels: f.Methods[mi].Delegates, data: opts.Data, alias: opts.AliasingMoves, maxTensor: opts.maxTensorBytes(), maxSteps: opts.maxInstructions()}
	if err := m.allocArenas(opts); err != nil {
		return nil, fmt.Errorf("%s: method %s: %w", f.Name, name, err)
	}
	m.vals = make([]any, len(m.plan.Values))
	for i, ev := range m.plan.Values {
		v, err := m.loadValue(i, ev, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: method %s: values[%d]: %w", f.Name, name, i, err)
		}
		m.vals[i] = v
	}
	return m, nil
}

func (m *Method) allocArenas(opts Options) error {
	limit := opts.maxArenaBytes()
	var total int64
	for i, n := range m.plan.NonConstBufferSizes {
		if n < 0 {
			return fmt.Errorf("non_const_buffer_sizes[%d] = %d is negative", i, n)
		}
		if n > limit-total {
			return fmt.Errorf("non_const_buffer_sizes: the planned arenas need at least %d bytes, over the %d-byte limit (raise it with --max-arena-bytes)", total+n, limit)
		}
		total += n
	}
	for _, n := range m.plan.NonConstBufferSizes {
		m.arenas = append(m.arenas, make([]byte, n))
	}
	return nil
}

func (m *Method) loadValue(i int, ev *etfb.EValueT, opts Options) (any, error) {
	if ev == nil || ev.Val == nil {
		return nil, nil
	}
	switch x := ev.Val.Value.(type) {
	case nil, *etfb.NullT:
		return nil, nil
	case *etfb.IntT:
		return x.IntVal, nil
	case *etfb.BoolT:
		return x.BoolVal, nil
	case *etfb.DoubleT:
		return x.DoubleVal, nil
	case *etfb.StringT:
		return x.StringVal, nil
	case *etfb.IntListT:
		return intList(x.Items), nil
	case *etfb.DoubleListT:
		return doubleList(x.Items), nil
	case *etfb.BoolListT:
		return boolList(x.Items), nil
	case *etfb.TensorListT:
		return tensorList(x.Items), nil
	case *etfb.OptionalTensorListT:
		return optTensorList(x.Items), nil
	case *etfb.TensorT:
		return m.loadTensor(i, x, opts)
	}
	return nil, fmt.Errorf("value kind %s is not supported", etfb.EnumNamesKernelTypes[ev.Val.Type])
}

func (m *Method) loadTensor(i int, t *etfb.TensorT, opts Options) (*slot, error) {
	dt, err := dtypeOf(t.ScalarType)
	if err != nil {
		return nil, fmt.Errorf("scalar_type: %w", err)
	}
	s := &slot{index: i, dt: dt, dyn: t.ShapeDynamism}
	for _, d := range t.Sizes {
		s.sizes = append(s.sizes, int64(d))
	}
	s.shape = append([]int64(nil), s.sizes...)
	nbytes, err := tensorBytes(s.sizes, dt, opts.maxTensorBytes())
	if err != nil {
		return nil, fmt.Errorf("tensor: %w", err)
	}
	if len(t.DimOrder) != len(t.Sizes) {
		return nil, fmt.Errorf("dim_order %v for sizes %v", t.DimOrder, t.Sizes)
	}
	seen := make([]bool, len(t.DimOrder))
	for _, d := range t.DimOrder {
		if int(d) >= len(seen) || seen[d] {
			return nil, fmt.Errorf("dim_order %v is not a permutation", t.DimOrder)
		}
		seen[d] = true
		s.dimOrder = append(s.dimOrder, int(d))
	}
	if t.StorageOffset != 0 {
		return nil, fmt.Errorf("storage_offset %d (must be 0)", t.StorageOffset)
	}
	external := t.ExtraTensorInfo != nil && t.ExtraTensorInfo.Location == etfb.TensorDataLocationEXTERNAL
	switch {
	case external:
		data, err := externalTensor(t, opts.Data)
		if err != nil {
			return nil, err
		}
		return s.constantFrom(data, nbytes)
	case t.AllocationInfo != nil:
		a := t.AllocationInfo
		off := uint64(a.MemoryOffsetLow) | uint64(a.MemoryOffsetHigh)<<32
		if int(a.MemoryId) >= len(m.arenas) {
			return nil, fmt.Errorf("allocation_info.memory_id %d out of range (%d planned buffers)", a.MemoryId, len(m.arenas))
		}
		arena := m.arenas[a.MemoryId]
		if off > uint64(len(arena)) || uint64(nbytes) > uint64(len(arena))-off {
			return nil, fmt.Errorf("allocation_info: planned window [%d, +%d) runs past buffer %d's %d bytes", off, nbytes, a.MemoryId, len(arena))
		}
		end := off + uint64(nbytes)
		s.mem = arena[off:end:end]
		s.planned = true
		if t.DataBufferIdx > 0 {
			// A mutable buffer: its initial state comes from the mutable data segment.
			data, err := m.mutableData(t)
			if err != nil {
				return nil, err
			}
			copy(s.mem, data)
		}
	case t.DataBufferIdx > 0:
		data, err := m.constantData(t.DataBufferIdx)
		if err != nil {
			return nil, err
		}
		return s.constantFrom(data, nbytes)
	}
	return s, nil
}

// constantFrom makes s a constant holding a private copy of data.
func (s *slot) constantFrom(data []byte, nbytes int64) (*slot, error) {
	if int64(len(data)) < nbytes {
		return nil, fmt.Errorf("constant of %v %s needs %d bytes, has %d", s.sizes, s.dt, nbytes, len(data))
	}
	s.mem = append([]byte(nil), data[:nbytes]...)
	s.constant = true
	return s, nil
}

// constantData returns the bytes of constant idx: from the constant segment,
// or from the deprecated inline constant_buffer when the constant segment
// lists no offsets.
func (m *Method) constantData(idx uint32) ([]byte, error) {
	p := m.file.Program
	cs := p.ConstantSegment
	if cs != nil && len(cs.Offsets) > 0 {
		if int(idx) >= len(cs.Offsets) {
			return nil, fmt.Errorf("data_buffer_idx %d out of range (%d constant offsets)", idx, len(cs.Offsets))
		}
		if int(cs.SegmentIndex) >= len(m.file.Segments) {
			return nil, fmt.Errorf("constant segment index %d out of range", cs.SegmentIndex)
		}
		seg := m.file.Segments[cs.SegmentIndex].Data
		off := cs.Offsets[idx]
		if off > uint64(len(seg)) {
			return nil, fmt.Errorf("constant %d at offset %d past the %d-byte constant segment", idx, off, len(seg))
		}
		return seg[off:], nil
	}
	if int(idx) >= len(p.ConstantBuffer) || p.ConstantBuffer[idx] == nil {
		return nil, fmt.Errorf("data_buffer_idx %d out of range (%d inline constant buffers)", idx, len(p.ConstantBuffer))
	}
	return p.ConstantBuffer[idx].Storage, nil
}

func (m *Method) mutableData(t *etfb.TensorT) ([]byte, error) {
	p := m.file.Program
	si := uint64(0)
	if t.ExtraTensorInfo != nil {
		si = t.ExtraTensorInfo.MutableDataSegmentsIdx
	}
	if si >= uint64(len(p.MutableDataSegments)) {
		return nil, fmt.Errorf("mutable buffer: mutable_data_segments[%d] out of range", si)
	}
	ms := p.MutableDataSegments[si]
	if int(t.DataBufferIdx) >= len(ms.Offsets) || int(ms.SegmentIndex) >= len(m.file.Segments) {
		return nil, fmt.Errorf("mutable buffer: data_buffer_idx %d out of range", t.DataBufferIdx)
	}
	seg := m.file.Segments[ms.SegmentIndex].Data
	off := ms.Offsets[t.DataBufferIdx]
	if off > uint64(len(seg)) {
		return nil, fmt.Errorf("mutable buffer at offset %d past its segment", off)
	}
	return seg[off:], nil
}

// Input describes one method input.
type Input struct {
	Value  int         // value index
	Kind   string      // "tensor", "int", "double", "bool", …
	Tensor *TensorInfo // set for tensors
	Const  any         // the declared value of a non-tensor input
}

// TensorInfo is a tensor input's declared type.
type TensorInfo struct {
	DType   string
	Sizes   []int64 // the upper bound when Dynamic
	Dynamic bool
}

// Inputs lists the method's inputs in order.
func (m *Method) Inputs() []Input {
	var out []Input
	for _, vi := range m.plan.Inputs {
		in := Input{Value: int(vi)}
		switch v := m.vals[vi].(type) {
		case *slot:
			in.Kind = "tensor"
			in.Tensor = &TensorInfo{DType: v.dt.String(), Sizes: append([]int64(nil), v.sizes...), Dynamic: v.dyn != etfb.TensorShapeDynamismSTATIC}
		case int64:
			in.Kind, in.Const = "int", v
		case float64:
			in.Kind, in.Const = "double", v
		case bool:
			in.Kind, in.Const = "bool", v
		default:
			in.Kind, in.Const = fmt.Sprintf("%T", v), v
		}
		out = append(out, in)
	}
	return out
}

// Name is the method's name.
func (m *Method) Name() string { return m.name }
