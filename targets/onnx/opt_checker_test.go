package onnx

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/internal/ort"
	"github.com/fxport/fxport/internal/testenv"
)

const onnxcheckDir = "../../tools/onnxcheck"

// judgeCase is one model for tools/onnxcheck/check.py: the full onnx.checker,
// then (with Outputs) ONNX Runtime from Python against torch's outputs.
type judgeCase struct {
	Name    string   `json:"name"`
	Model   string   `json:"model"`
	Inputs  []string `json:"inputs,omitempty"`
	Outputs []string `json:"outputs,omitempty"`
	RTol    float64  `json:"rtol,omitempty"`
	// Random maps output indices drawn by a random op to their value
	// bounds (nil: any finite value); only their shape and dtype must match.
	Random map[string]*[2]float64 `json:"random,omitempty"`
}

// judge runs every case in one Python process of the project's venv and
// returns each case's verdict line ("ok …" or "FAIL …") by name.
func judge(t *testing.T, cases []judgeCase) map[string]string {
	t.Helper()
	py := testenv.Python(t)
	manifest := filepath.Join(t.TempDir(), "cases.json")
	data, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, filepath.Join(onnxcheckDir, "check.py"), "--manifest", manifest).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		testenv.Missing(t, "onnx and onnxruntime in the venv ("+strings.TrimSpace(string(ee.Stderr))+")", "make venv")
	}
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		stderr := ""
		if ee != nil {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("check.py: %v\n%s%s", err, out, stderr)
	}
	verdicts := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		var name string
		switch {
		case strings.HasPrefix(line, "ok "):
			name = strings.SplitN(strings.TrimPrefix(line, "ok "), ":", 2)[0]
		case strings.HasPrefix(line, "FAIL "):
			name = strings.SplitN(strings.TrimPrefix(line, "FAIL "), ":", 2)[0]
		default:
			continue
		}
		verdicts[name] = line
	}
	for _, c := range cases {
		if _, ok := verdicts[c.Name]; !ok {
			t.Errorf("%s: no verdict from check.py:\n%s", c.Name, out)
		}
	}
	return verdicts
}

// ioCase names a fixture's io/input_<i>.npy and io/output_<i>.npy.
func ioCase(name, model, ioDir string, nIn, nOut int) judgeCase {
	c := judgeCase{Name: name, Model: model}
	for i := 0; i < nIn; i++ {
		c.Inputs = append(c.Inputs, filepath.Join(ioDir, fmt.Sprintf("input_%d.npy", i)))
	}
	for i := 0; i < nOut; i++ {
		c.Outputs = append(c.Outputs, filepath.Join(ioDir, fmt.Sprintf("output_%d.npy", i)))
	}
	return c
}

// TestCorpusGenuineJudges writes every corpus program at every offered
// opset, optimized, and has the venv's onnx.checker (full check) and ONNX
// Runtime (Python, CPU) judge each file against torch's eager outputs
// (io/output_<i>.npy; fp32 rule max|got−exp| ≤ 1e-4·max|exp|).
func TestCorpusGenuineJudges(t *testing.T) {
	testenv.Python(t)
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		testenv.Missing(t, "tests/corpus", "make fixtures")
	}
	tmp := t.TempDir()
	var cases []judgeCase
	programs := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(corpusDir, e.Name())
		p, err := pt2.Read(filepath.Join(dir, "program.pt2"))
		if err != nil {
			t.Errorf("%s: the frontend cannot read it: %v", e.Name(), err)
			continue
		}
		runPipeline(t, p)
		programs++
		for _, opset := range Opsets() {
			name := fmt.Sprintf("%s@%d", e.Name(), opset)
			m, err := Emit(p.Clone(), Options{Opset: opset, ExternalThreshold: 64 << 10})
			if err != nil {
				t.Errorf("%s: emit: %v", name, err)
				continue
			}
			path := filepath.Join(tmp, e.Name()+"_"+fmt.Sprint(opset), "model.onnx")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := m.Write(path); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			cases = append(cases, ioCase(name, path, filepath.Join(dir, "io"), len(m.Inputs), len(m.Outputs)))
		}
	}
	if programs == 0 {
		t.Fatal("no corpus program could be read")
	}
	verdicts := judge(t, cases)
	passed := 0
	for _, c := range cases {
		v := verdicts[c.Name]
		if strings.HasPrefix(v, "ok ") {
			passed++
			t.Log(v)
		} else if v != "" {
			t.Error(v)
		}
	}
	t.Logf("%d of %d corpus models (%d programs × opsets %d–%d) pass onnx.checker and ONNX Runtime", passed, len(cases), programs, MinSupportedOpset, MaxSupportedOpset)
}

