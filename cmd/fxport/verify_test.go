package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/internal/ort"
	"github.com/fxport/fxport/targets/onnx/onnxpb"
	"google.golang.org/protobuf/proto"
)

func TestExportONNXFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.onnx")
	_, errOut, code := fxport(t, "export", example, "--target", "onnx", "-o", out)
	require.Equal(t, 0, code, errOut)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	m := &onnxpb.ModelProto{}
	require.NoError(t, proto.Unmarshal(data, m))
	require.Equal(t, "fxport", m.GetProducerName())
	require.Equal(t, "x", m.GetGraph().GetInput()[0].GetName())
	// --target all writes program.onnx next to the IR outputs.
	stdout, errOut, code := fxport(t, "export", example, "--target", "all", "-o", dir)
	require.Equal(t, 0, code, errOut)
	_, err = os.Stat(filepath.Join(dir, "program.onnx"))
	require.NoError(t, err)
	// The targets that need an external compile step say why they wrote
	// no .pte instead of skipping it silently.
	require.Contains(t, stdout, "executorch-cuda: no .pte written: it needs the external compile step")
	require.Contains(t, stdout, "executorch-openvino: no .pte written")
	_, err = os.Stat(filepath.Join(dir, "program.executorch-cuda.pte"))
	require.True(t, os.IsNotExist(err), "cuda .pte written without a compile step")
}

func TestVerifyExample(t *testing.T) {
	if ok, why := ort.Available(); !ok {
		t.Skipf("ONNX Runtime unavailable: %s", why)
	}
	stdout, errOut, code := fxport(t, "verify", example, "--target", "onnx")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "reference: interpreter")
	require.Contains(t, stdout, "1 outputs match: max error ≤ 1e-05 + 0.0001 × max|expected|")
	_, errOut, code = fxport(t, "verify", example, "--target", "executorch")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "onnx only")
}
