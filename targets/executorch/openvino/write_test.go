package openvino_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pt2front "github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/ir"
	_ "github.com/fxport/fxport/passes" // the executorch.openvino pipeline
	"github.com/fxport/fxport/pm"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/openvino"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// genuine is the OpenVINO-delegated file of PROVENANCE.md.
const genuine = "../../../../shared/testdata/pte/djl_openvino_delegate_tiny.pte"

// tiny has the genuine file's signature, f32[1,8] → f32[1,8]: a linear
// layer (weight and bias, which the compiled model holds) and relu.
var tiny = `input p_w: parameter "w"
input p_b: parameter "b"
input x: user_input
output user_output
weight "w": f32[8, 8] = inline("` + w64 + `")
weight "b": f32[8] = inline("0000003f0000003f0000003f0000003f0000803e0000803e0000803e0000803e")
graph forward(%p_w: f32[8, 8], %p_b: f32[8], %x: f32[1, 8]) {
  %linear: f32[1, 8] = aten.linear.default(%x, %p_w, %p_b)
  %relu: f32[1, 8] = aten.relu.default(%linear)
  return %relu
}
`

// w64 is 64 f32 values 0.5 (hex).
var w64 = strings.Repeat("0000003f", 64)

// mixed has an op outside the op list between two supported groups.
const mixed = `graph forward(%x: f32[2, 4]) {
  %relu: f32[2, 4] = aten.relu.default(%x)
  %softplus: f32[2, 4] = aten.softplus.default(%relu)
  %sigmoid: f32[2, 4] = aten.sigmoid.default(%softplus)
  %mul: f32[2, 4] = aten.mul.Tensor(%sigmoid, %x)
  return %mul
}
`

// lowered runs the executorch.openvino pipeline on src.
func lowered(t *testing.T, src string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), "test.fxir")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.openvino")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
		t.Fatal(err)
	}
	return p
}

func standin(t *testing.T) string {
	abs, err := filepath.Abs("testdata/standin_compile.sh")
	if err != nil {
		t.Fatal(err)
	}
	return "sh " + abs + " IN OUT"
}

// flatcDecode decodes a .pte with flatc and our schema (skipped without flatc).
func flatcDecode(t *testing.T, path string) {
	t.Helper()
	flatc, err := exec.LookPath("flatc")
	if err != nil {
		t.Log("flatc not installed; flatc decode skipped")
		return
	}
	schema, _ := filepath.Abs("../schema/program.fbs")
	out := t.TempDir()
	if msg, err := exec.Command(flatc, "--json", "--strict-json", "-o", out, schema, "--", path).CombinedOutput(); err != nil {
		t.Errorf("flatc: %v: %s", err, msg)
	}
}

func writeTiny(t *testing.T, dir, name string) (string, *pte.File) {
	t.Helper()
	out := filepath.Join(dir, name)
	if err := openvino.Write(context.Background(), lowered(t, tiny), out, openvino.Options{Command: standin(t)}); err != nil {
		t.Fatal(err)
	}
	flatcDecode(t, out)
	f, err := pte.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, f
}

func tensorOf(t *testing.T, m *etfb.ExecutionPlanT, i int32) *etfb.TensorT {
	t.Helper()
	if int(i) >= len(m.Values) {
		t.Fatalf("value %d out of range", i)
	}
	tv, ok := m.Values[i].Val.Value.(*etfb.TensorT)
	if !ok {
		t.Fatalf("value %d is not a tensor", i)
	}
	return tv
}

