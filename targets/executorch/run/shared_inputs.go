package run

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
)

// sharedInput is a tensor input bound to an unplanned value. ExecuTorch's
// Method::set_input copies a tensor into a planned input's memory, but
// points an unplanned input (alloc-graph-input=false) at the caller's own
// data, so whatever the method writes there (a user input's write-back
// copy_, exir's insert_write_back_for_buffers_pass) lands in the caller's
// tensor. The runner keeps the bound bytes and, after the method ran,
// copies the value back into the caller's tensor when they changed.
type sharedInput struct {
	input  int // method input index, for errors
	s      *slot
	caller *interp.Tensor
	bound  []byte // the bytes bound, to see whether the method wrote them
}

var opCopyInPlace = ir.OpAtenCopy_

// shareInput records that s, an unplanned tensor value, was bound to the
// caller's t.
func (m *Method) shareInput(i int, s *slot, t *interp.Tensor) {
	if s.planned || s.constant {
		return
	}
	m.shared = append(m.shared, sharedInput{input: i, s: s, caller: t, bound: bytes.Clone(s.mem)})
}

// writeBackShared copies the new contents of every shared input the method
// wrote into the caller's tensor, as the runtime's shared memory would
// have it.
func (m *Method) writeBackShared() error {
	for _, sh := range m.shared {
		if bytes.Equal(sh.s.mem, sh.bound) && slices.Equal(sh.s.shape, sh.caller.Shape) {
			continue
		}
		v, err := sh.s.read()
		if err != nil {
			return fmt.Errorf("input %d: %w", sh.input, err)
		}
		if !slices.Equal(v.Shape, sh.caller.Shape) {
			return fmt.Errorf("input %d: the method resized the caller's tensor from %v to %v", sh.input, sh.caller.Shape, v.Shape)
		}
		if _, err := interp.RunOp(opCopyInPlace, []interp.Value{sh.caller, v}); err != nil {
			return fmt.Errorf("input %d: writing the caller's tensor: %w", sh.input, err)
		}
	}
	return nil
}
