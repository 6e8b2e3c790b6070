package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// BackendID is the delegate id of the CUDA backend.
const BackendID = "CudaBackend"

// Keys returns the named-data keys of a compiled partition:
// <sha256(so)>_so_blob and <sha256(weights)>_weights_blob.
func Keys(c *Compiled) (so, weights string) {
	s := sha256.Sum256(c.SO)
	w := sha256.Sum256(c.Weights)
	return hex.EncodeToString(s[:]) + "_so_blob", hex.EncodeToString(w[:]) + "_weights_blob"
}

// Package builds the .pte program and the .ptd named data of p (the host
// program, before DeviceProgram) whose CUDA partition compiled to c.
// methodName is the compile spec method_name (the model class name).
//
// The forward method: user inputs are host tensors (arena 1); each is copied
// to a device tensor (arena 2, extra_tensor_info device CUDA) by
// et_copy::_h2d_copy.out; one DelegateCall of CudaBackend takes the device
// inputs and writes the device outputs; et_copy::_d2h_copy.out copies each
// back to a host output. The delegate's processed bytes (inline) are the
// two named-data keys joined by "\n"; the .so and the weights blob are the
// .ptd entries. Shapes must be static.
func Package(p *ir.Program, call *ir.Node, c *Compiled, methodName string) (*pte.File, []pte.NamedTensor, error) {
	soKey, wKey := Keys(c)
	m := &etfb.ExecutionPlanT{
		Name:              "forward",
		ContainerMetaType: &etfb.ContainerMetadataT{EncodedInpStr: p.Signature.InSpec, EncodedOutStr: p.Signature.OutSpec},
		Inputs:            []int32{},
		Outputs:           []int32{},
		Operators: []*etfb.OperatorT{
			{Name: "et_copy::_h2d_copy", Overload: "out"},
			{Name: "et_copy::_d2h_copy", Overload: "out"},
		},
		Delegates: []*etfb.BackendDelegateT{{
			Id:           BackendID,
			Processed:    &etfb.BackendDelegateDataReferenceT{Location: etfb.DataLocationINLINE, Index: 0},
			CompileSpecs: []*etfb.CompileSpecT{{Key: "method_name", Value: []byte(methodName)}},
		}},
	}
	arena := [3]int64{}
	add := func(v *ir.Value, mem uint32) (int32, error) {
		t := v.Tensor()
		tv, size, err := tensorValue(t)
		if err != nil {
			return 0, fmt.Errorf("cuda: %%%s: %w", v.Name, err)
		}
		off := (arena[mem] + 15) / 16 * 16
		arena[mem] = off + size
		tv.AllocationInfo = &etfb.AllocationDetailsT{MemoryId: mem, MemoryOffsetLow: uint32(off), MemoryOffsetHigh: uint32(off >> 32)}
		if mem == 2 {
			tv.ExtraTensorInfo = &etfb.ExtraTensorInfoT{DeviceType: etfb.DeviceTypeCUDA}
		}
		m.Values = append(m.Values, &etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesTensor, Value: tv}})
		return int32(len(m.Values) - 1), nil
	}
	kernel := func(op int32, args ...int32) *etfb.InstructionT {
		return &etfb.InstructionT{InstrArgs: &etfb.InstructionArgumentsT{Type: etfb.InstructionArgumentsKernelCall, Value: &etfb.KernelCallT{OpIndex: op, Args: args}}}
	}
	var instrs []*etfb.InstructionT
	var devIn, devOut []int32
	for i, v := range p.Main.Inputs {
		if i >= len(p.Signature.Inputs) || p.Signature.Inputs[i].Kind != ir.UserInput {
			continue // weights live in the compiled partition's weights blob
		}
		h, err := add(v, 1)
		if err != nil {
			return nil, nil, err
		}
		d, err := add(v, 2)
		if err != nil {
			return nil, nil, err
		}
		m.Inputs = append(m.Inputs, h)
		devIn = append(devIn, d)
		instrs = append(instrs, kernel(0, h, d, d))
	}
	var copies []*etfb.InstructionT
	for _, o := range p.Main.Outputs() {
		d, err := add(o.Value, 2)
		if err != nil {
			return nil, nil, err
		}
		h, err := add(o.Value, 1)
		if err != nil {
			return nil, nil, err
		}
		devOut = append(devOut, d)
		m.Outputs = append(m.Outputs, h)
		copies = append(copies, kernel(1, d, h, h))
	}
	instrs = append(instrs, &etfb.InstructionT{InstrArgs: &etfb.InstructionArgumentsT{Type: etfb.InstructionArgumentsDelegateCall,
		Value: &etfb.DelegateCallT{DelegateIndex: 0, Args: append(append([]int32{}, devIn...), devOut...)}}})
	instrs = append(instrs, copies...)
	m.Chains = []*etfb.ChainT{{Inputs: m.Inputs, Outputs: m.Outputs, Instructions: instrs}}
	m.NonConstBufferSizes = []int64{0, arena[1], arena[2]}
	m.NonConstBufferDevice = []*etfb.NonConstBufferDeviceT{{BufferIdx: 2, DeviceType: etfb.DeviceTypeCUDA}}
	prog := &etfb.ProgramT{
		Version:             0,
		ExecutionPlan:       []*etfb.ExecutionPlanT{m},
		ConstantBuffer:      []*etfb.BufferT{},
		BackendDelegateData: []*etfb.BackendDelegateInlineDataT{{Data: []byte(soKey + "\n" + wKey)}},
		Segments:            []*etfb.DataSegmentT{{Offset: 0, Size: 0}},
		ConstantSegment:     &etfb.SubsegmentOffsetsT{SegmentIndex: 0, Offsets: []uint64{0}},
		MutableDataSegments: []*etfb.SubsegmentOffsetsT{},
		NamedData:           []*etfb.NamedDataT{},
	}
	f := &pte.File{Program: prog, Segments: []pte.Segment{{Offset: 0, Size: 0, Data: []byte{}}}}
	data := []pte.NamedTensor{{Key: soKey, Data: c.SO}, {Key: wKey, Data: c.Weights}}
	return f, data, nil
}

