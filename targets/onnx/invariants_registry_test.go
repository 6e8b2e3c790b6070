package onnx

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/pm"
)

// Every model-level invariant CheckInvariants runs for a catalog row is
// declared in pm under its ID, naming this package's Invariants in Where
// or in Test, so listings and the checks cannot drift apart.
func TestInvariantsRegistered(t *testing.T) {
	for _, inv := range Invariants {
		if !pm.ValidID(inv.ID) {
			continue // structural checks belong to no catalog row
		}
		regs := pm.Default.Invariants.ByID(inv.ID)
		if len(regs) == 0 {
			t.Errorf("invariant %s (%s) is checked by CheckInvariants but not declared with pm.RegisterInvariant", inv.ID, inv.Name)
			continue
		}
		found := false
		for _, r := range regs {
			if r.Name == "onnx-"+inv.Name {
				found = true
			}
		}
		if !found {
			t.Errorf("invariant %s: pm declares %s, want the name onnx-%s", inv.ID, regs[0].Name, inv.Name)
		}
	}
	for _, r := range pm.Default.Invariants.All() {
		if r.Backend == pm.BackendONNX && !strings.HasPrefix(r.ID, "ONNX-") {
			t.Errorf("ONNX invariant %s has ID %s", r.Name, r.ID)
		}
	}
}
