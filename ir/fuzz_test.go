package ir_test

import (
	"testing"

	"github.com/fxport/fxport/ir"
)

// FuzzParseIR checks that Parse never panics and that whatever it accepts
// prints and parses back to the same text.
func FuzzParseIR(f *testing.F) {
	f.Add(mlpText)
	f.Add("graph forward(%x: f32[s0, 4]) {\n  %n: f32[s0, 4] = aten.neg.default(%x)\n  return %n\n}\n")
	f.Add("symbol s0: [2, inf] hint 3\ngraph f(%p: b8[]) {\n  return %p, None, 3\n}\n")
	f.Add("graph f(%x: f32[4]) {\n  %c: f32[4] = higher_order.cond(True, ^t, ^e, [%x])\n  ^t(%a: f32[4]) {\n    return %a\n  }\n  ^e(%a: f32[4]) {\n    return %a\n  }\n  return %c\n}\n")
	f.Fuzz(func(t *testing.T, src string) {
		p, err := ir.Parse([]byte(src), "fuzz.fxir")
		if err != nil {
			return
		}
		text := ir.Print(p)
		q, err := ir.Parse([]byte(text), "printed.fxir")
		if err != nil {
			t.Fatalf("printed program does not parse: %v\n%s", err, text)
		}
		if again := ir.Print(q); again != text {
			t.Fatalf("round trip differs:\n%s\n---\n%s", text, again)
		}
		_ = ir.Verify(p) // must not panic either
	})
}