// tensorValue is the Tensor table of a static t and its byte size.
func tensorValue(t *ir.TensorType) (*etfb.TensorT, int64, error) {
	st, err := scalarType(t.DType)
	if err != nil {
		return nil, 0, err
	}
	tv := &etfb.TensorT{ScalarType: st, Sizes: make([]int32, len(t.Shape)), DimOrder: make([]byte, len(t.Shape))}
	size := int64(t.DType.Size())
	for i, d := range t.Shape {
		v, ok := d.Const()
		if !ok {
			return nil, 0, fmt.Errorf("dim %d (%s) is symbolic; the CUDA packager supports static shapes only", i, d)
		}
		if v < 0 || v > 1<<31-1 {
			return nil, 0, fmt.Errorf("dim %d is %d, outside int32", i, v)
		}
		tv.Sizes[i] = int32(v)
		size *= v
	}
	for i := range tv.DimOrder {
		tv.DimOrder[i] = byte(i)
	}
	for i, d := range t.DimOrder {
		tv.DimOrder[i] = byte(d)
	}
	return tv, size, nil
}

// scalarType maps a dtype to ExecuTorch's ScalarType (c10 codes).
func scalarType(d ir.DType) (etfb.ScalarType, error) {
	code := d.PT2Code()
	if code >= 1 && code <= 12 {
		return etfb.ScalarType(code - 1), nil
	}
	m := map[int]etfb.ScalarType{13: 15, 28: 27, 29: 24, 30: 23, 31: 26, 32: 25, 34: 28, 35: 29}
	if st, ok := m[code]; ok {
		return st, nil
	}
	return 0, fmt.Errorf("dtype %s has no ExecuTorch scalar type", d)
}
