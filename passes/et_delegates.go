package passes

// The delegates register their partitioning passes next to their support
// rules (targets/executorch/cuda: cuda-partition, cuda-device-copies;
// targets/executorch/openvino: openvino-partition;
// targets/executorch/xnnpack: xnnpack-partition). The ExecuTorch pipelines
// name them, so linking the ExecuTorch passes links them.
import (
	_ "github.com/fxport/fxport/targets/executorch/cuda"
	_ "github.com/fxport/fxport/targets/executorch/openvino"
	_ "github.com/fxport/fxport/targets/executorch/xnnpack"
)
