package cuda_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pt2front "github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/ir"
	_ "github.com/fxport/fxport/passes" // the executorch.cuda pipeline
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/cuda"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// tiny: a parameter and an f32 user input (cuda-prepare casts it to bf16
// inside the partition).
const tiny = `meta "export.model_class" = "TinyModel"
input p_w: parameter "w"
input x: user_input
output user_output
weight "w": f32[2, 3] = inline("0000803f000000400000404000008040000000000000803f")

graph forward(%p_w: f32[2, 3], %x: f32[2, 3]) {
  %add: f32[2, 3] = aten.add.Tensor(%x, %p_w)
  %relu: f32[2, 3] = aten.relu.default(%add)
  return %relu
}
`

// symbolic: the golden tests/testdata/lowering/et_cuda_partition.fxir,
// whose view reads a host sym_size.
const symbolic = `input p_w: parameter "w"
input x: user_input
output user_output
weight "w": f32[3, 3] = inline("0000803f000000400000404000008040000080400000803f0000803f0000004000004040")
symbol s0: [1, 8] hint 2
graph forward(%p_w: f32[3, 3], %x: f32[s0, 3]) {
  %sym_size_int: Sym(s0) = aten.sym_size.int(%x, 0)
  %linear: f32[s0, 3] = aten.linear.default(%x, %p_w)
  %relu: f32[s0, 3] = aten.relu.default(%linear)
  %view: f32[s0, 3] = aten.view.default(%relu, [%sym_size_int, 3])
  return %view
}
`

// lowered runs the executorch.cuda pipeline on src.
func lowered(t *testing.T, src string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), "test.fxir")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.cuda")
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

func kernel(t *testing.T, m *etfb.ExecutionPlanT, in *etfb.InstructionT, op string) []int32 {
	t.Helper()
	k, ok := in.InstrArgs.Value.(*etfb.KernelCallT)
	if !ok {
		t.Fatalf("instruction %+v is not a kernel call (want %s)", in.InstrArgs, op)
	}
	if got := m.Operators[k.OpIndex].Name + "." + m.Operators[k.OpIndex].Overload; got != op {
		t.Fatalf("kernel %s, want %s", got, op)
	}
	return k.Args
}

func tensor(t *testing.T, m *etfb.ExecutionPlanT, i int32) *etfb.TensorT {
	t.Helper()
	tv, ok := m.Values[i].Val.Value.(*etfb.TensorT)
	if !ok {
		t.Fatalf("value %d is not a tensor", i)
	}
	return tv
}

func isDevice(tv *etfb.TensorT) bool {
	return tv.ExtraTensorInfo != nil && tv.ExtraTensorInfo.DeviceType == etfb.DeviceTypeCUDA
}

