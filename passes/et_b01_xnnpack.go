package passes

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PrepareXNNPACK checks and prepares a traced program for the XNNPACK
// backend and names its partitioner (ET-B01, ET-B02).
var PrepareXNNPACK = pm.RegisterBackendPrepare(&pm.BackendPrepare{
	ID:      "ET-B01",
	Name:    "xnnpack-prepare",
	Backend: "executorch.xnnpack",
	Doc: `prepare a traced program for XNNPACK: CPU, dtype unchanged, contiguous inputs, batched experts

The Python prepare_for_xnnpack freezes the model, moves it to the CPU, keeps
its dtype and switches mixture-of-experts layers to the batched_mm
implementation before tracing (capture step prepare-for-xnnpack). After
tracing fxport checks what is visible in the graph and brings the rest to
the same form:

- inputs on an accelerator are an error (trace on the CPU);
- dtypes are left as traced;
- strided user inputs become contiguous (ET-B05) and the graph is
  re-inferred;
- aten._grouped_mm and transformers.grouped_mm_fallback (the grouped
  experts implementation, which neither XNNPACK nor the portable library
  has a kernel for) are an error naming every such node and pointing at
  ET-B01 (fxport capture traces batched_mm experts).

Partitioner: XnnpackPartitioner with all configurations (ET-B02).`,
	Prepare:      prepareXNNPACK,
	Partitioners: []string{"XnnpackPartitioner"},
})

var (
	etOpGroupedMM         = ir.OpAten_GroupedMm
	etOpGroupedMMFallback = ir.OpTransformersGroupedMmFallback
)

func prepareXNNPACK(p *ir.Program, c *pm.Ctx) error {
	if err := etRequireHost(p, "executorch.xnnpack", "capture step prepare-for-xnnpack, ET-B01"); err != nil {
		return err
	}
	var grouped []string
	for _, g := range p.Graphs() {
		for _, n := range g.Nodes() {
			if n.Op == etOpGroupedMM || n.Op == etOpGroupedMMFallback {
				grouped = append(grouped, fmt.Sprintf("%s in graph %s", n.Short(), g.Name))
			}
		}
	}
	if len(grouped) > 0 {
		return fmt.Errorf("executorch.xnnpack has no _grouped_mm kernel, found %s; trace the model with the batched_mm experts implementation (set_experts_implementation(\"batched_mm\"), capture step prepare-for-xnnpack, ET-B01)",
			strings.Join(grouped, ", "))
	}
	return etPrepareInputs(p, c)
}
