package pte

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/google/go-cmp/cmp"

	bpfb "github.com/fxport/fxport/targets/executorch/fb/bundled_program_flatbuffer"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

const genuineBundled = "et_bundled_program_mul_add.bpte"

// readGenuineBundled returns the genuine .bpte's bytes, its decoding and the
// embedded program's bytes.
func readGenuineBundled(t *testing.T) ([]byte, *File, []byte) {
	t.Helper()
	path := filepath.Join(genuineDir(t), genuineBundled)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Decode(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return data, f, bpfb.GetRootAsBundledProgram(data, 0).ProgramBytes()
}

// offsetIn is the offset of sub, a slice of data, inside data.
func offsetIn(data, sub []byte) int { return cap(data) - cap(sub) }

// The genuine bundled program decodes field by field: version 2, the
// 1696-byte embedded program, one suite for forward with ten identical
// cases: two int32[2,2] zero tensors in, a·0 + b + 0 = [2,2,2,2] out.
func TestBundledGenuineFields(t *testing.T) {
	_, f, prog := readGenuineBundled(t)
	b := f.Bundled
	if b == nil || b.Version != 2 || b.ProgramSize != 1696 || f.Size != 4608 || len(prog) != 1696 {
		t.Fatalf("bundled %+v, file size %d", b, f.Size)
	}
	if len(b.TestSuites) != 1 || b.TestSuites[0].Method != "forward" || len(b.TestSuites[0].Cases) != 10 {
		t.Fatalf("suites %+v", b.TestSuites)
	}
	intTensor := func(vals ...int32) BundledValue {
		var data []byte
		for _, v := range vals {
			data = append(data, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
		}
		return BundledValue{Kind: BundledTensor, Tensor: &BundledTensorData{
			ScalarType: etfb.ScalarTypeINT, Sizes: []int32{2, 2}, DimOrder: []uint8{0, 1}, Data: data}}
	}
	want := BundledCase{
		Inputs:          []BundledValue{intTensor(0, 0, 0, 0), intTensor(0, 0, 0, 0)},
		ExpectedOutputs: []BundledValue{intTensor(2, 2, 2, 2)},
	}
	for ci, c := range b.TestSuites[0].Cases {
		if d := cmp.Diff(want, c); d != "" {
			t.Errorf("case %d (-want +got):\n%s", ci, d)
		}
	}
	out := b.TestSuites[0].Cases[0].ExpectedOutputs[0]
	if v, txt, ok := out.Tensor.Element(3); !ok || v != 2 || txt != "2" {
		t.Errorf("element 3 = %v %q %v", v, txt, ok)
	}
	if s := out.String(); s != "Tensor int[2,2] dim_order [0,1] [2 2 2 2]" {
		t.Errorf("String() = %q", s)
	}
}

// Re-encoding the genuine suites around the genuine program gives a file
// that decodes to the same suites with the program bytes unchanged, the
// program 32-aligned and every tensor's data 16-aligned; the encoding is
// deterministic and flatc decodes it with the bundled program schema.
func TestEncodeBundledRoundTrip(t *testing.T) {
	_, f, prog := readGenuineBundled(t)
	b, err := EncodeBundled(prog, f.Bundled.TestSuites)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := EncodeBundled(prog, f.Bundled.TestSuites)
	if err != nil || !bytes.Equal(b, b2) {
		t.Fatalf("not deterministic (err %v)", err)
	}
	g, err := Decode("written.bpte", b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(f.Bundled.TestSuites, g.Bundled.TestSuites); d != "" {
		t.Fatalf("suites differ (-genuine +written):\n%s", d)
	}
	if g.Bundled.Version != BundledVersion || g.Bundled.ProgramSize != len(prog) || g.Size != len(b) {
		t.Errorf("written bundled %+v, size %d", g.Bundled, g.Size)
	}
	root := bpfb.GetRootAsBundledProgram(b, 0)
	embedded := root.ProgramBytes()
	if !bytes.Equal(embedded, prog) {
		t.Fatal("embedded program bytes changed")
	}
	if off := offsetIn(b, embedded); off%bundledProgramAlignment != 0 {
		t.Errorf("program at offset %d, not %d-aligned", off, bundledProgramAlignment)
	}
	var suite bpfb.BundledMethodTestSuite
	var tc bpfb.BundledMethodTestCase
	var v bpfb.Value
	root.MethodTestSuites(&suite, 0)
	for ci := 0; ci < suite.TestCasesLength(); ci++ {
		suite.TestCases(&tc, ci)
		for i := 0; i < tc.InputsLength(); i++ {
			tc.Inputs(&v, i)
			var tab flatbuffers.Table
			if !v.Val(&tab) {
				t.Fatal("no value table")
			}
			var x bpfb.Tensor
			x.Init(tab.Bytes, tab.Pos)
			if off := offsetIn(b, x.DataBytes()); off%bundledTensorAlignment != 0 {
				t.Errorf("case %d input %d: data at %d, not %d-aligned", ci, i, off, bundledTensorAlignment)
			}
		}
	}
	// The genuine file was written by flatc; ours decodes with it too, to
	// the same JSON apart from the layout.
	genuineJSON := flatcJSON(t, filepath.Join(genuineDir(t), genuineBundled))
	oursPath := filepath.Join(t.TempDir(), "ours.bpte")
	if err := os.WriteFile(oursPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	oursJSON := flatcJSON(t, oursPath)
	if d := cmp.Diff(genuineJSON, oursJSON); d != "" {
		t.Errorf("flatc decodes the genuine and the written file differently (-genuine +written):\n%s", d)
	}
}

// flatcJSON decodes a .bpte with flatc and the bundled program schema.
func flatcJSON(t *testing.T, path string) any {
	t.Helper()
	flatc, err := exec.LookPath("flatc")
	if err != nil {
		t.Skip("flatc not installed (Debian: flatbuffers-compiler)")
	}
	schemaDir, err := filepath.Abs(filepath.Join("..", "schema"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cmd := exec.Command(flatc, "--json", "--strict-json", "--defaults-json", "-o", out, "-I", schemaDir, filepath.Join(schemaDir, "bundled_program.fbs"), "--", path)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("flatc: %v\n%s", err, b)
	}
	js, err := os.ReadFile(filepath.Join(out, strings.TrimSuffix(filepath.Base(path), ".bpte")+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
