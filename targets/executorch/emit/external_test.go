package emit_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/internal/ettest"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// emitExternal lowers path for backend, emits it with opts and returns the
// decoded .pte and .ptd (nil when there is no external data).
func emitExternal(t *testing.T, path, backend string, opts emit.Options) (*pte.File, *pte.DataFile, []byte) {
	t.Helper()
	p := ettest.ParseFile(t, path)
	ettest.Lower(t, p, backend, "")
	return ettest.EmitWithData(t, p, filepath.Base(path), opts)
}

// tensorStorage describes where each tensor value's data comes from,
// with the extra_tensor_info that says so.
func tensorStorage(p *etfb.ExecutionPlanT) []string {
	var out []string
	for i, v := range p.Values {
		x, ok := v.Val.Value.(*etfb.TensorT)
		if !ok {
			continue
		}
		s := fmt.Sprintf("%%%d data_buffer_idx %d", i, x.DataBufferIdx)
		if x.AllocationInfo != nil {
			s += fmt.Sprintf(" mem %d", x.AllocationInfo.MemoryId)
		}
		if e := x.ExtraTensorInfo; e != nil {
			s += fmt.Sprintf(" %s %q %s", etfb.EnumNamesTensorDataLocation[e.Location], e.FullyQualifiedName, etfb.EnumNamesDeviceType[e.DeviceType])
		}
		out = append(out, s)
	}
	return out
}

