package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PreparePortable prepares a traced program for the portable kernels: no
// partitioner, everything runs as kernel calls on the CPU.
var PreparePortable = pm.RegisterBackendPrepare(&pm.BackendPrepare{
	Name:    "portable-prepare",
	Backend: "executorch.portable",
	Doc: `prepare a traced program for the portable kernels: CPU, contiguous inputs, no partitioner

The Python system has no portable prepare (its backends are xnnpack and
cuda); fxport's portable export runs every op as a portable kernel call, so
the prepare only checks that no input lives on an accelerator and makes
strided user inputs contiguous (ET-B05). No partitioner is named.`,
	Prepare: preparePortable,
})

func preparePortable(p *ir.Program, c *pm.Ctx) error {
	if err := etRequireHost(p, "executorch.portable", "the portable kernels have no device tensors"); err != nil {
		return err
	}
	return etPrepareInputs(p, c)
}
