package cuda

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/plan"
)

// DeviceArenas moves the planned tensors of p that are typed on Device out
// of the planner's arenas into one new arena (the last
// non_const_buffer_sizes entry), which the emitter lists in
// non_const_buffer_device as CUDA. Each source arena's device tensors keep
// their offsets relative to a base (the source arenas stacked in id order),
// so two device tensors that the planner kept apart stay apart; host
// tensors keep their places. p's recorded plan (plan.Record's metadata) is
// rewritten; a program without device tensors is left alone.
func DeviceArenas(p *ir.Program) error {
	rec, err := plan.Read(p)
	if err != nil {
		return fmt.Errorf("cuda: %w", err)
	}
	type dv struct {
		v *ir.Value
		a plan.Alloc
	}
	var devs []dv
	for v, a := range rec.Allocs {
		if t := v.Tensor(); t != nil && t.Device == Device {
			if v.IsInput() {
				return fmt.Errorf("cuda: graph input %s is a device tensor; the CUDA program takes host inputs", v)
			}
			devs = append(devs, dv{v, a})
		}
	}
	if len(devs) == 0 {
		return nil
	}
	// Per source arena, the end of its device tensors; bases stack them.
	end := map[int]int64{}
	for _, d := range devs {
		end[d.a.MemID] = max(end[d.a.MemID], d.a.Offset+d.a.Size)
	}
	ids := make([]int, 0, len(end))
	for id := range end {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	base := map[int]int64{}
	var size int64
	for _, id := range ids {
		base[id] = size
		size += (end[id] + 15) / 16 * 16
	}
	newID := len(rec.ArenaSize)
	moved := map[*ir.Value]plan.Alloc{}
	for _, d := range devs {
		moved[d.v] = plan.Alloc{MemID: newID, Offset: base[d.a.MemID] + d.a.Offset, Size: d.a.Size}
	}
	for _, n := range p.Main.Nodes() {
		if _, ok := n.Meta.Get(plan.MetaMem); !ok {
			continue
		}
		parts := make([]string, len(n.Results))
		for i, r := range n.Results {
			a, ok := moved[r]
			if !ok {
				a, ok = rec.Allocs[r]
			}
			if ok {
				parts[i] = a.String()
			} else {
				parts[i] = "-"
			}
		}
		n.Meta.Set(plan.MetaMem, strings.Join(parts, ","))
	}
	ar := make([]string, 0, len(rec.ArenaSize)+1)
	for _, s := range rec.ArenaSize {
		ar = append(ar, strconv.FormatInt(s, 10))
	}
	p.Meta.Set(plan.MetaArenas, strings.Join(append(ar, strconv.FormatInt(size, 10)), ","))
	if _, err := plan.Read(p); err != nil {
		return fmt.Errorf("cuda: moving device tensors to their own arena: %w", err)
	}
	return nil
}
