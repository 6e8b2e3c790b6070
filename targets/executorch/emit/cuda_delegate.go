package emit

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// CUDA delegates (pte-format.md §9): a higher_order.executorch_call_delegate
// node whose backend argument is "CudaBackend" (made by the cuda-partition
// pass) becomes a BackendDelegate whose processed bytes are a segment (as
// ExecuTorch writes every delegate payload) and the compile spec
// method_name, and one DelegateCall whose arguments are the
// device tensors the call reads (constant placeholders excluded: their bytes
// are in the compiled partition's weights blob), then its results. A program
// may hold several such calls, each its own BackendDelegate; a device
// result of one may be an argument of a later one directly. The
// compiled payload comes from Options.CUDA (targets/executorch/cuda builds
// it). Tensors typed on a CUDA device carry extra_tensor_info.device_type =
// CUDA, and an arena that holds them is listed in non_const_buffer_device.

// CUDABackendID is the delegate id of ExecuTorch's CUDA backend.
const CUDABackendID = "CudaBackend"

// CUDAPayload is the compiled form of one CudaBackend delegate call.
type CUDAPayload struct {
	// Processed is the delegate's processed bytes (stored as a segment).
	Processed []byte
	// MethodName is the compile spec method_name.
	MethodName string
}

// isCUDADelegate reports a CudaBackend delegate call.
func isCUDADelegate(n *ir.Node) bool {
	return len(n.Args) > 1 && n.Args[1].Kind == ir.ArgString && n.Args[1].Str == CUDABackendID
}

// emitCUDADelegate emits a CudaBackend delegate call.
func (m *method) emitCUDADelegate(n *ir.Node) error {
	if m.opts.CUDA == nil {
		return n.Errorf("CudaBackend delegate call: the emitter needs its compiled partition (Options.CUDA); write CUDA programs with targets/executorch/cuda.Write")
	}
	pay, err := m.opts.CUDA(n)
	if err != nil {
		return n.Errorf("CudaBackend delegate call: %v", err)
	}
	var args []int32
	for i, a := range n.Args[2:] {
		if a.Kind != ir.ArgValue {
			return n.Errorf("CudaBackend delegate operand %d is not a value", i)
		}
		if _, ok := m.constantSpec(a.Value); ok {
			continue // in the compiled partition's weights blob
		}
		if !isCUDATensor(a.Value) {
			return n.Errorf("CudaBackend delegate operand %s is %s, not a CUDA tensor (the CUDA runtime takes device tensors only)", a.Value, a.Value.Type)
		}
		idx, err := m.operand(a.Value)
		if err != nil {
			return n.Errorf("delegate argument: %v", err)
		}
		args = append(args, idx)
	}
	for i, r := range n.Results {
		if !isCUDATensor(r) {
			return n.Errorf("CudaBackend delegate result %s is %s, not a CUDA tensor", r, r.Type)
		}
		idx, err := m.emitResult(r)
		if err != nil {
			return n.Errorf("result %d: %v", i, err)
		}
		args = append(args, idx)
	}
	m.addSegmentDelegate(CUDABackendID, []*etfb.CompileSpecT{{Key: "method_name", Value: []byte(pay.MethodName)}}, pay.Processed, args)
	return nil
}

// isCUDATensor reports a tensor typed on a CUDA device.
func isCUDATensor(v *ir.Value) bool {
	t := v.Tensor()
	return t != nil && isCUDADevice(t.Device)
}

func isCUDADevice(d string) bool { return d == "cuda" || strings.HasPrefix(d, "cuda:") }

// deviceInfo is the extra_tensor_info of a tensor on device d (nil on the
// CPU), or an error for a device ExecuTorch has no DeviceType for.
func deviceInfo(d string) (*etfb.ExtraTensorInfoT, error) {
	switch {
	case d == "" || d == "cpu" || d == "cpu:0":
		return nil, nil
	case isCUDADevice(d):
		idx := 0
		if _, n, ok := strings.Cut(d, ":"); ok {
			i, err := strconv.Atoi(n)
			if err != nil || i < 0 || i > 127 {
				return nil, fmt.Errorf("tensor on device %q: bad device index", d)
			}
			idx = i
		}
		return &etfb.ExtraTensorInfoT{DeviceType: etfb.DeviceTypeCUDA, DeviceIndex: int8(idx)}, nil
	}
	return nil, fmt.Errorf("tensor on device %q: ExecuTorch places tensors on the CPU or CUDA only", d)
}

// arenaDevices fills non_const_buffer_device from the planned tensors: an
// arena holding CUDA tensors is a device arena; one holding both host and
// device tensors is an error.
func (m *method) arenaDevices() error {
	dev := map[uint32]etfb.DeviceType{}
	host := map[uint32]bool{}
	for _, ev := range m.plan.Values {
		tv, ok := ev.Val.Value.(*etfb.TensorT)
		if !ok || tv.AllocationInfo == nil {
			continue
		}
		id := tv.AllocationInfo.MemoryId
		if tv.ExtraTensorInfo != nil && tv.ExtraTensorInfo.DeviceType != etfb.DeviceTypeCPU {
			dev[id] = tv.ExtraTensorInfo.DeviceType
		} else {
			host[id] = true
		}
	}
	ids := make([]int, 0, len(dev))
	for id := range dev {
		if host[id] {
			return fmt.Errorf("memory plan: arena %d holds both host and %s tensors; device tensors need an arena of their own", id, etfb.EnumNamesDeviceType[dev[id]])
		}
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	for _, id := range ids {
		m.plan.NonConstBufferDevice = append(m.plan.NonConstBufferDevice, &etfb.NonConstBufferDeviceT{BufferIdx: int32(id), DeviceType: dev[uint32(id)]})
	}
	return nil
}
