package plan_test

import (
	"fmt"

	"github.com/fxport/fxport/targets/executorch/plan"
)

// checkNoOverlap fails when two values of different storage classes whose
// lifetimes overlap share bytes, when an offset is misaligned, when a memory
// id is not 1 or a value runs past the arena.
func checkNoOverlap(pl *plan.Plan) error {
	for i, a := range pl.Values {
		if a.MemID != 1 {
			return fmt.Errorf("%s: memory id %d, want 1", a.Value, a.MemID)
		}
		if a.Offset%16 != 0 {
			return fmt.Errorf("%s: offset %d not 16-byte aligned", a.Value, a.Offset)
		}
		if a.Offset+a.Size > pl.Planned() {
			return fmt.Errorf("%s: [%d, %d) past the arena of %d bytes", a.Value, a.Offset, a.Offset+a.Size, pl.Planned())
		}
		for _, b := range pl.Values[i+1:] {
			if a.Class == b.Class || a.Size == 0 || b.Size == 0 {
				continue
			}
			live := a.Start <= b.End && b.Start <= a.End
			mem := a.Offset < b.Offset+b.Size && b.Offset < a.Offset+a.Size
			if live && mem {
				return fmt.Errorf("%s [%d,%d) live [%d,%d] overlaps %s [%d,%d) live [%d,%d]",
					a.Value, a.Offset, a.Offset+a.Size, a.Start, a.End, b.Value, b.Offset, b.Offset+b.Size, b.Start, b.End)
			}
		}
	}
	return nil
}
