package plan_test

import (
	"fmt"

	"github.com/fxport/fxport/ir"

	"github.com/fxport/fxport/targets/executorch/plan"
)

// checkNoOverlap fails when two values of different storage classes that
// are live at one position (Entry.Live) share bytes, when an offset is misaligned, when a memory
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
			live := liveTogether(a, b)
			mem := a.Offset < b.Offset+b.Size && b.Offset < a.Offset+a.Size
			if live && mem {
				return fmt.Errorf("%s [%d,%d) live [%d,%d] overlaps %s [%d,%d) live [%d,%d]",
					a.Value, a.Offset, a.Offset+a.Size, a.Start, a.End, b.Value, b.Offset, b.Offset+b.Size, b.Start, b.End)
			}
		}
	}
	return nil
}

// liveTogether reports whether two entries' live segments share a position.
func liveTogether(a, b plan.Entry) bool {
	for _, s := range a.Live {
		for _, t := range b.Live {
			if s.Start <= t.End && t.Start <= s.End {
				return true
			}
		}
	}
	return false
}

// checkViewsShareBase checks that every et_view of p is planned exactly
// where the storage it aliases is (res maps a value to that storage: the
// base, through region inputs and views of views).
func checkViewsShareBase(p *ir.Program, pl *plan.Plan, res func(*ir.Value) *ir.Value) error {
	for _, g := range p.Graphs() {
		for _, n := range g.Nodes() {
			if n.Op.String() != "executorch_prim.et_view.default" {
				continue
			}
			v, base := n.Results[0], res(n.Results[0])
			av, ok1 := pl.Lookup(v)
			ab, ok2 := pl.Lookup(base)
			if ok1 != ok2 || av.MemID != ab.MemID || av.Offset != ab.Offset {
				return fmt.Errorf("view %s planned at %v (%v), its storage %s at %v (%v)", v, av, ok1, base, ab, ok2)
			}
		}
	}
	return nil
}
