package cuda

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
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

// A SymInt the region reads is recomputed inside it from a tensor input
// with an equal dim, and sym_size of an intermediate is re-anchored on a
// graph input, so the delegate call takes tensors only.
func TestPartitionAnchorsSymInts(t *testing.T) {
	for name, src := range map[string]string{
		"input": `input p_w: parameter "w"
input x: user_input
output user_output
weight "w": f32[3, 3] = inline("0000803f000000400000404000008040000080400000803f0000803f0000004000004040")
symbol s0: [1, 8] hint 2
graph forward(%p_w: f32[3, 3], %x: f32[s0, 3]) {
  %sym_size_int: Sym(s0) = aten.sym_size.int(%x, 0)
  %linear: f32[s0, 3] = aten.linear.default(%x, %p_w)
  %view: f32[s0, 3] = aten.view.default(%linear, [%sym_size_int, 3])
  return %view
}
`,
		"intermediate": `symbol s0: [1, 8] hint 2
graph forward(%x: f32[s0, 3]) {
  %relu: f32[s0, 3] = aten.relu.default(%x)
  %sym_size_int: Sym(s0) = aten.sym_size.int(%relu, 0)
  %view: f32[s0, 3] = aten.view.default(%relu, [%sym_size_int, 3])
  return %view
}
`,
	} {
		p := partitioned(t, src)
		call, err := FindCall(p)
		if err != nil || call == nil {
			t.Fatalf("%s: call %v err %v", name, call, err)
		}
		for _, a := range call.Args[2:] {
			if a.Value.Tensor() == nil {
				t.Errorf("%s: delegate operand %s is not a tensor:\n%s", name, a.Value, ir.Print(p))
			}
		}
		region := call.Args[0].Graph
		text := ir.Print(p)
		first := region.Nodes()[0]
		if first.Op != opSymSize || !first.Args[0].Value.IsInput() || first.Args[0].Value.Graph != region || first.Results[0].NumUses() != 1 {
			t.Errorf("%s: the region does not recompute the SymInt from its tensor input:\n%s", name, text)
		}
		if _, err := RegionProgram(p, call); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if n := len(region.Nodes()); n < 3 {
			t.Errorf("%s: region has %d nodes:\n%s", name, n, text)
		}
	}
}
