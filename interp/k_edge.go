package interp

import (
	"fmt"
	"github.com/fxport/fxport/ir"
)

// ExecuTorch edge-dialect kernels the lowering passes produce that the
// generic adapters cannot run: the memory planner's allocations and the
// dtype-converting copies whose target dtype only the out tensor carries.

func init() {
	// memory.alloc: the storage of an out variant's out tensor; its bytes are
	// always overwritten by the op that receives it, so zeros are as good as
	// any content.
	register(kConstFill("size", 0), ir.OpMemoryAlloc)
	register(kCastIntoOut, ir.OpAten_ToCopyOut, ir.OpDimOrderOps_ToDimOrderCopyOut)
}

// kCastIntoOut copies self into out, converting to out's dtype (the out
// variants of _to_copy and _to_dim_order_copy have no dtype argument).
func kCastIntoOut(c *call) ([]Value, error) {
	x, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	out, err := c.tensor("out")
	if err != nil {
		return nil, err
	}
	if !sameShape(x.Shape, out.Shape) {
		return nil, fmt.Errorf("out has shape %v, self has %v", out.Shape, x.Shape)
	}
	copyInto(out, x)
	return one(out), nil
}
