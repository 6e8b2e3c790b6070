package pte

import (
	"fmt"
	"math/bits"

	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// check validates every index the program stores against the vector it
// points into, so that later stages (and Summary) can index freely.
func (f *File) check() error {
	p := f.Program
	nseg := len(f.Segments)
	if cs := p.ConstantSegment; cs != nil && len(cs.Offsets) > 1 {
		if int(cs.SegmentIndex) >= nseg {
			return fmt.Errorf("Program.constant_segment.segment_index %d: only %d segments", cs.SegmentIndex, nseg)
		}
		size := f.Segments[cs.SegmentIndex].Size
		for i, off := range cs.Offsets {
			if off > size {
				return fmt.Errorf("Program.constant_segment.offsets[%d] = %d is past the %d-byte segment %d", i, off, size, cs.SegmentIndex)
			}
		}
	}
	for i, m := range p.MutableDataSegments {
		if m != nil && len(m.Offsets) > 0 && int(m.SegmentIndex) >= nseg {
			return fmt.Errorf("Program.mutable_data_segments[%d].segment_index %d: only %d segments", i, m.SegmentIndex, nseg)
		}
		if m != nil && len(m.Offsets) > 0 {
			size := f.Segments[m.SegmentIndex].Size
			for j, off := range m.Offsets {
				if off > size {
					return fmt.Errorf("Program.mutable_data_segments[%d].offsets[%d] = %d is past the %d-byte segment %d", i, j, off, size, m.SegmentIndex)
				}
			}
		}
	}
	for i, nd := range p.NamedData {
		if nd == nil || int(nd.SegmentIndex) >= nseg {
			return fmt.Errorf("Program.named_data[%d]: segment index out of range (%d segments)", i, nseg)
		}
	}
	for pi, plan := range p.ExecutionPlan {
		if plan == nil {
			return fmt.Errorf("Program.execution_plan[%d]: missing", pi)
		}
		if err := f.checkPlan(plan); err != nil {
			return fmt.Errorf("Program.execution_plan[%d](%s).%w", pi, plan.Name, err)
		}
	}
	return nil
}

// numConstants is the number of constant slots data_buffer_idx may address.
func (f *File) numConstants() int {
	if cs := f.Program.ConstantSegment; cs != nil && len(cs.Offsets) > 0 {
		return len(cs.Offsets)
	}
	return len(f.Program.ConstantBuffer)
}

func (f *File) checkPlan(plan *etfb.ExecutionPlanT) error {
	nv := len(plan.Values)
	valueIdx := func(where string, i int64) error {
		if i < 0 || i >= int64(nv) {
			return fmt.Errorf("%s: value index %d out of range [0, %d)", where, i, nv)
		}
		return nil
	}
	for i, v := range plan.Inputs {
		if err := valueIdx(fmt.Sprintf("inputs[%d]", i), int64(v)); err != nil {
			return err
		}
	}
	for i, v := range plan.Outputs {
		if err := valueIdx(fmt.Sprintf("outputs[%d]", i), int64(v)); err != nil {
			return err
		}
	}
	for vi, v := range plan.Values {
		if v == nil || v.Val == nil {
			continue // NONE
		}
		where := fmt.Sprintf("values[%d]", vi)
		switch x := v.Val.Value.(type) {
		case *etfb.IntListT:
			for j, it := range x.Items {
				w := fmt.Sprintf("%s(IntList).items[%d]", where, j)
				if err := valueIdx(w, it); err != nil {
					return err
				}
				if t := plan.Values[it]; t == nil || t.Val == nil || t.Val.Type != etfb.KernelTypesInt {
					return fmt.Errorf("%s: value %d is not an Int", w, it)
				}
			}
		case *etfb.TensorListT:
			for j, it := range x.Items {
				w := fmt.Sprintf("%s(TensorList).items[%d]", where, j)
				if err := valueIdx(w, int64(it)); err != nil {
					return err
				}
				if t := plan.Values[it]; t == nil || t.Val == nil || t.Val.Type != etfb.KernelTypesTensor {
					return fmt.Errorf("%s: value %d is not a Tensor", w, it)
				}
			}
		case *etfb.OptionalTensorListT:
			for j, it := range x.Items {
				if it == -1 {
					continue
				}
				w := fmt.Sprintf("%s(OptionalTensorList).items[%d]", where, j)
				if err := valueIdx(w, int64(it)); err != nil {
					return err
				}
				if t := plan.Values[it]; t != nil && t.Val != nil && t.Val.Type != etfb.KernelTypesTensor && t.Val.Type != etfb.KernelTypesNull {
					return fmt.Errorf("%s: value %d is neither a Tensor nor None", w, it)
				}
			}
		case *etfb.TensorT:
			if err := f.checkTensor(plan, x); err != nil {
				return fmt.Errorf("%s(Tensor): %w", where, err)
			}
		}
	}
	for ci, c := range plan.Chains {
		if c == nil {
			return fmt.Errorf("chains[%d]: missing", ci)
		}
		for i, v := range c.Inputs {
			if err := valueIdx(fmt.Sprintf("chains[%d].inputs[%d]", ci, i), int64(v)); err != nil {
				return err
			}
		}
		for i, v := range c.Outputs {
			if err := valueIdx(fmt.Sprintf("chains[%d].outputs[%d]", ci, i), int64(v)); err != nil {
				return err
			}
		}
		for ii, in := range c.Instructions {
			if in == nil || in.InstrArgs == nil {
				continue
			}
			where := fmt.Sprintf("chains[%d].instructions[%d]", ci, ii)
			var args []int32
			switch x := in.InstrArgs.Value.(type) {
			case *etfb.KernelCallT:
				if x.OpIndex < 0 || int(x.OpIndex) >= len(plan.Operators) {
					return fmt.Errorf("%s(KernelCall): op_index %d out of range [0, %d)", where, x.OpIndex, len(plan.Operators))
				}
				args = x.Args
			case *etfb.DelegateCallT:
				if x.DelegateIndex < 0 || int(x.DelegateIndex) >= len(plan.Delegates) {
					return fmt.Errorf("%s(DelegateCall): delegate_index %d out of range [0, %d)", where, x.DelegateIndex, len(plan.Delegates))
				}
				args = x.Args
			case *etfb.MoveCallT:
				args = []int32{x.MoveFrom, x.MoveTo}
			case *etfb.JumpFalseCallT:
				args = []int32{x.CondValueIndex}
				if x.DestinationInstruction < 0 || int(x.DestinationInstruction) > len(c.Instructions) {
					return fmt.Errorf("%s(JumpFalseCall): destination %d out of range [0, %d]", where, x.DestinationInstruction, len(c.Instructions))
				}
			case *etfb.FreeCallT:
				args = []int32{x.ValueIndex}
			}
			for ai, a := range args {
				if err := valueIdx(fmt.Sprintf("%s.args[%d]", where, ai), int64(a)); err != nil {
					return err
				}
			}
		}
	}
	for oi, op := range plan.Operators {
		if op == nil {
			return fmt.Errorf("operators[%d]: missing", oi)
		}
	}
	for di, d := range plan.Delegates {
		if d == nil {
			return fmt.Errorf("delegates[%d]: missing", di)
		}
		if d.Processed == nil {
			continue
		}
		switch d.Processed.Location {
		case etfb.DataLocationSEGMENT:
			if int(d.Processed.Index) >= len(f.Segments) {
				return fmt.Errorf("delegates[%d](%s).processed: segment %d out of range (%d segments)", di, d.Id, d.Processed.Index, len(f.Segments))
			}
		case etfb.DataLocationINLINE:
			if int(d.Processed.Index) >= len(f.Program.BackendDelegateData) {
				return fmt.Errorf("delegates[%d](%s).processed: inline data %d out of range (%d entries)", di, d.Id, d.Processed.Index, len(f.Program.BackendDelegateData))
			}
		default:
			return fmt.Errorf("delegates[%d](%s).processed: unknown location %d", di, d.Id, d.Processed.Location)
		}
	}
	return nil
}

func (f *File) checkTensor(plan *etfb.ExecutionPlanT, t *etfb.TensorT) error {
	external := t.ExtraTensorInfo != nil && t.ExtraTensorInfo.Location == etfb.TensorDataLocationEXTERNAL
	switch {
	case t.DataBufferIdx > 0 && !external && t.AllocationInfo != nil:
		// A planned tensor with initial state: a mutable buffer whose
		// bytes are in mutable_data_segments[extra.mutable_data_segments_idx].
		si := uint64(0)
		if t.ExtraTensorInfo != nil {
			si = t.ExtraTensorInfo.MutableDataSegmentsIdx
		}
		ms := f.Program.MutableDataSegments
		if si >= uint64(len(ms)) || ms[si] == nil {
			return fmt.Errorf("data_buffer_idx %d of a planned tensor: mutable_data_segments[%d] out of range (%d entries)", t.DataBufferIdx, si, len(ms))
		}
		if int(t.DataBufferIdx) >= len(ms[si].Offsets) {
			return fmt.Errorf("data_buffer_idx %d out of range (%d mutable data slots in mutable_data_segments[%d])", t.DataBufferIdx, len(ms[si].Offsets), si)
		}
	case t.DataBufferIdx > 0 && !external && int(t.DataBufferIdx) >= f.numConstants():
		return fmt.Errorf("data_buffer_idx %d out of range (%d constant slots)", t.DataBufferIdx, f.numConstants())
	}
	for i, d := range t.Sizes {
		if d < 0 {
			return fmt.Errorf("sizes[%d] = %d is negative", i, d)
		}
	}
	if _, ok := tensorBytes(t); !ok && ScalarTypeSize(t.ScalarType) != 0 {
		return fmt.Errorf("sizes %v: the byte size overflows 2^62", t.Sizes)
	}
	if len(t.DimOrder) != len(t.Sizes) {
		return fmt.Errorf("dim_order has %d entries for %d sizes", len(t.DimOrder), len(t.Sizes))
	}
	seen := make([]bool, len(t.DimOrder))
	for i, d := range t.DimOrder {
		if int(d) >= len(seen) || seen[d] {
			return fmt.Errorf("dim_order[%d] = %d: dim_order %v is not a permutation", i, d, t.DimOrder)
		}
		seen[d] = true
	}
	if a := t.AllocationInfo; a != nil {
		if int(a.MemoryId) >= len(plan.NonConstBufferSizes) {
			return fmt.Errorf("allocation_info.memory_id %d out of range (%d planned buffers)", a.MemoryId, len(plan.NonConstBufferSizes))
		}
		off := uint64(a.MemoryOffsetHigh)<<32 | uint64(a.MemoryOffsetLow)
		n, ok := tensorBytes(t)
		size := plan.NonConstBufferSizes[a.MemoryId]
		if ok && size >= 0 && (off > uint64(size) || n > uint64(size)-off) {
			return fmt.Errorf("allocation_info: %d bytes at offset %d overrun buffer %d (%d bytes)", n, off, a.MemoryId, size)
		}
	}
	return nil
}

// tensorBytes is the byte size of t's sizes, false for unknown scalar types
// or negative sizes.
func tensorBytes(t *etfb.TensorT) (uint64, bool) {
	n := uint64(ScalarTypeSize(t.ScalarType))
	if n == 0 {
		return 0, false
	}
	for _, s := range t.Sizes {
		if s < 0 {
			return 0, false
		}
		if s == 0 {
			return 0, true
		}
	}
	for _, s := range t.Sizes {
		hi, lo := bits.Mul64(n, uint64(s))
		if hi != 0 || lo > 1<<62 {
			return 0, false
		}
		n = lo
	}
	return n, true
}

// ScalarTypeSize is the byte size of one element of st, 0 when unknown.
func ScalarTypeSize(st etfb.ScalarType) int {
	switch st {
	case etfb.ScalarTypeBYTE, etfb.ScalarTypeCHAR, etfb.ScalarTypeBOOL, etfb.ScalarTypeQINT8, etfb.ScalarTypeQUINT8,
		etfb.ScalarTypeQUINT4X2, etfb.ScalarTypeQUINT2X4, etfb.ScalarTypeFLOAT8E5M2, etfb.ScalarTypeFLOAT8E4M3FN,
		etfb.ScalarTypeFLOAT8E5M2FNUZ, etfb.ScalarTypeFLOAT8E4M3FNUZ:
		return 1
	case etfb.ScalarTypeSHORT, etfb.ScalarTypeHALF, etfb.ScalarTypeBFLOAT16, etfb.ScalarTypeBITS16, etfb.ScalarTypeUINT16:
		return 2
	case etfb.ScalarTypeINT, etfb.ScalarTypeFLOAT, etfb.ScalarTypeQINT32, etfb.ScalarTypeUINT32:
		return 4
	case etfb.ScalarTypeLONG, etfb.ScalarTypeDOUBLE, etfb.ScalarTypeUINT64:
		return 8
	case scalarComplexHalf:
		return 4
	case scalarComplexFloat:
		return 8
	case scalarComplexDouble:
		return 16
	}
	return 0
}

// The complex codes, c10's ComplexHalf, ComplexFloat and ComplexDouble:
// commented out in scalar_type.fbs (so the generated enum lacks them), but
// the runtime's ScalarType has them and the optimized library's FFT
// kernels (_fft_r2c.out, _fft_c2r.out) read and write complex tensors.
const (
	scalarComplexHalf   etfb.ScalarType = 8
	scalarComplexFloat  etfb.ScalarType = 9
	scalarComplexDouble etfb.ScalarType = 10
)
