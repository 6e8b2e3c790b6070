package ir_test

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

// refused parses src and verifies it: one of the two must fail with an
// error containing want.
func refused(t *testing.T, src, want string) {
	t.Helper()
	p, err := ir.Parse([]byte(src), "hostile.fxir")
	if err == nil {
		err = ir.Verify(p)
	}
	if err == nil {
		t.Fatalf("accepted:\n%s", src)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
}

func accepted(t *testing.T, src string) {
	t.Helper()
	p, err := ir.Parse([]byte(src), "ok.fxir")
	if err == nil {
		err = ir.Verify(p)
	}
	if err != nil {
		t.Fatalf("refused: %v\n%s", err, src)
	}
}

const addGraph = "graph forward(%x: f32[s0, 4]) {\n  %y: f32[s0, 4] = aten.add.Tensor(%x, %x)\n  return %y\n}\n"

func TestVerifySymbolRanges(t *testing.T) {
	accepted(t, "symbol s0: [2, 64] hint 8\n"+addGraph)
	refused(t, "symbol s0: [64, 2]\n"+addGraph, "range [64, 2] is empty")
	refused(t, "symbol s0: [2, 64] hint 100\n"+addGraph, "hint 100 is outside its range")
	refused(t, "symbol s0: [-3, 64]\n"+addGraph, "allows negative sizes")
}

func TestVerifyNegativeDims(t *testing.T) {
	refused(t, "graph forward(%x: f32[-2, 4]) {\n  return %x\n}\n", "negative")
}

func TestVerifyWeightSizes(t *testing.T) {
	const g = "input p_w: parameter \"w\"\ninput x: user_input\noutput user_output\ngraph forward(%p_w: f32[2], %x: f32[2]) {\n  %y: f32[2] = aten.add.Tensor(%x, %p_w)\n  return %y\n}\n"
	accepted(t, "weight \"w\": f32[2] = inline(\"0000803f00000040\")\n"+g)
	refused(t, "weight \"w\": f32[2] = inline(\"0000803f\")\n"+g, "needs 8 bytes")
	refused(t, "weight \"w\": f32[2] = inline(\"0000803f000000400000\")\n"+g, "longer than the 8")
	const huge = "input p_w: parameter \"w\"\ninput x: user_input\noutput user_output\ngraph forward(%p_w: f32[4611686018427387904], %x: f32[2]) {\n  return %x\n}\n"
	refused(t, "weight \"w\": f32[4611686018427387904] = inline(\"0000803f00000040\")\n"+huge, "overflows")
	const big = "input p_w: parameter \"w\"\ninput x: user_input\noutput user_output\ngraph forward(%p_w: f32[1073741824], %x: f32[2]) {\n  return %x\n}\n"
	refused(t, "weight \"w\": f32[1073741824] = inline(\"0000803f00000040\")\n"+big, "needs 4294967296 bytes")
}

func TestVerifyCond(t *testing.T) {
	const ok = "graph f(%x: f32[4]) {\n  %c: f32[4] = higher_order.cond(True, ^t, ^e, [%x])\n  ^t(%a: f32[4]) {\n    return %a\n  }\n  ^e(%a: f32[4]) {\n    return %a\n  }\n  return %c\n}\n"
	accepted(t, ok)
	refused(t, strings.Replace(ok, "[%x]", "[%x, %x]", 1), "takes 1 inputs, the node passes 2 operands")
	refused(t, strings.Replace(ok, "^e(%a: f32[4]) {\n    return %a", "^e(%a: i64[4]) {\n    return %a", 1), "branch ^e")
	refused(t, strings.Replace(ok, "^t(%a: f32[4]) {\n    return %a\n", "^t(%a: f32[4]) {\n    return %a, %a\n", 1), "returns 2 values for 1 results")
}
