package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// --opset chooses the default-domain opset of the written model; values
// outside the offered range are refused before anything is written.
func TestExportOpsetFlag(t *testing.T) {
	dir := t.TempDir()
	for _, opset := range []int64{17, 18, 23, 26} {
		out := filepath.Join(dir, "m.onnx")
		if _, stderr, code := fxport(t, "export", example, "--target", "onnx", "--opset", itoa(opset), "-o", out); code != 0 {
			t.Fatalf("--opset %d: exit %d: %s", opset, code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var m pb.ModelProto
		if err := proto.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		if got := m.GetOpsetImport()[0].GetVersion(); got != opset {
			t.Errorf("--opset %d wrote opset %d", opset, got)
		}
	}
	for _, bad := range []string{"16", "27", "x"} {
		out := filepath.Join(dir, "bad"+bad+".onnx")
		_, stderr, code := fxport(t, "export", example, "--target", "onnx", "--opset", bad, "-o", out)
		if code == 0 || (bad != "x" && code != 2) {
			t.Errorf("--opset %s: exit %d: %s", bad, code, stderr)
		}
		if bad != "x" && !strings.Contains(stderr, "choose one from 17 to 26") {
			t.Errorf("--opset %s: %s", bad, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--opset %s wrote %s", bad, out)
		}
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
