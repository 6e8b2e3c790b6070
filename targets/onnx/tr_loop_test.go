package onnx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fxport/fxport/internal/ort"
	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"

	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

const ssmScan = `symbol s0: [1, 64] hint 6
graph forward(%a: f32[s0, 3], %b: f32[s0, 3]) {
  %sa: f32[s0, 3], %sb: f32[s0, 3] = higher_order.associative_scan(^f, [%a, %b], [])
  ^f(%al: f32[3], %bl: f32[3], %ar: f32[3], %br: f32[3]) {
    %m: f32[3] = aten.mul.Tensor(%al, %ar)
    %n: f32[3] = aten.mul.Tensor(%ar, %bl)
    %o: f32[3] = aten.add.Tensor(%n, %br)
    return %m, %o
  }
  return %sa, %sb
}
`

// loopNodes counts Loop nodes in the main graph and checks each has a body.
func loopNodes(t *testing.T, m *Model) []*pb.NodeProto {
	t.Helper()
	var out []*pb.NodeProto
	for _, n := range m.Proto.GetGraph().GetNode() {
		if n.GetOpType() == "Loop" {
			if attr(n, "body").GetG() == nil {
				t.Fatalf("Loop %s has no body", n.GetName())
			}
			out = append(out, n)
		}
	}
	return out
}

func TestAssociativeScanSSMInORT(t *testing.T) {
	needORT(t)
	p := parse(t, ssmScan)
	m := checkInORT(t, p, 18, 1e-5)
	if len(loopNodes(t, m)) != 1 {
		t.Fatalf("want one Loop node")
	}
	// The same with keep-dim region inputs and the operands swapped.
	src := strings.NewReplacer("f32[3]", "f32[1, 3]", "(%al, %ar)", "(%ar, %al)", "(%n, %br)", "(%br, %n)").Replace(ssmScan)
	checkInORT(t, parse(t, src), 18, 1e-5)
}

func TestAssociativeScanOtherCombineFails(t *testing.T) {
	src := strings.Replace(ssmScan, "aten.add.Tensor(%n, %br)", "aten.sub.Tensor(%n, %br)", 1)
	_, err := Emit(parse(t, src), Options{})
	if err == nil || !strings.Contains(err.Error(), "%sa") || !strings.Contains(err.Error(), "first-order SSM combine") {
		t.Fatalf("err = %v; want a rejection naming %%sa", err)
	}
	src = strings.Replace(ssmScan, "aten.mul.Tensor(%ar, %bl)", "aten.mul.Tensor(%ar, %br)", 1)
	if _, err := Emit(parse(t, src), Options{}); err == nil {
		t.Fatal("a combine using b_r in the product was accepted")
	}
}

// runBoth runs p in the interpreter and in ORT on the given inputs and
// compares every output within tol.
func runBoth(t *testing.T, p *ir.Program, inputs []interp.Value, opset int, tol float64) *Model {
	t.Helper()
	want, err := interp.Run(p, inputs, interp.Options{})
	if err != nil {
		t.Fatalf("interpreter: %v", err)
	}
	m, err := Emit(p, Options{Opset: opset})
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	var ins []ort.Tensor
	for _, v := range inputs {
		ins = append(ins, toORT(t, v))
	}
	got, err := m.RunORT(ins)
	if err != nil {
		t.Fatalf("ORT: %v", err)
	}
	for i, w := range want.Outputs {
		wt := w.(*interp.Tensor)
		g, err := got[i].Float64s()
		if err != nil {
			t.Fatal(err)
		}
		d := Compare(got[i].Name, g, got[i].Shape, wt.Contiguous().Float64s(), wt.Shape)
		if !d.OK(tol) {
			t.Errorf("output %d %s: %s max abs %g max rel %g", i, d.Name, d.Err, d.MaxAbs, d.MaxRel)
		}
	}
	return m
}

func TestVarlenAttnInORT(t *testing.T) {
	needORT(t)
	for _, c := range []struct {
		name   string
		hk     int
		causal bool
		cu     []int64
		opset  int
	}{
		{"mha", 2, false, []int64{0, 3, 3, 7}, 18},
		{"gqa-causal", 1, true, []int64{0, 2, 5, 7}, 18},
		{"mha-causal-17", 2, true, []int64{0, 4, 4, 6}, 17}, // row 6 outside every segment
	} {
		t.Run(c.name, func(t *testing.T) {
			src := varlenSrc(c.hk, c.causal)
			p := parse(t, src)
			ins := randInputs(t, p, 3)
			ins[3] = interp.FromInt64(ir.Int32, []int64{4}, c.cu)
			m := runBoth(t, p, ins, c.opset, 1e-5)
			if len(loopNodes(t, m)) != 1 {
				t.Fatal("want one Loop node")
			}
		})
	}
}

func varlenSrc(hk int, causal bool) string {
	c := ""
	if causal {
		c = ", True"
	}
	return fmt.Sprintf(`graph forward(%%q: f32[7, 2, 4], %%k: f32[7, %[1]d, 4], %%v: f32[7, %[1]d, 3], %%cu: i32[4]) {
  %%o: f32[7, 2, 3], %%lse: f32[2, 7], %%rng: u64[2] = torch_attn._varlen_attn.default(%%q, %%k, %%v, %%cu, %%cu, 4, 4%[2]s)
  return %%o, %%lse
}
`, hk, c)
}

// loopCasePrograms are the Loop translations' ORT-tested programs, counted
// by TestEveryEntryTested.
var loopCasePrograms = []string{ssmScan, varlenSrc(1, true)}

// TestLoopEmissionDeterministic: models with Loop/If bodies serialize
// byte-identically across emissions.
func TestLoopEmissionDeterministic(t *testing.T) {
	for _, src := range loopCasePrograms {
		var prev []byte
		for i := 0; i < 2; i++ {
			m, err := Emit(parse(t, src), Options{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := m.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if prev != nil && string(prev) != string(b) {
				t.Fatal("two emissions differ")
			}
			prev = b
		}
	}
}
