package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/plan"
)

// PlanMemory runs the ExecuTorch memory planner and records the plan in
// the IR (exir's MemoryPlanningPass; ET-L03, ET-P10 invariants).
var PlanMemory = etlLowering(&pm.Pass{
	Name: etlPlanMemoryName,
	ID:   "ET-L03",
	Doc: `plan tensor memory: exir's greedy placement or a smaller one, upper-bound sizes, 16-byte alignment, memory id 1

Runs targets/executorch/plan on the main graph and its cond, while_loop,
scan and map_impl regions and records the result:
each node gets metadata mem = "1:<offset>:<size>" per planned result, the
program gets executorch.mem.inputs (planned graph inputs),
executorch.mem.arenas (non_const_buffer_sizes, "0,<bytes>": memory ids are
1-based) and executorch.mem.lower_bound. Sizes are at the upper bounds of
the dims' symbols; a dim without one is an error naming the value and the
symbol (run widen-symbol-ranges, ET-PF01, or export with Dim(min, max)).
The planner never invents a bound (ET-P10). A graph that calls an XNNPACK
delegate gets 64 bytes after its planned tensors (exir's extra_padding).
The statistics "planned-bytes"
and "lower-bound-bytes" and one program-level firing report the arena
against the max-live lower bound.

Options alloc-graph-input, alloc-graph-output and alloc-mutable-buffers are
exir's to_executorch memory-planning flags (ET-L03), all true by default;
with alloc-graph-output=false the runner binds outputs itself (set_output).`,
	Options: []pm.OptionSpec{
		pm.BoolOption("alloc-graph-input", true, "plan user inputs (false: bound at run time)"),
		pm.BoolOption("alloc-graph-output", true, "plan user outputs (false: the runner binds them with set_output)"),
		pm.BoolOption("alloc-mutable-buffers", true, "plan mutated buffers"),
	},
	Run: runPlanMemory,
})

const etlPlanMemoryName = "plan-memory"

func runPlanMemory(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	opt := plan.DefaultOptions()
	opt.AllocGraphInput = c.BoolOption("alloc-graph-input")
	opt.AllocGraphOutput = c.BoolOption("alloc-graph-output")
	opt.AllocMutableBuffers = c.BoolOption("alloc-mutable-buffers")
	pl, err := plan.Compute(p, opt)
	if err != nil {
		return pm.Result{}, err
	}
	changed := plan.Record(p, pl)
	c.Stat("planned-bytes", pl.Planned())
	c.Stat("lower-bound-bytes", pl.MaxLiveLowerBound)
	c.Stat("planned-values", int64(len(pl.Values)))
	c.Fired(nil, pl.Report())
	return pm.Result{Changed: changed}, nil
}
