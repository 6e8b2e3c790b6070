package openvino

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

func parse(t *testing.T, src string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), "test.fxir")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func partitioned(t *testing.T, src string) (*ir.Program, *Result) {
	t.Helper()
	p := parse(t, src)
	res, err := Partition(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(p); err != nil {
		t.Fatalf("partitioned program does not verify: %v\n%s", err, ir.Print(p))
	}
	return p, res
}

// linearRelu is the shape of the genuine OpenVINO file: f32[1,8] → f32[1,8]
// (a linear layer with its weight and bias, then relu).
var linearRelu = `input p_w: parameter "w"
input p_b: parameter "b"
input x: user_input
output user_output
weight "w": f32[8, 8] = inline("` + f32Hex(64, 0.125) + `")
weight "b": f32[8] = inline("` + f32Hex(8, -0.5) + `")
graph forward(%p_w: f32[8, 8], %p_b: f32[8], %x: f32[1, 8]) {
  %linear: f32[1, 8] = aten.linear.default(%x, %p_w, %p_b)
  %relu: f32[1, 8] = aten.relu.default(%linear)
  return %relu
}
`

func TestPartitionClaimsSupportedGroup(t *testing.T) {
	p, res := partitioned(t, linearRelu)
	if len(res.Calls) != 1 || res.Nodes != 2 || len(res.Rejected) != 0 {
		t.Fatalf("result %+v", res)
	}
	text := ir.Print(p)
	want := `%relu: f32[1, 8] = higher_order.executorch_call_delegate(^openvino_partition_0, "OpenvinoBackend", %x, %p_w, %p_b)`
	if !strings.Contains(text, want) {
		t.Errorf("partitioned program lacks %q:\n%s", want, text)
	}
	call := res.Calls[0]
	if d, _ := call.Meta.Get(MetaDevice); d != "CPU" {
		t.Errorf("compile_spec.device = %q", d)
	}
	var ops []string
	for _, n := range call.Args[0].Graph.Nodes() {
		ops = append(ops, n.Op.Info().Name)
	}
	if strings.Join(ops, " ") != "aten.linear.default aten.relu.default" {
		t.Errorf("region ops %v", ops)
	}
	// Idempotent.
	res2, err := Partition(p)
	if err != nil || !res2.Existing || ir.Print(p) != text {
		t.Errorf("second Partition changed the program (err %v)", err)
	}
}

// An unsupported node splits the program into two partitions and stays
// portable between them. The partitions are fused latest-first, as exir
// fuses them, and numbered in that order.
func TestPartitionSeveralRegions(t *testing.T) {
	p, res := partitioned(t, `graph forward(%x: f32[2, 4]) {
  %relu: f32[2, 4] = aten.relu.default(%x)
  %softplus: f32[2, 4] = aten.softplus.default(%relu)
  %sigmoid: f32[2, 4] = aten.sigmoid.default(%softplus)
  %mul: f32[2, 4] = aten.mul.Tensor(%sigmoid, %sigmoid)
  return %mul
}
`)
	if len(res.Calls) != 2 || res.Nodes != 3 {
		t.Fatalf("calls %d nodes %d:\n%s", len(res.Calls), res.Nodes, ir.Print(p))
	}
	if len(res.Rejected) != 1 || res.Rejected[0].Node.Op.Info().Name != "aten.softplus.default" || !strings.Contains(res.Rejected[0].Reason, "op list") {
		t.Errorf("rejected %+v", res.Rejected)
	}
	var seq []string
	for _, n := range p.Main.Nodes() {
		if IsCall(n) {
			seq = append(seq, n.Args[0].Graph.Name)
		} else {
			seq = append(seq, n.Op.Info().Name)
		}
	}
	if got := strings.Join(seq, " "); got != "openvino_partition_1 aten.softplus.default openvino_partition_0" {
		t.Errorf("main graph %s", got)
	}
}

// A node reading both a partition and a portable node computed from it
// cannot join the partition (the region would not be convex).
func TestPartitionStaysConvex(t *testing.T) {
	p, res := partitioned(t, `graph forward(%x: f32[2, 4]) {
  %relu: f32[2, 4] = aten.relu.default(%x)
  %softplus: f32[2, 4] = aten.softplus.default(%relu)
  %add: f32[2, 4] = aten.add.Tensor(%relu, %softplus)
  return %add
}
`)
	if len(res.Calls) != 2 {
		t.Fatalf("%d calls, want 2 (relu, then add):\n%s", len(res.Calls), ir.Print(p))
	}
	for _, c := range res.Calls {
		if n := len(c.Args[0].Graph.Nodes()); n != 1 {
			t.Errorf("partition %s has %d nodes", c.Args[0].Graph.Name, n)
		}
	}
}

// Unbounded or data-dependent dims, SymInts crossing a partition's
// boundary, unsupported dtypes and strided layouts stay on portable
// kernels, with the reason.
func TestPartitionRejectsWithReasons(t *testing.T) {
	for name, tc := range map[string]struct{ src, reason string }{
		"unbounded": {"symbol s0: [2, inf] hint 2\ngraph forward(%x: f32[s0, 4]) {\n  %relu: f32[s0, 4] = aten.relu.default(%x)\n  return %relu\n}\n", "unbounded dynamic dim 0"},
		"unbacked":  {"symbol u0: [0, 8] unbacked\ngraph forward(%x: f32[u0, 4]) {\n  %relu: f32[u0, 4] = aten.relu.default(%x)\n  return %relu\n}\n", "unbacked symbol u0"},
		"f64":       {"graph forward(%x: f64[2, 4]) {\n  %relu: f64[2, 4] = aten.relu.default(%x)\n  return %relu\n}\n", "dtype f64"},
		"strided":   {"graph forward(%x: f32[1, 2, 3, 4]{0,2,3,1}) {\n  %relu: f32[1, 2, 3, 4]{0,2,3,1} = aten.relu.default(%x)\n  return %relu\n}\n", "not contiguous"},
		"empty":     {"graph forward(%x: f32[0, 4]) {\n  %relu: f32[0, 4] = aten.relu.default(%x)\n  return %relu\n}\n", "empty dim"},
		"op":        {"graph forward(%x: f32[2, 4]) {\n  %softplus: f32[2, 4] = aten.softplus.default(%x)\n  return %softplus\n}\n", "not in the OpenVINO partitioner's op list"},
	} {
		p, res := partitioned(t, tc.src)
		if len(res.Calls) != 0 || len(res.Rejected) != 1 || !strings.Contains(res.Rejected[0].Reason, tc.reason) {
			t.Errorf("%s: calls %d rejected %+v, want reason %q\n%s", name, len(res.Calls), res.Rejected, tc.reason, ir.Print(p))
		}
	}
}

// A dim with a finite upper bound is claimed, and shape arithmetic joins
// the partition that uses it: the view's SymInt size is computed inside
// the region from the region's tensor input, never passed to it.
func TestPartitionClaimsBoundedDynamicDims(t *testing.T) {
	p, res := partitioned(t, `symbol s0: [2, 8] hint 3
graph forward(%x: f32[s0, 4]) {
  %relu: f32[s0, 4] = aten.relu.default(%x)
  %sym_size: Sym(s0) = aten.sym_size.int(%x, 0)
  %mul: Sym(4*s0) = operator.mul(%sym_size, 4)
  %view: f32[4*s0] = aten.view.default(%relu, [%mul])
  return %view
}
`)
	if len(res.Calls) != 1 || res.Nodes != 4 || len(res.Rejected) != 0 {
		t.Fatalf("result %+v\n%s", res, ir.Print(p))
	}
	region := res.Calls[0].Args[0].Graph
	if len(region.Inputs) != 1 || region.Inputs[0].Tensor() == nil {
		t.Errorf("region inputs %v, want the tensor %%x only", region.Inputs)
	}
}

// A SymInt used both by a partition and by a portable node stays portable,
// and so do the claimed nodes reading it (the delegate takes tensors only).
func TestPartitionKeepsSymIntsInside(t *testing.T) {
	p, res := partitioned(t, `symbol s0: [2, 8] hint 3
graph forward(%x: f32[s0, 4]) {
  %sym_size: Sym(s0) = aten.sym_size.int(%x, 0)
  %relu: f32[s0, 4] = aten.relu.default(%x)
  %view: f32[s0, 4] = aten.view.default(%relu, [%sym_size, 4])
  %view_copy: f32[s0, 4] = aten.view_copy.default(%view, [%sym_size, 4])
  return %view_copy
}
`)
	reasons := map[string]string{}
	for _, r := range res.Rejected {
		reasons[r.Node.Results[0].Name] = r.Reason
	}
	if !strings.Contains(reasons["sym_size"], "SymInt used outside the partition") ||
		!strings.Contains(reasons["view"], "SymInt computed outside the partition") {
		t.Errorf("rejected %v\n%s", reasons, ir.Print(p))
	}
	for _, c := range res.Calls {
		for _, in := range c.Args[0].Graph.Inputs {
			if in.Tensor() == nil {
				t.Errorf("region input %s is %s", in, in.Type)
			}
		}
	}
}

// The op list is sorted by name and is the list docs/targets/executorch.md
// documents.
func TestSupportedOpsDocumented(t *testing.T) {
	var names []string
	for _, op := range SupportedOps {
		names = append(names, op.String())
	}
	if !sort.StringsAreSorted(names) {
		t.Error("SupportedOps is not sorted by name")
	}
	b, err := os.ReadFile("../../../docs/targets/executorch.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n## OpenVINO")
	if start < 0 {
		t.Fatal(`docs/targets/executorch.md has no "## OpenVINO" section`)
	}
	sec := doc[start+1:]
	if end := strings.Index(sec, "\n## "); end >= 0 {
		sec = sec[:end]
	}
	const marker = "Op list (`openvino.SupportedOps`):"
	i := strings.Index(sec, marker)
	if i < 0 {
		t.Fatalf("the OpenVINO section lacks %q", marker)
	}
	para := sec[i+len(marker):]
	if j := strings.Index(para, "\n\n"); j >= 0 {
		para = para[:j]
	}
	var documented []string
	for _, m := range regexp.MustCompile("`((?:aten|operator)\\.[^`]+)`").FindAllStringSubmatch(para, -1) {
		documented = append(documented, m[1])
	}
	if strings.Join(documented, " ") != strings.Join(names, " ") {
		t.Errorf("documented op list differs from SupportedOps:\ndoc:  %v\ncode: %v", documented, names)
	}
}

// f32Hex is n little-endian f32 values start, start+0.25, … in hex.
func f32Hex(n int, start float32) string {
	b := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(start+0.25*float32(i)))
	}
	return hex.EncodeToString(b)
}