func method(t *testing.T, f *pte.File, name string) *etfb.ExecutionPlanT {
	t.Helper()
	for _, m := range f.Program.ExecutionPlan {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no method %q", name)
	return nil
}

// TestWriteMatchesGenuineStructure compares fxport's .pte for the tiny
// linear/relu program, compiled by the stand-in, with the genuine
// OpenVINO-delegated file, field by field. Allowed differences, by design:
// the payload bytes (the stand-in writes a fake blob, OpenVINO a compiled
// model), the planner's offsets inside arena 1 (and its size), and the
// export-metadata constant method fxport adds beside forward (ET-L04); the
// forward method is compared.
func TestWriteMatchesGenuineStructure(t *testing.T) {
	g, err := pte.Read(genuine)
	if err != nil {
		t.Skipf("genuine file unavailable: %v", err)
	}
	out, f := writeTiny(t, t.TempDir(), "m.pte")
	for _, c := range []struct {
		name string
		f    *pte.File
	}{{"genuine", g}, {"fxport", f}} {
		if err := openvino.CheckCompileSpecs(c.f); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	gp, fp := g.Program, f.Program
	// Segments: 0 the (empty) constant segment, 1 the delegate payload.
	if len(gp.Segments) != 2 || len(fp.Segments) != len(gp.Segments) {
		t.Fatalf("segments: genuine %d, fxport %d", len(gp.Segments), len(fp.Segments))
	}
	if gp.Segments[0].Size != 0 || fp.Segments[0].Size != 0 {
		t.Errorf("constant segment sizes %d, %d", gp.Segments[0].Size, fp.Segments[0].Size)
	}
	if gp.Segments[1].Size != 3769 || fp.Segments[1].Size == 0 {
		t.Errorf("payload segment sizes %d, %d", gp.Segments[1].Size, fp.Segments[1].Size)
	}
	if !bytes.HasPrefix(f.Segments[1].Data, []byte("standin-openvino-blob for ")) {
		t.Errorf("payload = %q", f.Segments[1].Data)
	}
	for name, cs := range map[string]*etfb.SubsegmentOffsetsT{"genuine": gp.ConstantSegment, "fxport": fp.ConstantSegment} {
		if cs == nil || cs.SegmentIndex != 0 || len(cs.Offsets) != 1 || cs.Offsets[0] != 0 {
			t.Errorf("%s constant_segment %+v, want {0, [0]}", name, cs)
		}
	}
	if len(gp.NamedData) != 0 || len(fp.NamedData) != 0 || len(fp.BackendDelegateData) != len(gp.BackendDelegateData) {
		t.Errorf("named data %d/%d, inline delegate data %d/%d", len(gp.NamedData), len(fp.NamedData), len(gp.BackendDelegateData), len(fp.BackendDelegateData))
	}
	gm, fm := method(t, g, "forward"), method(t, f, "forward")
	// Delegates: one OpenvinoBackend, device = CPU, processed in segment 1.
	for name, m := range map[string]*etfb.ExecutionPlanT{"genuine": gm, "fxport": fm} {
		if len(m.Delegates) != 1 {
			t.Fatalf("%s: %d delegates", name, len(m.Delegates))
		}
		d := m.Delegates[0]
		if d.Id != "OpenvinoBackend" || d.Processed.Location != etfb.DataLocationSEGMENT || d.Processed.Index != 1 {
			t.Errorf("%s delegate %s processed %+v", name, d.Id, d.Processed)
		}
		if len(d.CompileSpecs) != 1 || d.CompileSpecs[0].Key != "device" || string(d.CompileSpecs[0].Value) != "CPU" {
			t.Errorf("%s compile specs %+v", name, d.CompileSpecs)
		}
		if len(m.Operators) != 0 {
			t.Errorf("%s: %d operators, want none", name, len(m.Operators))
		}
		if len(m.Chains) != 1 || len(m.Chains[0].Instructions) != 1 {
			t.Fatalf("%s: chains %+v", name, m.Chains)
		}
		dc, ok := m.Chains[0].Instructions[0].InstrArgs.Value.(*etfb.DelegateCallT)
		if !ok || dc.DelegateIndex != 0 {
			t.Fatalf("%s: instruction %+v is not DelegateCall 0", name, m.Chains[0].Instructions[0].InstrArgs)
		}
		// Args: the runtime input, then the output.
		if len(dc.Args) != 2 || len(m.Inputs) != 1 || len(m.Outputs) != 1 || dc.Args[0] != m.Inputs[0] || dc.Args[1] != m.Outputs[0] {
			t.Errorf("%s: delegate args %v, inputs %v, outputs %v", name, dc.Args, m.Inputs, m.Outputs)
		}
		if len(m.Values) != 2 {
			t.Errorf("%s: %d values, want 2 (the weights are inside the compiled model)", name, len(m.Values))
		}
		for _, i := range dc.Args {
			tv := tensorOf(t, m, i)
			if tv.ScalarType != etfb.ScalarTypeFLOAT || len(tv.Sizes) != 2 || tv.Sizes[0] != 1 || tv.Sizes[1] != 8 {
				t.Errorf("%s: value %d is %v %v, want float[1,8]", name, i, tv.ScalarType, tv.Sizes)
			}
			if len(tv.DimOrder) != 2 || tv.DimOrder[0] != 0 || tv.DimOrder[1] != 1 {
				t.Errorf("%s: value %d dim order %v", name, i, tv.DimOrder)
			}
			if tv.AllocationInfo == nil || tv.AllocationInfo.MemoryId != 1 || tv.DataBufferIdx != 0 {
				t.Errorf("%s: value %d is not planned in arena 1: %+v", name, i, tv)
			}
		}
		if len(m.NonConstBufferSizes) != 2 || m.NonConstBufferSizes[0] != 0 || m.NonConstBufferSizes[1] < 64 {
			t.Errorf("%s: non_const_buffer_sizes %v", name, m.NonConstBufferSizes)
		}
	}
	// Determinism: a second lowering and write give the same bytes.
	out2, _ := writeTiny(t, t.TempDir(), "m2.pte")
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(out2)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("two writes of the same program differ")
	}
}

// The .pt2 handed to the compile command is the region as a standalone
// ATen program: the weights as parameters, x the one user input.
func TestCompileGetsStandaloneATenProgram(t *testing.T) {
	dir := t.TempDir()
	kept := filepath.Join(dir, "given.pt2")
	t.Setenv("FXPORT_STANDIN_KEEP", kept)
	writeTiny(t, dir, "m.pte")
	given, err := pt2front.Read(kept)
	if err != nil {
		t.Fatalf("the .pt2 given to the compile command does not read back: %v", err)
	}
	if err := ir.Verify(given); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, in := range given.Signature.Inputs {
		kinds = append(kinds, in.Kind.String())
	}
	if got := strings.Join(kinds, ","); got != "parameter,parameter,user_input" {
		t.Errorf("inputs %s", got)
	}
	var ops []string
	for _, n := range given.Main.Nodes() {
		ops = append(ops, n.Op.Info().Name)
	}
	if got := strings.Join(ops, " "); got != "aten.linear.default aten.relu.default" {
		t.Errorf("ops %s", got)
	}
}

// Several partitions: two OpenvinoBackend delegates, each with its own
// segment, and the unsupported op as a portable kernel between them.
func TestWriteSeveralPartitions(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m.pte")
	if err := openvino.Write(context.Background(), lowered(t, mixed), out, openvino.Options{Command: standin(t)}); err != nil {
		t.Fatal(err)
	}
	flatcDecode(t, out)
	f, err := pte.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	m := method(t, f, "forward")
	if len(m.Delegates) != 2 || len(f.Program.Segments) != 3 {
		t.Fatalf("%d delegates, %d segments", len(m.Delegates), len(f.Program.Segments))
	}
	for i, d := range m.Delegates {
		if d.Id != "OpenvinoBackend" || d.Processed.Index != uint32(i+1) {
			t.Errorf("delegate %d: %s segment %d", i, d.Id, d.Processed.Index)
		}
	}
	var seq []string
	for _, in := range m.Chains[0].Instructions {
		switch v := in.InstrArgs.Value.(type) {
		case *etfb.DelegateCallT:
			seq = append(seq, "delegate")
			if len(v.Args) < 2 {
				t.Errorf("delegate args %v", v.Args)
			}
		case *etfb.KernelCallT:
			seq = append(seq, m.Operators[v.OpIndex].Name)
		}
	}
	// The second partition (sigmoid, mul) reads softplus and x; softplus,
	// which has no portable kernel, runs decomposed (legalize-kernels).
	if got := strings.Join(seq, " "); got != "delegate aten::gt aten::exp aten::log1p aten::where delegate" {
		t.Errorf("instructions %s", got)
	}
	if err := openvino.CheckCompileSpecs(f); err != nil {
		t.Error(err)
	}
}

// Nothing is written when the compiler is missing or fails, or when the
// program was not lowered; the errors say what is needed.
func TestWriteFailuresWriteNothing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.pte")
	p := lowered(t, tiny)
	for _, cmd := range []string{"fxport-no-such-compiler IN OUT", "sh -c exit\\ 7", "true IN OUT"} {
		err := openvino.Write(context.Background(), p, out, openvino.Options{Command: cmd})
		if err == nil || !strings.Contains(err.Error(), "needs torch >= 2 and the openvino Python package") || !strings.Contains(err.Error(), "--openvino-command") {
			t.Errorf("%s: err = %v", cmd, err)
		}
	}
	raw, err := ir.Parse([]byte(tiny), "tiny.fxir")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openvino.Partition(raw); err != nil {
		t.Fatal(err)
	}
	if err := openvino.Write(context.Background(), raw, out, openvino.Options{Command: standin(t)}); err == nil || !strings.Contains(err.Error(), "memory plan") {
		t.Errorf("unlowered program: err = %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failed writes left files: %v", ents)
	}
}

// The default compile script, where torch >= 2 or openvino is missing,
// exits 2 naming what is missing (and Write quotes it); where both are
// installed it compiles the partition.
func TestDefaultScriptNamesWhatIsMissing(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	script, _ := filepath.Abs("../../../tools/openvino_compile.py")
	dir := t.TempDir()
	out := filepath.Join(dir, "m.pte")
	err = openvino.Write(context.Background(), lowered(t, tiny), out, openvino.Options{Command: py + " " + script + " IN OUT"})
	if err == nil {
		if _, err := os.Stat(out); err != nil {
			t.Fatalf("Write succeeded but wrote nothing: %v", err)
		}
		t.Log("torch and openvino are installed: compiled for real")
		return
	}
	msg := err.Error()
	if !strings.Contains(msg, "exit status 2") || !strings.Contains(msg, "openvino_compile: missing") {
		t.Errorf("err = %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failed write left files: %v", ents)
	}
}
