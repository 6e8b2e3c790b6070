package onnx

import (
	"testing"

	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// Opset-gated cases: each body runs at the opset below the newer op (the
// decomposition) and at the opset that has it.
var gatedCases = []struct {
	name, body, inputs string
	low, high          int
	newOp              string
}{
	{"group-norm", `
  %a: f32[2, 4, 3, 3], %m: f32[2, 2], %r: f32[2, 2] = aten.native_group_norm.default(%x, %w, %b, 2, 4, 9, 2, 1e-05)
  %c: f32[2, 4, 3, 3] = aten.group_norm.default(%x, 4, %w, %b, 1e-05)
  %out: f32[2, 4, 3, 3] = aten.add.Tensor(%a, %c)`, "%x: f32[2, 4, 3, 3], %w: f32[4], %b: f32[4]", 18, 21, "GroupNormalization"},
	{"group-norm-stats", `
  %a: f32[2, 4, 5], %m: f32[2, 2], %r: f32[2, 2] = aten.native_group_norm.default(%x, None, None, 2, 4, 5, 2, 1e-05)
  %s: f32[2, 2] = aten.add.Tensor(%m, %r)
  %t: f32[] = aten.sum.default(%s)
  %out: f32[2, 4, 5] = aten.add.Tensor(%a, %t)`, "%x: f32[2, 4, 5]", 17, 21, ""},
	{"rms-norm", `
  %a: f32[2, 3, 4] = aten.rms_norm.default(%x, [4], %w, 1e-06)
  %c: f32[2, 3, 4] = aten.rms_norm.default(%x, [3, 4])
  %out: f32[2, 3, 4] = aten.add.Tensor(%a, %c)`, "%x: f32[2, 3, 4], %w: f32[4]", 18, 23, "RMSNormalization"},
	{"sdpa", `
  %a: f32[1, 2, 3, 4] = aten.scaled_dot_product_attention.default(%q, %k, %v)
  %c: f32[1, 2, 3, 4] = aten.scaled_dot_product_attention.default(%q, %k, %v, %fm, scale=0.3)
  %out: f32[1, 2, 3, 4] = aten.add.Tensor(%a, %c)`, "%q: f32[1, 2, 3, 4], %k: f32[1, 2, 5, 4], %v: f32[1, 2, 5, 4], %fm: f32[3, 5]", 18, 23, "Attention"},
	{"sdpa-causal", `
  %out: f32[1, 2, 3, 4] = aten.scaled_dot_product_attention.default(%q, %k, %v, None, 0.0, True)`, "%q: f32[1, 2, 3, 4], %k: f32[1, 2, 3, 4], %v: f32[1, 2, 3, 4]", 18, 23, "Attention"},
	{"sdpa-gqa", `
  %out: f32[1, 4, 3, 4] = aten.scaled_dot_product_attention.default(%q, %k, %v, enable_gqa=True)`, "%q: f32[1, 4, 3, 4], %k: f32[1, 2, 5, 4], %v: f32[1, 2, 5, 4]", 18, 23, "Attention"},
	{"sdpa-3d-causal-rect", `
  %out: f32[2, 3, 4] = aten.scaled_dot_product_attention.default(%q, %k, %v, None, 0.0, True)`, "%q: f32[2, 3, 4], %k: f32[2, 5, 4], %v: f32[2, 5, 4]", 18, 23, ""},
}

func TestGatedOpsInORT(t *testing.T) {
	needORT(t)
	for _, c := range gatedCases {
		for _, opset := range []int{c.low, c.high} {
			t.Run(c.name+"/"+itoa(opset), func(t *testing.T) {
				p := caseProgram(t, opCase{name: c.name, body: c.body, inputs: c.inputs})
				m := checkInORT(t, p, opset, 1e-4)
				has := hasOp(m.Proto, c.newOp)
				if c.newOp != "" && has != (opset >= c.high) {
					t.Errorf("opset %d: %s emitted = %v", opset, c.newOp, has)
				}
			})
		}
	}
}

// The gated cases show in TestEveryEntryTested.
func init() {
	for _, c := range gatedCases {
		opCases = append(opCases, opCase{name: c.name, body: c.body, inputs: c.inputs, opset: c.low, tol: 1e-4})
	}
}

func hasOp(m *pb.ModelProto, op string) bool {
	for _, n := range m.GetGraph().GetNode() {
		if n.GetOpType() == op {
			return true
		}
	}
	return false
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// ONNX-TR03/TR04 cases (offs are graph constants: a fixed split 2, 2, 1 of
// 6 rows, so row 5 is past the last group and must be zero).
func init() {
	opCases = append(opCases,
		opCase{"grouped-mm", `
  %offs: i32[3] = aten.arange.start_step(2, 8, 2, dtype=torch.int32)
  %o2: i32[3] = aten.sub.Scalar(%offs, 1)
  %a: f32[6, 5] = aten._grouped_mm.default(%x, %w, %o2)
  %b: f32[2, 3, 5] = aten._grouped_mm.default(%y, %w3)
  %c: f32[6, 5] = transformers.grouped_mm_fallback.default(%x, %w, %o2)
  %s: f32[] = aten.sum.default(%b)
  %d: f32[6, 5] = aten.add.Tensor(%a, %c)
  %out: f32[6, 5] = aten.add.Tensor(%d, %s)`, "%x: f32[6, 4], %w: f32[3, 4, 5], %y: f32[2, 3, 4], %w3: f32[2, 4, 5]", 0, 1e-4})
}
