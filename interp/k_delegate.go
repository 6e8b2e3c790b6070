package interp

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// A delegate call (the XNNPACK partitioner's executorch_call_delegate) runs
// its region on the operands after the backend id: what the delegate
// computes is what the claimed nodes computed.
func init() {
	register(kCallDelegate, ir.OpHigherOrderExecutorchCallDelegate)
}

func kCallDelegate(c *call) ([]Value, error) {
	if len(c.args) < 2 {
		return nil, fmt.Errorf("executorch_call_delegate: %d arguments, want a region, a backend id and operands", len(c.args))
	}
	g, ok := c.args[0].(*ir.Graph)
	if !ok || g == nil {
		return nil, fmt.Errorf("executorch_call_delegate: first argument is not a region")
	}
	return c.runRegion(g, c.args[2:])
}
