package cuda

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pt2front "github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

const prog = `input p_w: parameter "w"
input x: user_input
output user_output
weight "w": bf16[2, 3] = inline("803f0040404080400000803f")

graph forward(%p_w: bf16[2, 3], %x: bf16[2, 3]) {
  %add: bf16[2, 3] = aten.add.Tensor(%x, %p_w)
  %relu: bf16[2, 3] = aten.relu.default(%add)
  return %relu
}
`

func parse(t *testing.T, src string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), "test.fxir")
	if err != nil {
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

// partitioned parses src and runs Partition on it.
func partitioned(t *testing.T, src string) *ir.Program {
	t.Helper()
	p := parse(t, src)
	res, err := Partition(p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Call == nil {
		t.Fatalf("nothing partitioned:\n%s", ir.Print(p))
	}
	if err := ir.Verify(p); err != nil {
		t.Fatalf("partitioned program does not verify: %v\n%s", err, ir.Print(p))
	}
	return p
}

func TestPartitionTypesRegionOnCUDA(t *testing.T) {
	p := partitioned(t, prog)
	text := ir.Print(p)
	for _, want := range []string{
		"%relu: bf16[2, 3]@cuda:0 = aten.relu.default",
		`%x_cuda: bf16[2, 3]@cuda:0 = aten._to_copy.default(%x, device=device("cuda:0"))`,
		`higher_order.executorch_call_delegate(^cuda_partition, "CudaBackend", %x_cuda, %p_w)`,
		`%relu: bf16[2, 3] = aten._to_copy.default(%relu_cuda, device=device("cpu"))`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("partitioned program lacks %q:\n%s", want, text)
		}
	}
	// Idempotent.
	res, err := Partition(p)
	if err != nil || !res.Existing || ir.Print(p) != text {
		t.Errorf("second Partition changed the program (err %v)", err)
	}
}

func TestPartitionLeavesHostOnlyProgramAlone(t *testing.T) {
	src := "symbol s0: [1, 8] hint 2\ngraph forward(%x: bf16[s0]) {\n  %sym_size: Sym(s0) = aten.sym_size.int(%x, 0)\n  return %sym_size\n}\n"
	p := parse(t, src)
	res, err := Partition(p)
	if err != nil || res.Call != nil || len(res.Host) != 1 {
		t.Fatalf("res %+v err %v", res, err)
	}
	if ir.Print(p) != ir.Print(parse(t, src)) {
		t.Errorf("host-only program changed")
	}
}

func TestRegionProgramIsStandaloneATen(t *testing.T) {
	p := partitioned(t, prog)
	call, err := FindCall(p)
	if err != nil || call == nil {
		t.Fatalf("call %v err %v", call, err)
	}
	rp, err := RegionProgram(p, call)
	if err != nil {
		t.Fatal(err)
	}
	if k := rp.Signature.Inputs[0].Kind; k != ir.Parameter || rp.Signature.Inputs[1].Kind != ir.UserInput {
		t.Errorf("inputs %+v", rp.Signature.Inputs)
	}
	if w := rp.Weight("w"); w == nil || w.Type.Device != Device {
		t.Errorf("weight w = %+v", w)
	}
}

func TestWritePackagesStandinPayload(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.pte")
	kept := filepath.Join(dir, "given.pt2")
	t.Setenv("FXPORT_STANDIN_KEEP", kept)
	if err := Write(context.Background(), partitioned(t, prog), out, Options{Command: standin(t), MethodName: "TinyModel"}); err != nil {
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
	if len(given.Main.Nodes()) != 2 {
		t.Errorf("region program has %d nodes, want add and relu:\n%s", len(given.Main.Nodes()), ir.Print(given))
	}
	f, err := pte.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	d, err := pte.ReadPTD(filepath.Join(dir, "m.ptd"))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tensors) != 2 {
		t.Fatalf(".ptd has %d entries, want 2", len(d.Tensors))
	}
	so, w := d.Tensors[0], d.Tensors[1]
	if !bytes.HasPrefix(so.Data, []byte("standin-so for ")) || string(w.Data) != "standin-weights" {
		t.Errorf(".ptd data = %q, %q", so.Data, w.Data)
	}
	sum := sha256.Sum256(so.Data)
	if so.Key != hex.EncodeToString(sum[:])+"_so_blob" || !strings.HasSuffix(w.Key, "_weights_blob") {
		t.Errorf("keys %q %q", so.Key, w.Key)
	}
	prog := f.Program
	m := prog.ExecutionPlan[0]
	if len(m.Delegates) != 1 || m.Delegates[0].Id != "CudaBackend" {
		t.Fatalf("delegates %+v", m.Delegates)
	}
	cs := m.Delegates[0].CompileSpecs
	if len(cs) != 1 || cs[0].Key != "method_name" || string(cs[0].Value) != "TinyModel" {
		t.Errorf("compile specs %+v", cs)
	}
	if got := string(prog.BackendDelegateData[0].Data); got != so.Key+"\n"+w.Key {
		t.Errorf("processed = %q", got)
	}
	// h2d copy, delegate call with 1 input + 1 output, d2h copy.
	ins := m.Chains[0].Instructions
	if len(ins) != 3 || ins[0].InstrArgs.Type != etfb.InstructionArgumentsKernelCall ||
		ins[1].InstrArgs.Type != etfb.InstructionArgumentsDelegateCall || ins[2].InstrArgs.Type != etfb.InstructionArgumentsKernelCall {
		t.Fatalf("instructions %+v", ins)
	}
	if args := ins[1].InstrArgs.Value.(*etfb.DelegateCallT).Args; len(args) != 2 {
		t.Errorf("delegate args %v", args)
	}
	for _, a := range ins[1].InstrArgs.Value.(*etfb.DelegateCallT).Args {
		tv := m.Values[a].Val.Value.(*etfb.TensorT)
		if tv.ExtraTensorInfo == nil || tv.ExtraTensorInfo.DeviceType != etfb.DeviceTypeCUDA || tv.AllocationInfo.MemoryId != 2 {
			t.Errorf("delegate operand %d is not a device tensor: %+v", a, tv)
		}
	}
	if m.Operators[0].Name != "et_copy::_h2d_copy" || m.Operators[1].Name != "et_copy::_d2h_copy" {
		t.Errorf("operators %+v", m.Operators)
	}
	if len(m.NonConstBufferSizes) != 3 || m.NonConstBufferSizes[1] != 28 || m.NonConstBufferSizes[2] != 28 {
		t.Errorf("buffer sizes %v", m.NonConstBufferSizes)
	}
	// Determinism.
	a, _ := os.ReadFile(out)
	out2 := filepath.Join(dir, "m2.pte")
	if err := Write(context.Background(), partitioned(t, prog0()), out2, Options{Command: standin(t), MethodName: "TinyModel"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out2)
	if !bytes.Equal(a, b) {
		t.Errorf("two writes differ")
	}
}

func prog0() string { return prog }

func TestWriteWithoutCompilerSaysWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.pte")
	for _, cmd := range []string{"fxport-no-such-compiler IN OUT", "sh -c exit\\ 7", "true IN OUT"} {
		err := Write(context.Background(), partitioned(t, prog), out, Options{Command: cmd})
		if err == nil || !strings.Contains(err.Error(), "needs torch with CUDA and a GPU") || !strings.Contains(err.Error(), "--aoti-command") {
			t.Errorf("%s: err = %v", cmd, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failed writes left files: %v", ents)
	}
}
