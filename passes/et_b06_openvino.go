package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PrepareOpenVINO prepares a traced program for the OpenVINO backend and
// names its partitioner (ET-B06).
var PrepareOpenVINO = pm.RegisterBackendPrepare(&pm.BackendPrepare{
	ID:      "ET-B06",
	Name:    "openvino-prepare",
	Backend: "executorch.openvino",
	Doc: `prepare a traced program for OpenVINO: CPU, dtype unchanged, contiguous inputs

The Python prepare_for_openvino (revision D) moves the model to the CPU and
keeps its dtype before tracing. After tracing fxport checks what is visible
in the graph and brings the rest to the same form:

- inputs or weights on an accelerator are an error (trace on the CPU);
- dtypes are left as traced;
- strided user inputs become contiguous (ET-B05) and the graph is
  re-inferred.

Partitioner: OpenvinoPartitioner with the compile spec device = CPU
(openvino-partition; the emitted delegates are checked for exactly that
spec, invariant et-openvino-prepare).`,
	Prepare:      prepareOpenVINO,
	Partitioners: []string{"OpenvinoPartitioner"},
})

func prepareOpenVINO(p *ir.Program, c *pm.Ctx) error {
	if err := etRequireHost(p, "executorch.openvino", "prepare_for_openvino moves the model to the CPU, ET-B06"); err != nil {
		return err
	}
	return etPrepareInputs(p, c)
}
