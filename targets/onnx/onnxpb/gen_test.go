package onnxpb

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedFresh regenerates onnx.pb.go into a temporary directory and
// compares it with the committed file, ignoring the line that records the
// protoc version. It skips when protoc or protoc-gen-go is not installed.
func TestGeneratedFresh(t *testing.T) {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc not installed (apt-get install protobuf-compiler)")
	}
	if _, err := exec.LookPath("protoc-gen-go"); err != nil {
		t.Skip("protoc-gen-go not on PATH (go install google.golang.org/protobuf/cmd/protoc-gen-go)")
	}
	dir := t.TempDir()
	cmd := exec.Command(protoc, "--go_out="+dir, "--go_opt=paths=source_relative", "onnx.proto")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "onnx.pb.go"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("onnx.pb.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stripVersions(got), stripVersions(want)) {
		t.Fatal("onnx.pb.go is stale: run go generate ./targets/onnx/onnxpb")
	}
}

func stripVersions(b []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if bytes.HasPrefix(l, []byte("// \tprotoc ")) || bytes.HasPrefix(l, []byte("// \tprotoc-gen-go ")) {
			continue
		}
		out = append(out, l)
	}
	return bytes.Join(out, []byte("\n"))
}
