package cuda

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/extcompile"
)

// RegionProgram returns the region of call (a CudaBackend delegate call of
// p's main graph) as a standalone ATen program, the one the AOTInductor
// compile step loads (extcompile.Region): operands that are constant
// placeholders of p become parameters, buffers or lifted constants (with
// p's weights, typed on Device), the other operands user inputs, in that
// order (torch.export's placeholder order); the region's outputs are user
// outputs. Its pytree specs are a flat (args, {}) tuple in and a flat
// tuple out. p is not changed.
func RegionProgram(p *ir.Program, call *ir.Node) (*ir.Program, error) {
	return extcompile.Region(p, call, extcompile.RegionSpec{
		Prefix:   "cuda",
		Backend:  BackendID,
		Packager: "the CUDA packager",
		IsCall:   isCudaCall,
		WeightType: func(t *ir.TensorType) *ir.TensorType {
			return onDevice(t).(*ir.TensorType)
		},
	})
}