// TestWritePackagesStandinPayload (ET-B04 invariant: method_name = model
// class). The .pte is the emitter's output for the lowered main graph: h2d copy,
// CudaBackend DelegateCall (device inputs, then device outputs), d2h copy.
func TestWritePackagesStandinPayload(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.pte")
	kept := filepath.Join(dir, "given.pt2")
	t.Setenv("FXPORT_STANDIN_KEEP", kept)
	if err := cuda.Write(context.Background(), lowered(t, tiny), out, cuda.Options{Command: standin(t)}); err != nil {
		t.Fatal(err)
	}
	given, err := pt2front.Read(kept)
	if err != nil {
		t.Fatalf("the .pt2 given to the compile command does not read back: %v", err)
	}
	if err := ir.Verify(given); err != nil {
		t.Fatalf("the .pt2 given to the compile command does not verify: %v", err)
	}
	for _, n := range given.Main.Nodes() {
		info := n.Op.Info()
		if n.Op.Has(ir.PropOutVariant) || info.Namespace == "memory" || info.Namespace == "executorch_prim" || info.Namespace == "et_copy" {
			t.Errorf("the .pt2 given to the compile command holds %s", n.Short())
		}
	}
	flatcDecode(t, out)
	f, err := pte.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	d, err := pte.ReadPTD(cuda.PTDPath(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tensors) != 2 {
		t.Fatalf(".ptd has %d entries, want 2", len(d.Tensors))
	}
	so, w := d.Tensors[0], d.Tensors[1]
	if !bytes.HasPrefix(so.Data, []byte("standin-so for ")) || !bytes.HasPrefix(w.Data, []byte("standin-weights for cksum ")) {
		t.Errorf(".ptd data = %q, %q", so.Data, w.Data)
	}
	ss, ws := sha256.Sum256(so.Data), sha256.Sum256(w.Data)
	if so.Key != hex.EncodeToString(ss[:])+"_so_blob" || w.Key != hex.EncodeToString(ws[:])+"_weights_blob" {
		t.Errorf("keys %q %q", so.Key, w.Key)
	}
	prog := f.Program
	m := prog.ExecutionPlan[0]
	if m.Name != "forward" {
		t.Errorf("method %q", m.Name)
	}
	// ExecuTorch writes every delegate payload as a segment: after the
	// (empty) constant segment 0, segment 1 holds the processed bytes.
	if len(m.Delegates) != 1 || m.Delegates[0].Id != "CudaBackend" || m.Delegates[0].Processed.Location != etfb.DataLocationSEGMENT {
		t.Fatalf("delegates %+v", m.Delegates)
	}
	if len(prog.BackendDelegateData) != 0 {
		t.Errorf("%d inline delegate data entries, want none", len(prog.BackendDelegateData))
	}
	cs := m.Delegates[0].CompileSpecs
	if len(cs) != 1 || cs[0].Key != "method_name" || string(cs[0].Value) != "TinyModel" {
		t.Errorf("compile specs %+v (ET-B04: method_name = model class)", cs)
	}
	if si := m.Delegates[0].Processed.Index; si != 1 || int(si) >= len(f.Segments) || len(prog.Segments) != 2 {
		t.Fatalf("processed segment %d of %d (%d in the program)", si, len(f.Segments), len(prog.Segments))
	} else if got := string(f.Segments[si].Data); got != so.Key+"\n"+w.Key || prog.Segments[si].Size != uint64(len(got)) {
		t.Errorf("processed = %q (segment size %d)", got, prog.Segments[si].Size)
	}
	ins := m.Chains[0].Instructions
	if len(ins) != 3 || ins[1].InstrArgs.Type != etfb.InstructionArgumentsDelegateCall {
		t.Fatalf("%d instructions, want h2d, DelegateCall, d2h", len(ins))
	}
	h2d := kernel(t, m, ins[0], "et_copy::_h2d_copy.out")
	dc := ins[1].InstrArgs.Value.(*etfb.DelegateCallT)
	d2h := kernel(t, m, ins[2], "et_copy::_d2h_copy.out")
	// Arguments: h2d (self, out, ret=out); delegate (device input, device
	// output: the weight is in the blob); d2h (self, out, ret=out).
	if len(h2d) != 3 || h2d[1] != h2d[2] || len(d2h) != 3 || d2h[1] != d2h[2] {
		t.Fatalf("copy args %v %v", h2d, d2h)
	}
	if len(dc.Args) != 2 || dc.Args[0] != h2d[1] || dc.Args[1] != d2h[0] || dc.DelegateIndex != 0 {
		t.Errorf("delegate args %v, want [%d %d]", dc.Args, h2d[1], d2h[0])
	}
	if len(m.Inputs) != 1 || m.Inputs[0] != h2d[0] || len(m.Outputs) != 1 || m.Outputs[0] != d2h[1] {
		t.Errorf("plan inputs %v outputs %v; copies %v %v", m.Inputs, m.Outputs, h2d, d2h)
	}
	for _, a := range dc.Args {
		if tv := tensor(t, m, a); !isDevice(tv) || tv.AllocationInfo == nil || tv.AllocationInfo.MemoryId != 2 {
			t.Errorf("delegate operand %d is not a device tensor in arena 2: %+v", a, tv)
		}
	}
	for _, a := range []int32{h2d[0], d2h[1]} {
		if tv := tensor(t, m, a); isDevice(tv) || tv.AllocationInfo == nil || tv.AllocationInfo.MemoryId != 1 {
			t.Errorf("host tensor %d: %+v", a, tv)
		}
	}
	if st := tensor(t, m, h2d[0]).ScalarType; st != etfb.ScalarTypeFLOAT {
		t.Errorf("host input scalar type %v, want FLOAT (the bf16 cast is inside the partition)", st)
	}
	if len(m.NonConstBufferSizes) != 3 || m.NonConstBufferSizes[2] < 24+6 {
		t.Errorf("buffer sizes %v", m.NonConstBufferSizes)
	}
	if nd := m.NonConstBufferDevice; len(nd) != 1 || nd[0].BufferIdx != 2 || nd[0].DeviceType != etfb.DeviceTypeCUDA {
		t.Errorf("non_const_buffer_device %+v", nd)
	}
	for _, v := range m.Values {
		if tv, ok := v.Val.Value.(*etfb.TensorT); ok && tv.DataBufferIdx != 0 {
			t.Errorf("a constant tensor was emitted (the weight belongs in the blob): %+v", tv)
		}
	}
	// Determinism: a second lowering and write give the same bytes.
	out2 := filepath.Join(dir, "m2.pte")
	if err := cuda.Write(context.Background(), lowered(t, tiny), out2, cuda.Options{Command: standin(t)}); err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{out, out2}, {cuda.PTDPath(out), cuda.PTDPath(out2)}} {
		a, _ := os.ReadFile(pair[0])
		b, _ := os.ReadFile(pair[1])
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s and %s differ", pair[0], pair[1])
		}
	}
}

