package passes

import (
	"encoding/binary"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

func constPropOpen(t *testing.T, s ir.WeightSource) []byte {
	t.Helper()
	r, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != s.Size() {
		t.Fatalf("%d bytes, Size says %d", len(b), s.Size())
	}
	return b
}

func constPropF32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// A nested chain (cast of an int64 constant, then sub with alpha and a
// cat of two sources) computes torch's values and prints/parses back to
// the same spelling.
func TestConstPropSourceComputesAndRoundTrips(t *testing.T) {
	cast := `const_prop(op="dim_order_ops._to_dim_order_copy.default", result=0, dtype="f32", shape=[], args=[None, torch.float32, None, None, None, False, []], operands=[[0, -1, "i64", [], "inline(\"0300000000000000\")"]])`
	src, err := ir.ParseWeightSource(cast)
	if err != nil {
		t.Fatal(err)
	}
	if got := constPropF32s(constPropOpen(t, src)); len(got) != 1 || got[0] != 3 {
		t.Errorf("cast of int64 3 = %v", got)
	}
	sub := &ConstPropSource{Op: ir.MustLookupOp("aten.sub.Tensor"), DType: ir.Float32, Shape: []int64{2},
		Args: []ir.Arg{ir.NoneArg(), ir.NoneArg(), ir.IntArg(2)},
		Operands: []ConstPropOperand{
			{Arg: 0, Elem: -1, DType: ir.Float32, Shape: []int64{2}, Source: mustSource(t, `inline("0000803f00002041")`)}, // [1, 10]
			{Arg: 1, Elem: -1, DType: ir.Float32, Shape: []int64{}, Source: src},
		}}
	if got := constPropF32s(constPropOpen(t, sub)); len(got) != 2 || got[0] != -5 || got[1] != 4 {
		t.Errorf("[1, 10] - 2·3 = %v", got)
	}
	cat := &ConstPropSource{Op: ir.MustLookupOp("aten.cat.default"), DType: ir.Float32, Shape: []int64{3},
		Args: []ir.Arg{ir.ListArg(ir.NoneArg(), ir.NoneArg()), ir.IntArg(0)},
		Operands: []ConstPropOperand{
			{Arg: 0, Elem: 0, DType: ir.Float32, Shape: []int64{2}, Source: sub},
			{Arg: 0, Elem: 1, DType: ir.Float32, Shape: []int64{}, Source: src},
		}}
	// cat of a [2] and a 0-d tensor is a kernel error, reported, not a panic.
	if _, err := cat.Open(); err == nil {
		t.Errorf("cat with a 0-d operand opened")
	}
	cat.Operands[1] = ConstPropOperand{Arg: 0, Elem: 1, DType: ir.Float32, Shape: []int64{1}, Source: mustSource(t, `inline("0000c03f")`)}
	if got := constPropF32s(constPropOpen(t, cat)); len(got) != 3 || got[0] != -5 || got[1] != 4 || got[2] != 1.5 {
		t.Errorf("cat = %v", got)
	}
	back, err := ir.ParseWeightSource(cat.String())
	if err != nil {
		t.Fatalf("parse %s: %v", cat, err)
	}
	if back.String() != cat.String() {
		t.Errorf("round trip:\n%s\n%s", cat, back)
	}
	if got := constPropF32s(constPropOpen(t, back)); len(got) != 3 || got[2] != 1.5 {
		t.Errorf("parsed cat = %v", got)
	}
}

func mustSource(t *testing.T, s string) ir.WeightSource {
	t.Helper()
	src, err := ir.ParseWeightSource(s)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// Malformed spellings are errors naming what is wrong.
func TestConstPropSourceParseErrors(t *testing.T) {
	for spelling, want := range map[string]string{
		`const_prop(op="aten.neg.default", result=0, dtype="f32", shape=[1], args=[None])`:                                                         "missing operands",
		`const_prop(op="aten.nope", result=0, dtype="f32", shape=[1], args=[None], operands=[])`:                                                   "op must name a known op",
		`const_prop(op="aten.neg.default", result=1, dtype="f32", shape=[1], args=[None], operands=[])`:                                            "has no result 1",
		`const_prop(op="aten.neg.default", result=0, dtype="q9", shape=[1], args=[None], operands=[])`:                                             "unknown dtype",
		`const_prop(op="aten.neg.default", result=0, dtype="f32", shape=[1], args=[None], operands=[[0, -1, "f32", [2]]])`:                         "want [argument index",
		`const_prop(op="aten.neg.default", result=0, dtype="f32", shape=[1], args=[None], operands=[[0, -1, "f32", [2], "inline(\"0000803f\")"]])`: "has 4 bytes, want 8",
		`const_prop(op="aten.neg.default", result=0, dtype="f32", shape=[1], args=[1.5], operands=[[0, -1, "f32", [1], "inline(\"0000803f\")"]])`:  "not an operand slot",
		`const_prop(op="aten.neg.default", result=0, dtype="f32", shape=[1], args=[None], operands=[], extra=1)`:                                   "unknown argument",
		`const_prop("aten.neg.default")`: "keyword arguments only",
	} {
		_, err := ir.ParseWeightSource(spelling)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", spelling, err, want)
		}
	}
}

// With enable=false (the default) nothing changes; max-bytes rejects a
// negative or non-numeric value when the pipeline is parsed.
func TestConstantPropagationOptions(t *testing.T) {
	for _, bad := range []string{"-1", "x"} {
		_, err := pm.ParsePipeline("executorch.portable: executorch.lowering(fold-constant-views, constant-propagation{enable=true max-bytes=" + bad + "})")
		if err == nil || !strings.Contains(err.Error(), "max-bytes") {
			t.Errorf("max-bytes=%s: %v", bad, err)
		}
	}
}
