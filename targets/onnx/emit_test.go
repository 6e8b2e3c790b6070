package onnx

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"

	_ "github.com/fxport/fxport/passes/dynamo"
	_ "github.com/fxport/fxport/passes/onnxfix"
)

func loadExample(t *testing.T) *ir.Program {
	t.Helper()
	src, err := os.ReadFile("../../examples/mlp/program.fxir")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ir.Parse(src, "program.fxir")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func runPipeline(t *testing.T, p *ir.Program) *ir.Program {
	t.Helper()
	pl, err := pm.Build(pm.TargetONNX, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExampleMatchesInterpreterInORT(t *testing.T) {
	needORT(t)
	p := runPipeline(t, loadExample(t))
	for _, opset := range []int{17, 18, 20, 23} {
		m := checkInORT(t, p, opset, 1e-5)
		if got := strings.Join(m.Inputs, ","); got != "x,mask" {
			t.Errorf("inputs %s", got)
		}
	}
}

func TestEmitDeterministicAndMetadata(t *testing.T) {
	p := runPipeline(t, loadExample(t))
	var first []byte
	for i := 0; i < 3; i++ {
		m, err := Emit(p.Clone(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := m.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if !bytes.Equal(first, b) {
			t.Fatal("emission is not byte-identical across runs")
		}
	}
	mp := &pb.ModelProto{}
	if err := proto.Unmarshal(first, mp); err != nil {
		t.Fatal(err)
	}
	if mp.GetIrVersion() != 8 || mp.GetOpsetImport()[0].GetVersion() != 18 {
		t.Errorf("ir %d opset %d, want 8/18", mp.GetIrVersion(), mp.GetOpsetImport()[0].GetVersion())
	}
	// Symbolic batch dim is a dim_param; initializers are named by FQN.
	if d := mp.Graph.Input[0].Type.GetTensorType().Shape.Dim[0]; d.GetDimParam() != "s0" {
		t.Errorf("input dim 0 = %v, want dim_param s0", d)
	}
	var inits []string
	for _, in := range mp.Graph.Initializer {
		inits = append(inits, in.GetName())
	}
	if got := strings.Join(inits, ","); got != "fc1.weight,fc1.bias,fc2.weight,fc2.bias,scale,c_lifted_tensor_0" {
		t.Errorf("initializers %s", got)
	}
	if err := checkMetadata(mp); err != nil {
		t.Error(err)
	}
}

func TestExternalDataWrite(t *testing.T) {
	p := runPipeline(t, loadExample(t))
	m, err := Emit(p, Options{ExternalThreshold: 64})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "m.onnx")
	if err := m.Write(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mp := &pb.ModelProto{}
	if err := proto.Unmarshal(data, mp); err != nil {
		t.Fatal(err)
	}
	side, err := os.ReadFile(path + ".data")
	if err != nil {
		t.Fatal(err)
	}
	ext := 0
	for _, in := range mp.Graph.Initializer {
		if in.GetDataLocation() != pb.TensorProto_EXTERNAL {
			continue
		}
		ext++
		kv := map[string]string{}
		for _, e := range in.ExternalData {
			kv[e.GetKey()] = e.GetValue()
		}
		if kv["location"] != "m.onnx.data" {
			t.Errorf("%s: location %q", in.GetName(), kv["location"])
		}
		var off, n int
		if _, err := fmtSscan(kv["offset"], &off); err != nil || off%4096 != 0 {
			t.Errorf("%s: offset %q not page aligned", in.GetName(), kv["offset"])
		}
		fmtSscan(kv["length"], &n)
		w := p.Weight(in.GetName())
		want, err := weightBytes(w, in.Dims)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(side[off:off+n], want) {
			t.Errorf("%s: external bytes differ", in.GetName())
		}
	}
	if ext != 2 { // fc1.weight (128 B) and fc2.weight (64 B)
		t.Errorf("%d external initializers, want 2", ext)
	}
	// A second write gives the same bytes.
	if err := m.Write(path); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(path)
	if !bytes.Equal(again, data) {
		t.Error("rewrite differs")
	}
}

// failingSource is a weight source whose bytes cannot be read.
type failingSource struct{ size int64 }

func (s failingSource) Open() (io.ReadCloser, error) { return nil, errors.New("disk gone") }
func (s failingSource) Size() int64                  { return s.size }
func (s failingSource) String() string               { return "failing()" }

// TestExternalDataWriteFailureLeavesNothing: a weight that cannot be read
// while the .data file streams leaves neither file (nor a temporary), keeps
// an earlier output untouched, and the model's tensors carry no external
// references afterwards.
func TestExternalDataWriteFailureLeavesNothing(t *testing.T) {
	p := runPipeline(t, loadExample(t))
	m, err := Emit(p, Options{ExternalThreshold: 64})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.weights) == 0 {
		t.Fatal("no external weights")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "m.onnx")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	last := m.weights[len(m.weights)-1]
	broken := *last.w
	broken.Source = failingSource{size: last.w.Source.Size()}
	last.w = &broken
	err = m.Write(path)
	if err == nil || !strings.Contains(err.Error(), "disk gone") || !strings.Contains(err.Error(), "m.onnx.data") {
		t.Fatalf("error %v, want the source's error naming m.onnx.data", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "m.onnx" {
		t.Errorf("directory holds %v, want only the earlier m.onnx", entries)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("earlier output changed to %q", got)
	}
	for _, pw := range m.weights {
		if pw.tensor.ExternalData != nil || pw.tensor.DataLocation != nil {
			t.Errorf("%s keeps external-data fields after the failed write", pw.w.Name)
		}
	}
}