// The golden's view reads a host sym_size: the region recomputes it, the
// .pt2 has tensor inputs only, the delegate takes device tensors only and
// the program is DYNAMIC_BOUND.
func TestWriteSymbolicRegion(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.pte")
	kept := filepath.Join(dir, "given.pt2")
	t.Setenv("FXPORT_STANDIN_KEEP", kept)
	if err := cuda.Write(context.Background(), lowered(t, symbolic), out, cuda.Options{Command: standin(t)}); err != nil {
		t.Fatal(err)
	}
	given, err := pt2front.Read(kept)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range given.Main.Inputs {
		if v.Tensor() == nil {
			t.Errorf("the .pt2 has a non-tensor input %s", v)
		}
	}
	flatcDecode(t, out)
	f, err := pte.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	m := f.Program.ExecutionPlan[0]
	var dc *etfb.DelegateCallT
	for _, in := range m.Chains[0].Instructions {
		if c, ok := in.InstrArgs.Value.(*etfb.DelegateCallT); ok {
			dc = c
		}
	}
	if dc == nil || len(dc.Args) != 2 {
		t.Fatalf("delegate call %+v", dc)
	}
	for _, a := range dc.Args {
		tv := tensor(t, m, a)
		if !isDevice(tv) || tv.ShapeDynamism != etfb.TensorShapeDynamismDYNAMIC_BOUND || tv.Sizes[0] != 8 {
			t.Errorf("delegate operand %d: %+v", a, tv)
		}
	}
}

// Nothing is written when the compiler is missing or fails, or when the
// program was not lowered.
func TestWriteFailuresWriteNothing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.pte")
	p := lowered(t, tiny)
	for _, cmd := range []string{"fxport-no-such-compiler IN OUT", "sh -c exit\\ 7", "true IN OUT"} {
		err := cuda.Write(context.Background(), p, out, cuda.Options{Command: cmd})
		if err == nil || !strings.Contains(err.Error(), "needs torch with CUDA and a GPU") || !strings.Contains(err.Error(), "--aoti-command") {
			t.Errorf("%s: err = %v", cmd, err)
		}
	}
	raw, err := ir.Parse([]byte(tiny), "tiny.fxir")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cuda.Partition(raw); err != nil {
		t.Fatal(err)
	}
	if err := cuda.Write(context.Background(), raw, out, cuda.Options{Command: standin(t)}); err == nil || !strings.Contains(err.Error(), "memory plan") {
		t.Errorf("unlowered program: err = %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failed writes left files: %v", ents)
	}
}
