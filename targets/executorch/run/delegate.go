package run

import (
	"fmt"

	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// delegateCall runs a DelegateCall; only the XNNPACK delegate is known.
func (m *Method) delegateCall(d *etfb.DelegateCallT) error {
	if d.DelegateIndex < 0 || int(d.DelegateIndex) >= len(m.dels) {
		return fmt.Errorf("DelegateCall: delegate_index %d out of range (%d delegates)", d.DelegateIndex, len(m.dels))
	}
	del := m.dels[d.DelegateIndex]
	if del.ID != pte.XNNPACKBackendID || del.XNNPACK == nil {
		return fmt.Errorf("DelegateCall: backend %q is not supported (only %s)", del.ID, pte.XNNPACKBackendID)
	}
	if err := m.runXNN(del.XNNPACK, d.Args); err != nil {
		return fmt.Errorf("DelegateCall %d (%s): %w", d.DelegateIndex, del.ID, err)
	}
	return nil
}
