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
	if len(res.Calls) == 0 {
		t.Fatalf("nothing partitioned:\n%s", ir.Print(p))
	}
	if err := ir.Verify(p); err != nil {
		t.Fatalf("partitioned program does not verify: %v\n%s", err, ir.Print(p))
	}
	return p
}

// only returns p's one CudaBackend call.
func only(t *testing.T, p *ir.Program) *ir.Node {
	t.Helper()
	calls := FindCalls(p)
	if len(calls) != 1 {
		t.Fatalf("%d CudaBackend calls, want 1:\n%s", len(calls), ir.Print(p))
	}
	return calls[0]
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
	if err != nil || len(res.Calls) != 0 || len(res.Host) != 1 {
		t.Fatalf("res %+v err %v", res, err)
	}
	if ir.Print(p) != ir.Print(parse(t, src)) {
		t.Errorf("host-only program changed")
	}
}

func TestRegionProgramIsStandaloneATen(t *testing.T) {
	p := partitioned(t, prog)
	call := only(t, p)
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
		call := only(t, p)
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

// A SymInt that equals no dim but is an expression in them (s0*2) is
// computed in the region from sym_size of its tensor input; one that is
// not (a data-dependent item() of an input) is passed as a 0-dim int64
// device tensor and unboxed in the region. Either way the delegate call
// takes tensors only.
func TestPartitionPassesSymInts(t *testing.T) {
	for _, c := range []struct {
		name, src       string
		computed, boxed int
		region, host    []string
	}{
		{"expression", `symbol s0: [1, 8] hint 2
graph forward(%x: f32[s0, 4]) {
  %sym_size: Sym(s0) = aten.sym_size.int(%x, 0)
  %twice: Sym(2*s0) = operator.mul(%sym_size, 2)
  %relu: f32[s0, 4] = aten.relu.default(%x)
  %view: f32[2*s0, 2] = aten.view.default(%relu, [%twice, 2])
  %mul: f32[2*s0, 2] = aten.mul.Tensor(%view, %view)
  return %mul
}
`, 1, 0, []string{
			"= aten.sym_size.int(%x, 0)",
			"%twice: Sym(2*s0) = operator.mul(",
			"aten.view.default(%relu, [%twice, 2])",
			"%mul: f32[2*s0, 2]@cuda:0 = aten.mul.Tensor(%view, %view)",
		}, nil},
		{"names", `symbol s0: [1, 8] hint 2
graph forward(%x: f32[s0, 4]) {
  %sym_size: Sym(s0) = aten.sym_size.int(%x, 0)
  %m: Sym(2*s0) = operator.mul(%sym_size, 2)
  %e: Sym(2*s0 + 1) = operator.add(%m, 1)
  %relu: f32[s0, 4] = aten.relu.default(%x)
  %sum: f32[] = aten.sum.default(%relu)
  %full: f32[2*s0 + 1, 4] = aten.full.default([%e, 4], 1.0)
  %mul: f32[2*s0 + 1, 4] = aten.mul.Tensor(%full, %sum)
  return %mul
}
`, 1, 0, []string{
			"%e: Sym(2*s0 + 1) = operator.add(",
			"%mul_sym: Sym(2*s0) = operator.mul(",
			"aten.full.default([%e, 4], 1.0, device=device(\"cuda:0\"))",
			"%mul: f32[2*s0 + 1, 4]@cuda:0 = aten.mul.Tensor(%full, %sum)",
		}, nil},
		{"item", `graph forward(%x: f32[4], %n: i64[]) {
  %item: Sym(u0) = aten._local_scalar_dense.default(%n)
  %mul: f32[4] = aten.mul.Scalar(%x, %item)
  return %mul
}
`, 0, 1, []string{
			"%item: Sym(u0) = aten._local_scalar_dense.default(%item_box_cuda)",
			"aten.mul.Scalar(%x, %item)",
		}, []string{
			"%item_box: i64[] = aten.full.default([], %item, dtype=torch.int64)",
			"%item_box_cuda: i64[]@cuda:0 = aten._to_copy.default(%item_box, device=device(\"cuda:0\"))",
		}},
	} {
		p := parse(t, c.src)
		res, err := Partition(p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := ir.Verify(p); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, ir.Print(p))
		}
		text := ir.Print(p)
		if len(res.Calls) != 1 || res.Computed != c.computed || res.Boxed != c.boxed {
			t.Errorf("%s: %d calls, %d computed, %d boxed:\n%s", c.name, len(res.Calls), res.Computed, res.Boxed, text)
			continue
		}
		call := res.Calls[0]
		for _, a := range call.Args[2:] {
			if a.Value.Tensor() == nil {
				t.Errorf("%s: delegate operand %s is not a tensor:\n%s", c.name, a.Value, text)
			}
		}
		region := ir.Print(p)
		for _, want := range append(c.region, c.host...) {
			if !strings.Contains(region, want) {
				t.Errorf("%s: lacks %q:\n%s", c.name, want, text)
			}
		}
		if _, err := RegionProgram(p, call); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// A tensor node that reads a host value no partition can take (a list
// computed on the host from a partition's result) stays on the host, with
// the reason, and so does the rest of its chain until a tensor comes out
// of it.
func TestPartitionKeepsUnpassableReadersOnHost(t *testing.T) {
	p := parse(t, `graph forward(%x: f32[4]) {
  %relu: f32[4] = aten.relu.default(%x)
  %split: list<f32[2]> = aten.split.Tensor(%relu, 2)
  %getitem: f32[2] = operator.getitem(%split, 0)
  %neg: f32[2] = aten.neg.default(%getitem)
  return %neg
}
`)
	res, err := Partition(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(p); err != nil {
		t.Fatalf("%v\n%s", err, ir.Print(p))
	}
	reasons := map[string]string{}
	for _, h := range res.Host {
		reasons[h.Node.Results[0].Name] = h.Reason
	}
	if !strings.Contains(reasons["getitem"], "cannot be passed to a CUDA partition") || len(res.Calls) != 2 {
		t.Errorf("%d calls, host %v:\n%s", len(res.Calls), reasons, ir.Print(p))
	}
}

// Three partitions split by two host item()s: each later partition takes
// the earlier device results directly, so the only device→host copies are
// the ones the host nodes and the return read.
func TestPartitionChainsDeviceResults(t *testing.T) {
	p := parse(t, `graph forward(%x: f32[4], %n: i64[4]) {
  %relu: f32[4] = aten.relu.default(%x)
  %sum: i64[] = aten.sum.default(%n)
  %a: Sym(u0) = aten._local_scalar_dense.default(%sum)
  %mul: f32[4] = aten.mul.Scalar(%relu, %a)
  %gt: b8[4] = aten.gt.Scalar(%mul, 0)
  %cnt: i64[] = aten.sum.default(%gt)
  %b: Sym(u1) = aten._local_scalar_dense.default(%cnt)
  %mul_1: f32[4] = aten.mul.Scalar(%mul, %b)
  %add_1: f32[4] = aten.add.Tensor(%mul_1, %relu)
  return %add_1
}
`)
	res, err := Partition(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(p); err != nil {
		t.Fatalf("%v\n%s", err, ir.Print(p))
	}
	text := ir.Print(p)
	if len(res.Calls) != 3 {
		t.Fatalf("%d calls, want 3:\n%s", len(res.Calls), text)
	}
	d2h, h2d := 0, 0
	for _, n := range p.Main.Nodes() {
		if isDeviceCopy(n) {
			if n.Results[0].Tensor().Device == Device {
				h2d++
			} else {
				d2h++
			}
		}
	}
	// Host reads: sum (for %a), cnt (for %b), the result. Copies in: x,
	// n, and the two boxed items.
	if d2h != 3 || h2d != 4 {
		t.Errorf("%d device→host and %d host→device copies, want 3 and 4:\n%s", d2h, h2d, text)
	}
	last := res.Calls[2]
	direct := 0
	for _, a := range last.Args[2:] {
		if a.Value.Def != nil && isCudaCall(a.Value.Def) {
			direct++
		}
	}
	if direct < 2 {
		t.Errorf("the last partition takes %d earlier device results directly:\n%s", direct, text)
	}
}
