package pm

import (
	"fmt"
	"strings"
)

// Backend names. A workaround declares the backend it is for; an export
// runs for exactly one concrete backend.
const (
	// BackendAll entries run under every exporter (the dynamo stages).
	BackendAll = "all"
	// BackendONNX entries run for ONNX exports.
	BackendONNX = "onnx"
	// BackendExecuTorch entries run for every ExecuTorch backend.
	BackendExecuTorch = "executorch"
)

// Backends lists every backend name an entry may declare, in a fixed order.
// "executorch.openvino" and "executorch.mlx" come from the catalog's later
// revisions (ET-B06, ET-B07); openvino has its prepare, partitioner and
// writer (targets/executorch/openvino), mlx only its capture step.
var Backends = []string{
	BackendAll, BackendONNX, BackendExecuTorch,
	"executorch.xnnpack", "executorch.cuda", "executorch.portable", "executorch.openvino", "executorch.mlx",
}

// ValidBackend reports whether b is one of Backends.
func ValidBackend(b string) bool {
	for _, x := range Backends {
		if x == b {
			return true
		}
	}
	return false
}

// Applies reports whether an entry declared for backend entry runs in an
// export for backend export: "all" runs everywhere, "executorch" runs for
// every "executorch.*", anything else only for itself.
func Applies(entry, export string) bool {
	return entry == BackendAll || entry == export || strings.HasPrefix(export, entry+".")
}

// appliesAny is Applies over a pass's backend list (empty means "all").
func appliesAny(entries []string, export string) bool {
	if len(entries) == 0 {
		return true
	}
	for _, b := range entries {
		if Applies(b, export) {
			return true
		}
	}
	return false
}

// exportBackends returns, for each target, the backends an export of it may
// name, the first being the default.
func exportBackends(target string) []string {
	switch target {
	case TargetDynamo:
		return []string{BackendAll}
	case TargetONNX:
		return []string{BackendONNX}
	case TargetExecuTorch:
		var out []string
		for _, b := range Backends {
			if strings.HasPrefix(b, BackendExecuTorch+".") {
				out = append(out, b)
			}
		}
		return out
	}
	return nil
}

// ExportBackends lists the backends an export of target may name; the first
// is the default used when NewExport or Build get "".
func ExportBackends(target string) []string { return append([]string(nil), exportBackends(target)...) }

// resolveExport checks a (target, backend) pair and fills in the default backend.
func resolveExport(target, backend string) (string, error) {
	bs := exportBackends(target)
	if bs == nil {
		return "", fmt.Errorf("unknown target %q (targets: %s)", target, strings.Join(Targets(), ", "))
	}
	if backend == "" {
		return bs[0], nil
	}
	for _, b := range bs {
		if b == backend {
			return b, nil
		}
	}
	return "", fmt.Errorf("target %s has no backend %q (backends: %s)", target, backend, strings.Join(bs, ", "))
}

// targetsOf lists the targets in which entries of backend b run.
func targetsOf(b string) []string {
	var out []string
	for _, t := range Targets() {
		for _, eb := range exportBackends(t) {
			if Applies(b, eb) {
				out = append(out, t)
				break
			}
		}
	}
	return out
}
