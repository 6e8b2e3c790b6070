package cuda

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/plan"
)

// Arena ids of a CUDA program: host tensors (user inputs and outputs,
// host-node temporaries, the host side of the boundary copies) in the
// planner's arena, device tensors in the next one.
const (
	HostArena   = plan.ArenaID
	DeviceArena = plan.ArenaID + 1
)

// DeviceArenas re-plans p's memory with the host and device tensors in
// arenas of their own (plan.ComputeArenas): every value the recorded plan
// (plan-memory's) placed keeps being planned, host tensors in HostArena,
// tensors typed on Device in DeviceArena, which the emitter lists in
// non_const_buffer_device as CUDA. Each arena is placed on its own, so
// neither keeps holes where the other's tensors were in the joint plan.
// p's recorded plan is replaced; it returns each arena's max-live lower
// bound (index = arena id). A program without device tensors is left
// alone (nil bounds).
func DeviceArenas(p *ir.Program) ([]int64, error) {
	rec, err := plan.Read(p)
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	devices := 0
	for v := range rec.Allocs {
		if t := v.Tensor(); t != nil && t.Device == Device {
			if v.IsInput() {
				return nil, fmt.Errorf("cuda: graph input %s is a device tensor; the CUDA program takes host inputs", v)
			}
			devices++
		}
	}
	if devices == 0 {
		return nil, nil
	}
	pl, bounds, err := plan.ComputeArenas(p, plan.DefaultOptions(), func(v *ir.Value) int {
		if _, ok := rec.Allocs[v]; !ok {
			return 0 // left unplanned by plan-memory's options
		}
		if t := v.Tensor(); t != nil && t.Device == Device {
			return DeviceArena
		}
		return HostArena
	})
	if err != nil {
		return nil, fmt.Errorf("cuda: planning the host and device arenas: %w", err)
	}
	plan.Record(p, pl)
	if _, err := plan.Read(p); err != nil {
		return nil, fmt.Errorf("cuda: planning the host and device arenas: %w", err)
	}
	return bounds, nil
}
