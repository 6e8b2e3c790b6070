package emit

import (
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// OpenVINO delegates (catalog ET-B06): a higher_order.executorch_call_delegate
// node whose backend argument is "OpenvinoBackend" (made by the
// openvino-partition pass) becomes a BackendDelegate whose processed bytes
// (the compiled model OpenVINO exported) are a segment, with the compile
// spec device, and one DelegateCall whose arguments are the runtime inputs
// of the call (constant placeholders excluded: the compiled model holds
// them), then its results — the order OpenVINO's runtime binds them in
// (compiled-model inputs, then outputs). The payload comes from
// Options.OpenVINO (targets/executorch/openvino builds it).

// OpenVINOBackendID is the delegate id of ExecuTorch's OpenVINO backend.
const OpenVINOBackendID = "OpenvinoBackend"

// OpenVINOPayload is the compiled form of one OpenvinoBackend delegate call.
type OpenVINOPayload struct {
	// Processed is the exported compiled model (stored as a segment).
	Processed []byte
	// Device is the compile spec device ("CPU").
	Device string
}

// isOpenVINODelegate reports an OpenvinoBackend delegate call.
func isOpenVINODelegate(n *ir.Node) bool {
	return len(n.Args) > 1 && n.Args[1].Kind == ir.ArgString && n.Args[1].Str == OpenVINOBackendID
}

// emitOpenVINODelegate emits an OpenvinoBackend delegate call.
func (m *method) emitOpenVINODelegate(n *ir.Node) error {
	if m.opts.OpenVINO == nil {
		return n.Errorf("OpenvinoBackend delegate call: the emitter needs its compiled partition (Options.OpenVINO); write OpenVINO programs with targets/executorch/openvino.Write")
	}
	pay, err := m.opts.OpenVINO(n)
	if err != nil {
		return n.Errorf("OpenvinoBackend delegate call: %v", err)
	}
	if len(pay.Processed) == 0 {
		return n.Errorf("OpenvinoBackend delegate call: empty compiled model")
	}
	var args []int32
	for i, a := range n.Args[2:] {
		if a.Kind != ir.ArgValue {
			return n.Errorf("OpenvinoBackend delegate operand %d is not a value", i)
		}
		if _, ok := m.constantSpec(a.Value); ok {
			continue // inside the compiled model
		}
		if a.Value.Tensor() == nil {
			return n.Errorf("OpenvinoBackend delegate operand %s is %s, not a tensor (the OpenVINO runtime binds tensors only)", a.Value, a.Value.Type)
		}
		idx, err := m.operand(a.Value)
		if err != nil {
			return n.Errorf("delegate argument: %v", err)
		}
		args = append(args, idx)
	}
	for i, r := range n.Results {
		if r.Tensor() == nil {
			return n.Errorf("OpenvinoBackend delegate result %s is %s, not a tensor", r, r.Type)
		}
		idx, err := m.emitResult(r)
		if err != nil {
			return n.Errorf("result %d: %v", i, err)
		}
		args = append(args, idx)
	}
	m.addSegmentDelegate(OpenVINOBackendID, []*etfb.CompileSpecT{{Key: "device", Value: []byte(pay.Device)}}, pay.Processed, args)
	return nil
}
