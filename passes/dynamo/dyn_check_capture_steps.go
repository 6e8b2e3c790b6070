package dynamo

import (
	"encoding/json"
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// MetaCaptureSteps is the program metadata key where the capture shim
// lists the catalog IDs of the capture steps it applied, as a JSON array of
// strings (["DYN-S01", "DYN-S08", "DYN-P05"]).
const MetaCaptureSteps = "export.capture_steps"

// CheckCaptureSteps reports the capture steps the shim applied and rejects
// programs that still show a pattern a missing step would have removed.
var CheckCaptureSteps = pm.RegisterPass(&pm.Pass{
	Name:  "check-capture-steps",
	Kind:  pm.KindAnalysis,
	Stage: pm.StageSignature,
	Doc: `report the capture steps applied before tracing and reject what a missing one leaves behind

Capture-only workarounds (the declared capture steps, DYN-S01–S09 and
DYN-P01–P07) act on the model before torch.export runs; fxport cannot redo
them. The capture shim lists the IDs it applied in the program metadata
export.capture_steps (a JSON array of strings); this pass checks that each is
a declared capture step and reports it. Then, for each step that is not
listed and whose absence is visible in the traced graph, it looks for the
pattern and fails naming the node (or input) and the step: a loss output or
a labels / future_values / output-flag input (DYN-S01), a lifted tensor
named like a stateful cache attribute (DYN-S06), an unrolled per-segment
attention loop split → attention per segment → cat along the sequence axis
(DYN-P04), and the CPU flash SDPA kernel on a dynamic batch (DYN-P05).
It only checks: --disable check-capture-steps exports such a program anyway.`,
	Run: runCheckCaptureSteps,
})

func runCheckCaptureSteps(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	applied, err := appliedCaptureSteps(p, c.Export().Catalog())
	if err != nil {
		return pm.Result{}, err
	}
	for _, id := range applied.order {
		for _, s := range c.Export().Catalog().Captures.ByID(id) {
			c.Fired(nil, fmt.Sprintf("capture step %s (%s) applied before tracing", id, s.Name))
		}
	}
	for _, d := range captureDetectors {
		if applied.has[d.step] {
			c.Debugf(nil, "%s applied: not looking for its pattern", d.step)
			continue
		}
		if err := d.find(p); err != nil {
			return pm.Result{}, fmt.Errorf("capture step %s (%s) was not applied: %w", d.step, captureStepName(c, d.step), err)
		}
	}
	return pm.Result{}, nil
}

// appliedSteps is the shim's list, in its order, deduplicated.
type appliedSteps struct {
	order []string
	has   map[string]bool
}

// appliedCaptureSteps reads MetaCaptureSteps; every ID must name a capture
// step declared in the catalog.
func appliedCaptureSteps(p *ir.Program, cat *pm.Catalog) (appliedSteps, error) {
	out := appliedSteps{has: map[string]bool{}}
	text, ok := p.Meta.Get(MetaCaptureSteps)
	if !ok {
		return out, nil
	}
	var ids []string
	if err := json.Unmarshal([]byte(text), &ids); err != nil {
		return out, fmt.Errorf("meta %q: want a JSON array of capture step IDs: %v", MetaCaptureSteps, err)
	}
	for i, id := range ids {
		if len(cat.Captures.ByID(id)) == 0 {
			return out, fmt.Errorf("meta %q: entry %d %q is not a declared capture step", MetaCaptureSteps, i, id)
		}
		if !out.has[id] {
			out.has[id] = true
			out.order = append(out.order, id)
		}
	}
	return out, nil
}

func captureStepName(c *pm.Ctx, id string) string {
	if s := c.Export().Catalog().Captures.ByID(id); len(s) > 0 {
		return s[0].Name
	}
	return "undeclared"
}
