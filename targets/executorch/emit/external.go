package emit

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// External data (pte-format.md §7.1). With Options.ExternalConstants the
// emitter does what exir does for ExecutorchBackendConfig(
// external_constants=True): every constant placeholder it would put in the
// constant segment — parameters, buffers that are not mutated, tensor
// constants — except lifted constants (a placeholder or target name
// containing "_lifted_tensor": exir leaves those in the program, "closer to
// code than data") becomes a tensor with no data in the .pte:
// extra_tensor_info {location EXTERNAL, fully_qualified_name = the
// state-dict name (the signature target)} and data_buffer_idx = its index
// among the external buffers (byte-identical constants share one). The
// bytes go to the .ptd as named tensors keyed by that name, with their
// TensorLayout, in placeholder order, 16-aligned (exir's
// constant_tensor_alignment and FlatTensorConfig.segment_alignment).
// Mutable buffers keep their initial state in the mutable-data segment and
// constants baked into a delegate stay the delegate's named data.
//
// With Options.ExternalDelegateData the program's named data (the XNNPACK
// delegates' sha256-keyed weights) moves to the .ptd as well, without a
// layout, after the tensors: exir does this only for constants tagged with
// a delegate_constant_tag (delegate_external_constants_pass), which this
// option applies to every delegated constant. The ExecuTorch runtime merges
// the .ptd's keys with the program's named data when a delegate looks one
// up.

// DefaultExternalTag is the name exir gives the .ptd of external constants
// (`_default_external_constant.ptd`); fxport names the file after the .pte
// instead (the runtime takes the data file as a map and ignores its name).
const DefaultExternalTag = "_default_external_constant"

// PTDOptions are the flat-tensor options of exir's default serializer
// (FlatTensorConfig: tensor and segment alignment 16, identical buffers
// stored once); encode the data ProgramWithData returns with them.
var PTDOptions = pte.PTDOptions{SegmentAlignment: constantAlignment, ShareSegments: true}

// externalConstants collects the constants stored outside the program.
type externalConstants struct {
	entries []pte.NamedTensor
	keys    map[string]bool
	buffers map[[32]byte]uint32 // content → data_buffer_idx
}

func newExternalConstants() *externalConstants {
	return &externalConstants{keys: map[string]bool{}, buffers: map[[32]byte]uint32{}}
}

// isLifted reports a lifted tensor constant, which exir keeps in the
// program even with external constants.
func isLifted(v *ir.Value, spec ir.InputSpec) bool {
	return strings.Contains(v.Name, "_lifted_tensor") || strings.Contains(spec.Target, "_lifted_tensor")
}

// add makes tv an external tensor named fqn holding the bytes of l (whose
// Digest is set); they stay lazy until the .ptd is written.
func (e *externalConstants) add(tv *etfb.TensorT, fqn string, l pte.Lazy) error {
	if fqn == "" {
		return fmt.Errorf("external constant without a name (the signature entry has no target)")
	}
	if e.keys[fqn] {
		return fmt.Errorf("external constant %q: the name is used twice", fqn)
	}
	e.keys[fqn] = true
	key := *l.Digest
	idx, ok := e.buffers[key]
	if !ok {
		idx = uint32(len(e.buffers))
		e.buffers[key] = idx
	}
	info := tv.ExtraTensorInfo
	if info == nil {
		info = &etfb.ExtraTensorInfoT{}
	}
	info.FullyQualifiedName = fqn
	info.Location = etfb.TensorDataLocationEXTERNAL
	tv.ExtraTensorInfo = info
	tv.DataBufferIdx = idx
	e.entries = append(e.entries, pte.NamedTensor{
		Key:        fqn,
		HasLayout:  true,
		ScalarType: tv.ScalarType,
		Sizes:      append([]int32{}, tv.Sizes...),
		DimOrder:   append([]byte{}, tv.DimOrder...),
		Lazy:       &l,
		Alignment:  constantAlignment,
	})
	return nil
}

// Program emits p, which the executorch pipeline lowered and planned, as a
// .pte program. Write the result with pte.Write (pte.Encode for small
// programs: it reads the lazy constants into memory). Errors name the node or
// input they concern. Options that move data out of the program need
// ProgramWithData.
func Program(p *ir.Program, opts Options) (*pte.File, error) {
	f, data, err := ProgramWithData(p, opts)
	if err != nil {
		return nil, err
	}
	if len(data) > 0 {
		return nil, fmt.Errorf("emit: %d entries belong in a .ptd (Options.ExternalConstants / ExternalDelegateData); use ProgramWithData, which returns them", len(data))
	}
	return f, nil
}

// externalizeNamedData moves the program's named data into .ptd entries:
// the segments only named data refer to are removed and every other
// segment reference (constant segment, mutable data, delegate payloads) is
// renumbered.
func externalizeNamedData(prog *etfb.ProgramT, segs []pte.Segment) ([]pte.Segment, []pte.NamedTensor, error) {
	if len(prog.NamedData) == 0 {
		return segs, nil, nil
	}
	var refs []*uint32 // every segment reference that is not named data
	if cs := prog.ConstantSegment; cs != nil {
		refs = append(refs, &cs.SegmentIndex)
	}
	for _, md := range prog.MutableDataSegments {
		refs = append(refs, &md.SegmentIndex)
	}
	for _, plan := range prog.ExecutionPlan {
		for _, d := range plan.Delegates {
			if d.Processed != nil && d.Processed.Location == etfb.DataLocationSEGMENT {
				refs = append(refs, &d.Processed.Index)
			}
		}
	}
	named := map[uint32]bool{}
	var out []pte.NamedTensor
	for _, nd := range prog.NamedData {
		if int(nd.SegmentIndex) >= len(segs) {
			return nil, nil, fmt.Errorf("named data %q: segment %d out of range (%d segments)", nd.Key, nd.SegmentIndex, len(segs))
		}
		named[nd.SegmentIndex] = true
		e, err := namedDataEntry(nd.Key, segs[nd.SegmentIndex])
		if err != nil {
			return nil, nil, err
		}
		out = append(out, e)
	}
	for _, r := range refs {
		if named[*r] {
			return nil, nil, fmt.Errorf("segment %d holds named data and is referenced by the program too", *r)
		}
	}
	renum := make([]uint32, len(segs))
	var kept []pte.Segment
	var table []*etfb.DataSegmentT
	for i, s := range segs {
		if named[uint32(i)] {
			continue
		}
		renum[i] = uint32(len(kept))
		kept = append(kept, s)
		table = append(table, &etfb.DataSegmentT{Offset: s.Offset, Size: s.Size})
	}
	for _, r := range refs {
		*r = renum[*r]
	}
	prog.Segments = table
	prog.NamedData = []*etfb.NamedDataT{}
	return kept, out, nil
}