// TestOnnxCheckerCatchesBrokenModel makes sure the judges can fail: a model
// whose node reads an undefined value is rejected by the checker, and a
// model whose outputs differ from the expected ones is rejected by the
// comparison.
func TestOnnxCheckerCatchesBrokenModel(t *testing.T) {
	testenv.Python(t)
	p := runPipeline(t, loadExample(t))
	m, err := Emit(p, Options{Opset: 17})
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(t.TempDir(), "good.onnx")
	if err := m.Write(good); err != nil {
		t.Fatal(err)
	}
	m2 := m
	m, err = Emit(p, Options{Opset: 17})
	if err != nil {
		t.Fatal(err)
	}
	m.Proto.Graph.Node[len(m.Proto.Graph.Node)-1].Input[0] = "no_such_value"
	data, err := marshal(m.Proto)
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "broken.onnx")
	if err := os.WriteFile(broken, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The example's inputs, its outputs from ONNX Runtime (Go), and the same
	// outputs with one element changed: the right ones pass, the wrong fail.
	dir := t.TempDir()
	var ins []ort.Tensor
	var inPaths []string
	for i, v := range randInputs(t, p, 1) {
		x := toORT(t, v)
		ins = append(ins, x)
		path := filepath.Join(dir, fmt.Sprintf("input_%d.npy", i))
		writeNPY(t, path, x)
		inPaths = append(inPaths, path)
	}
	if ok, _ := ort.Available(); !ok {
		testenv.Missing(t, "ONNX Runtime for Go", "make ort")
	}
	got, err := m2.RunORT(ins)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Type != ort.TypeFloat || len(got[0].Data) < 4 {
		t.Fatalf("example output 0 is not a float tensor: type %d", got[0].Type)
	}
	right := filepath.Join(dir, "right.npy")
	writeNPY(t, right, got[0])
	bad := got[0]
	bad.Data = append([]byte(nil), bad.Data...)
	f := math.Float32frombits(binary.LittleEndian.Uint32(bad.Data))
	binary.LittleEndian.PutUint32(bad.Data, math.Float32bits(f+1))
	wrong := filepath.Join(dir, "wrong.npy")
	writeNPY(t, wrong, bad)
	v := judge(t, []judgeCase{
		{Name: "broken", Model: broken},
		{Name: "right", Model: good, Inputs: inPaths, Outputs: []string{right}},
		{Name: "wrong", Model: good, Inputs: inPaths, Outputs: []string{wrong}},
	})
	if !strings.HasPrefix(v["broken"], "FAIL broken: onnx.checker") {
		t.Errorf("checker accepted a broken model: %q", v["broken"])
	}
	if !strings.HasPrefix(v["right"], "ok right") {
		t.Errorf("the right outputs were refused: %q", v["right"])
	}
	if !strings.HasPrefix(v["wrong"], "FAIL wrong: output 0") {
		t.Errorf("comparison accepted wrong outputs: %q", v["wrong"])
	}
}

// writeNPY writes x as a NumPy .npy file (format 1.0, little-endian).
func writeNPY(t *testing.T, path string, x ort.Tensor) {
	t.Helper()
	descr := map[int32]string{ort.TypeFloat: "<f4", ort.TypeDouble: "<f8", ort.TypeFloat16: "<f2", ort.TypeInt64: "<i8",
		ort.TypeInt32: "<i4", ort.TypeInt16: "<i2", ort.TypeInt8: "|i1", ort.TypeUint8: "|u1", ort.TypeBool: "|b1"}[x.Type]
	if descr == "" {
		t.Fatalf("writeNPY: element type %d", x.Type)
	}
	var dims []string
	for _, d := range x.Shape {
		dims = append(dims, fmt.Sprint(d))
	}
	shape := strings.Join(dims, ", ")
	if len(dims) == 1 {
		shape += ","
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape)
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	var buf bytes.Buffer
	buf.WriteString("\x93NUMPY\x01\x00")
	_ = binary.Write(&buf, binary.LittleEndian, uint16(len(h)))
	buf.WriteString(h)
	buf.Write(x.Data)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
