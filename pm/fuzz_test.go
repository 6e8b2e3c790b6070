package pm_test

import (
	"testing"

	"github.com/fxport/fxport/pm"
)

// FuzzParsePipeline checks that pipeline text never panics the parser and
// that whatever parses prints back to text that parses to the same pipeline.
func FuzzParsePipeline(f *testing.F) {
	for _, pl := range []string{
		"onnx: onnx.fx-node-fixes(onnx-node-fixes, dce)",
		"dynamo: dynamo.state-cleanup(drop-unused-weights)",
		"onnx: onnx.fx-node-fixes(onnx-node-fixes{x=1}), onnx.onnx-patches(onnx-node-fixes-after-decompose)",
		"executorch.xnnpack: executorch.fx-node-fixes(executorch-node-fixes)",
		"dynamo:",
		"onnx: onnx.torch-patches(",
	} {
		f.Add(pl)
	}
	f.Fuzz(func(t *testing.T, text string) {
		pl, err := pm.ParsePipeline(text)
		if err != nil {
			return
		}
		printed := pl.String()
		again, err := pm.ParsePipeline(printed)
		if err != nil {
			t.Fatalf("printed pipeline %q does not parse: %v", printed, err)
		}
		if again.String() != printed {
			t.Fatalf("round trip differs: %q vs %q", printed, again.String())
		}
	})
}