// a*x + b exported with external constants has the structure of exir's
// rs_external_constants_mul_add.pte and a .ptd with the genuine layout:
// header fields, entries (keys, segments, layouts, bytes) and the segment
// region byte for byte. Differences left: the metadata method fxport adds
// (forward is compared) and the flatbuffers' internal table order (flatc vs
// the Go builder; the sizes happen to agree for the .ptd, not the .pte).
func TestExternalConstantsMatchGenuine(t *testing.T) {
	dir := genuineDir(t)
	want, err := pte.Read(filepath.Join(dir, "rs_external_constants_mul_add.pte"))
	if err != nil {
		t.Fatal(err)
	}
	wantData, err := os.ReadFile(filepath.Join(dir, "rs_external_constants_mul_add.ptd"))
	if err != nil {
		t.Fatal(err)
	}
	wantPTD, err := pte.DecodePTD("genuine.ptd", wantData)
	if err != nil {
		t.Fatal(err)
	}
	got, gotPTD, gotData := emitExternal(t, "testdata/external_mul_add.fxir", "executorch.portable", emit.Options{ExternalConstants: true})
	if gotPTD == nil {
		t.Fatal("no .ptd data")
	}
	wp, gp := want.Program.ExecutionPlan[0], got.Program.ExecutionPlan[0]
	if d := cmp.Diff(methodShape(wp), methodShape(gp)); d != "" {
		t.Errorf("forward differs (-exir +fxport):\n%s", d)
	}
	if d := cmp.Diff(tensorStorage(wp), tensorStorage(gp)); d != "" {
		t.Errorf("tensor storage differs (-exir +fxport):\n%s", d)
	}
	if d := cmp.Diff(planned(wp), planned(gp)); d != "" {
		t.Errorf("planned offsets differ (-exir +fxport):\n%s", d)
	}
	if d := cmp.Diff(wp.Chains, gp.Chains); d != "" {
		t.Errorf("chains differ (-exir +fxport):\n%s", d)
	}
	if (want.Header == nil) != (got.Header == nil) {
		t.Errorf("eh00: exir %+v, fxport %+v", want.Header, got.Header)
	}
	if d := cmp.Diff(want.Program.Segments, got.Program.Segments); d != "" {
		t.Errorf("segments differ (-exir +fxport):\n%s", d)
	}
	if d := cmp.Diff(want.Program.ConstantSegment, got.Program.ConstantSegment); d != "" {
		t.Errorf("constant_segment differs (-exir +fxport):\n%s", d)
	}
	if len(got.Program.NamedData) != 0 {
		t.Errorf("named data %v in the .pte", got.Program.NamedData)
	}
	// The .ptd.
	if d := cmp.Diff(wantPTD.Header, gotPTD.Header); d != "" {
		t.Errorf(".ptd header differs (-exir +fxport):\n%s", d)
	}
	if d := cmp.Diff(wantPTD.Tensors, gotPTD.Tensors); d != "" {
		t.Errorf(".ptd entries differ (-exir +fxport):\n%s", d)
	}
	if len(wantData) != len(gotData) {
		t.Errorf(".ptd size: exir %d, fxport %d", len(wantData), len(gotData))
	}
	base := wantPTD.Header.SegmentBaseOffset
	if uint64(len(gotData)) < base || !bytes.Equal(wantData[base:], gotData[base:]) {
		t.Errorf(".ptd segment region differs")
	}
	// flatc decodes both .ptd files to the same JSON.
	if flatc, err := exec.LookPath("flatc"); err == nil {
		schema, _ := filepath.Abs("../schema/flat_tensor.fbs")
		tmp := t.TempDir()
		var js [2][]byte
		for i, b := range [][]byte{wantData, gotData} {
			name := filepath.Join(tmp, fmt.Sprintf("f%d.ptd", i))
			if err := os.WriteFile(name, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if msg, err := exec.Command(flatc, "--json", "--strict-json", "-o", tmp, schema, "--", name).CombinedOutput(); err != nil {
				t.Fatalf("flatc: %v: %s", err, msg)
			}
			if js[i], err = os.ReadFile(strings.TrimSuffix(name, ".ptd") + ".json"); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(js[0], js[1]) {
			t.Errorf("flatc JSON differs:\nexir   %s\nfxport %s", js[0], js[1])
		}
	}
	// Deterministic.
	again, _, againData := emitExternal(t, "testdata/external_mul_add.fxir", "executorch.portable", emit.Options{ExternalConstants: true})
	b1, _ := pte.Encode(got)
	b2, _ := pte.Encode(again)
	if !bytes.Equal(b1, b2) || !bytes.Equal(gotData, againData) {
		t.Errorf("two emissions differ")
	}
}

// Without the option the constants stay in the constant segment, and
// Program refuses options whose data it could not return.
func TestExternalConstantsOffByDefault(t *testing.T) {
	got, ptd, _ := emitExternal(t, "testdata/external_mul_add.fxir", "executorch.portable", emit.Options{})
	if ptd != nil {
		t.Fatalf("external data without the option: %+v", ptd.Tensors)
	}
	if offs := got.Program.ConstantSegment.Offsets; len(offs) != 3 {
		t.Errorf("constant offsets %v, want the placeholder and two constants", offs)
	}
	p := lower(t, "testdata/external_mul_add.fxir")
	if _, err := emit.Program(p, emit.Options{ExternalConstants: true}); err == nil || !strings.Contains(err.Error(), "ProgramWithData") {
		t.Errorf("Program with ExternalConstants: %v", err)
	}
}

// Lifted constants stay in the program (exir's external_constants_pass
// skips "_lifted_tensor" placeholders); byte-identical constants share one
// external buffer and one .ptd segment, each under its own name.
func TestExternalConstantsLiftedAndShared(t *testing.T) {
	src := `input p_w1: parameter "w1"
input p_w2: parameter "w2"
input c_lifted_tensor_0: constant_tensor "_lifted_tensor_constant0"
input x: user_input
output user_output
weight "w1": f32[2] = inline("0000803f00000040")
weight "w2": f32[2] = inline("0000803f00000040")
weight "_lifted_tensor_constant0": f32[] = inline("00004040")
graph forward(%p_w1: f32[2], %p_w2: f32[2], %c_lifted_tensor_0: f32[], %x: f32[2]) {
  %mul: f32[2] = aten.mul.Tensor(%x, %p_w1)
  %add: f32[2] = aten.add.Tensor(%mul, %p_w2)
  %add_1: f32[2] = aten.add.Tensor(%add, %c_lifted_tensor_0)
  return %add_1
}
`
	path := filepath.Join(t.TempDir(), "lifted.fxir")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, ptd, _ := emitExternal(t, path, "executorch.portable", emit.Options{ExternalConstants: true, NoMetadataMethod: true})
	st := tensorStorage(got.Program.ExecutionPlan[0])
	want := []string{
		`%0 data_buffer_idx 0 EXTERNAL "w1" CPU`,
		`%1 data_buffer_idx 0 EXTERNAL "w2" CPU`,
		`%2 data_buffer_idx 1`,
	}
	if len(st) < 3 || !cmp.Equal(st[:3], want) {
		t.Errorf("storage %v, want prefix %v", st, want)
	}
	if offs := got.Program.ConstantSegment.Offsets; len(offs) != 2 {
		t.Errorf("constant offsets %v: the lifted constant should be the only one", offs)
	}
	if ptd == nil || len(ptd.Tensors) != 2 || ptd.Tensors[0].Key != "w1" || ptd.Tensors[1].Key != "w2" ||
		ptd.Tensors[0].Segment != ptd.Tensors[1].Segment {
		t.Fatalf(".ptd entries %+v: want w1 and w2 sharing a segment", ptd)
	}
}

// XNNPACK: with ExternalConstants alone the delegate's weights stay named
// data in the .pte (exir moves them only when tagged); with
// ExternalDelegateData they move to the .ptd under their sha256 keys, and
// the .pte keeps the segment table consistent.
func TestExternalDelegateData(t *testing.T) {
	const conv = "../xnnpack/testdata/conv_relu.fxir"
	in, ptd, _ := emitExternal(t, conv, "executorch.xnnpack", emit.Options{ExternalConstants: true, NoMetadataMethod: true})
	if ptd != nil {
		t.Errorf("delegated constants went to the .ptd without ExternalDelegateData: %+v", ptd.Tensors)
	}
	if len(in.Program.NamedData) != 2 {
		t.Fatalf("%d named data in the .pte, want the weight and the bias", len(in.Program.NamedData))
	}
	out, ptd, _ := emitExternal(t, conv, "executorch.xnnpack", emit.Options{ExternalConstants: true, ExternalDelegateData: true, NoMetadataMethod: true})
	if ptd == nil || len(ptd.Tensors) != 2 {
		t.Fatalf(".ptd %+v, want two entries", ptd)
	}
	if len(out.Program.NamedData) != 0 {
		t.Errorf("named data left in the .pte: %v", out.Program.NamedData)
	}
	if len(out.Segments) != len(in.Segments)-2 {
		t.Errorf("%d segments, want %d (two named-data segments removed)", len(out.Segments), len(in.Segments)-2)
	}
	for i, nd := range in.Program.NamedData {
		e := ptd.Tensors[i]
		if e.Key != nd.Key || e.HasLayout || !bytes.Equal(e.Data, in.Segments[nd.SegmentIndex].Data) {
			t.Errorf(".ptd entry %d: key %q (want %q), layout %v, %d bytes", i, e.Key, nd.Key, e.HasLayout, len(e.Data))
		}
	}
	// The delegate payload is unchanged and still found.
	if len(out.Methods[0].Delegates) != 1 || len(in.Methods[0].Delegates) != 1 ||
		!bytes.Equal(out.Methods[0].Delegates[0].Data, in.Methods[0].Delegates[0].Data) {
		t.Errorf("delegate payload changed")
	}
}
