package openvino

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// Package emits p — the output of the executorch.openvino pipeline,
// lowered and memory-planned — as a .pte program whose OpenvinoBackend
// delegate calls carry the compiled models in processed (call → bytes):
// each becomes a BackendDelegate "OpenvinoBackend" whose processed bytes are
// a segment and whose compile spec device is the call's metadata
// compile_spec.device (Device when unset), and one DelegateCall whose
// arguments are the call's runtime inputs then its outputs
// (emit.Program). The result is checked with CheckCompileSpecs. p is not
// changed.
func Package(p *ir.Program, processed map[*ir.Node][]byte) (*pte.File, error) {
	f, err := emit.Program(p, emit.Options{OpenVINO: func(n *ir.Node) (*emit.OpenVINOPayload, error) {
		b, ok := processed[n]
		if !ok {
			return nil, fmt.Errorf("no compiled model for %s", n.Short())
		}
		dev, ok := n.Meta.Get(MetaDevice)
		if !ok {
			dev = Device
		}
		return &emit.OpenVINOPayload{Processed: b, Device: dev}, nil
	}})
	if err != nil {
		return nil, fmt.Errorf("openvino: %w", err)
	}
	if err := CheckCompileSpecs(f); err != nil {
		return nil, err
	}
	return f, nil
}

// CheckCompileSpecs checks the ET-B06 invariant on an emitted (or read)
// program: every OpenvinoBackend delegate of every method carries exactly
// one compile spec, device = Device ("CPU"), as
// OpenvinoPartitioner([CompileSpec("device", b"CPU")]) writes it, and its
// processed bytes are a non-empty segment.
func CheckCompileSpecs(f *pte.File) error {
	if f == nil || f.Program == nil {
		return fmt.Errorf("openvino: no program")
	}
	for _, m := range f.Program.ExecutionPlan {
		for i, d := range m.Delegates {
			if d.Id != BackendID {
				continue
			}
			where := fmt.Sprintf("openvino: method %s, delegate %d (%s)", m.Name, i, d.Id)
			if len(d.CompileSpecs) != 1 || d.CompileSpecs[0].Key != "device" || string(d.CompileSpecs[0].Value) != Device {
				return fmt.Errorf("%s: compile specs %s, want exactly device = %q (ET-B06)", where, specString(d.CompileSpecs), Device)
			}
			if d.Processed == nil || d.Processed.Location != etfb.DataLocationSEGMENT {
				return fmt.Errorf("%s: processed bytes are not a segment", where)
			}
			if si := int(d.Processed.Index); si >= len(f.Program.Segments) || f.Program.Segments[si].Size == 0 {
				return fmt.Errorf("%s: processed segment %d is missing or empty", where, si)
			}
		}
	}
	return nil
}

func specString(cs []*etfb.CompileSpecT) string {
	s := "["
	for i, c := range cs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%q = %q", c.Key, c.Value)
	}
	return s + "]"
}
