package onnx

import (
	"strings"
	"testing"
)

// indexPutCases: general integer index_put (several index tensors with
// broadcasting, None entries adjacent or not, negative indices,
// accumulate with duplicate indices).
var indexPutCases = []opCase{
	{"two-broadcast-negative", `
  %a: i64[3] = aten.arange.start(0, 3)
  %i: i64[3, 1] = aten.unsqueeze.default(%a, 1)
  %j: i64[2] = aten.arange.start_step(-1, -3, -1)
  %out: f32[4, 5, 3] = aten.index_put.default(%x, [%i, %j], %v)`, "%x: f32[4, 5, 3], %v: f32[3]", 0, 1e-6},
	{"none-leading", `
  %j: i64[2] = aten.arange.start(1, 3)
  %out: f32[4, 5, 3] = aten.index_put.default(%x, [None, %j], %v)`, "%x: f32[4, 5, 3], %v: f32[4, 2, 3]", 0, 1e-6},
	{"split-by-none", `
  %i: i64[3] = aten.arange.start(0, 3)
  %k: i64[3] = aten.arange.start_step(2, -1, -1)
  %out: f32[4, 5, 3] = aten.index_put.default(%x, [%i, None, %k], %v)`, "%x: f32[4, 5, 3], %v: f32[3, 5]", 0, 1e-6},
	{"accumulate-duplicates", `
  %out: f32[4, 5, 3] = aten.index_put.default(%x, [%ri, %rj], %v, True)`, "%x: f32[4, 5, 3], %ri: i64[6], %rj: i32[6], %v: f32[6, 3]", 0, 1e-5},
	{"accumulate-none", `
  %out: f32[4, 5, 3] = aten.index_put.default(%x, [None, %rj], %v, True)`, "%x: f32[4, 5, 3], %rj: i64[2, 2], %v: f32[1, 2, 2, 3]", 0, 1e-5},
	{"all-none-accumulate-17", `
  %out: f32[4, 3] = aten.index_put.default(%x, [None], %v, True)`, "%x: f32[4, 3], %v: f32[3]", 17, 1e-6},
}

func TestIndexPutGeneralInORT(t *testing.T) {
	needORT(t)
	for _, c := range indexPutCases {
		t.Run(c.name, func(t *testing.T) {
			checkInORT(t, caseProgram(t, c), c.opset, c.tol+1e-7)
		})
	}
}

// indexPutMaskCases: boolean masks mixed with integer indices or None, and
// masks with accumulate (a rank-k mask stands for the k coordinate rows of
// its nonzero elements). The masks are random inputs, so the true count N
// is only known at run time.
var indexPutMaskCases = []opCase{
	{"mask-then-int", `
  %j: i64[1] = aten.arange.start(2, 3)
  %out: f32[4, 5] = aten.index_put.default(%x, [%m, %j], %v)`, "%x: f32[4, 5], %m: b8[4], %v: f32[]", 0, 1e-6},
	{"int-then-2d-mask", `
  %i: i64[1] = aten.arange.start_step(-1, 0, 1)
  %out: f32[3, 4, 5] = aten.index_put.default(%x, [%i, %m], %v)`, "%x: f32[3, 4, 5], %m: b8[4, 5], %v: f32[1]", 0, 1e-6},
	{"none-then-mask", `
  %out: f32[4, 5, 3] = aten.index_put.default(%x, [None, %m], %v)`, "%x: f32[4, 5, 3], %m: b8[5], %v: f32[3]", 0, 1e-6},
	{"mask-int-split-by-none", `
  %k: i64[1] = aten.arange.start(1, 2)
  %out: f32[4, 5, 3] = aten.index_put.default(%x, [%m, None, %k], %v)`, "%x: f32[4, 5, 3], %m: b8[4], %v: f32[5]", 0, 1e-6},
	{"mask-accumulate", `
  %out: f32[4, 5, 3] = aten.index_put.default(%x, [%m], %v, True)`, "%x: f32[4, 5, 3], %m: b8[4, 5], %v: f32[3]", 0, 1e-5},
	{"mask-accumulate-17", `
  %out: f32[4, 5] = aten.index_put.default(%x, [%m], %v, True)`, "%x: f32[4, 5], %m: b8[4, 5], %v: f32[]", 17, 1e-5},
	{"int-mask-accumulate-duplicates", `
  %out: f32[4, 5] = aten.index_put.default(%x, [%ri, %m], %v, True)`, "%x: f32[4, 5], %ri: i64[6, 1], %m: b8[5], %v: f32[]", 0, 1e-5},
	{"mask-int-accumulate-int-values", `
  %out: i64[4, 5] = aten.index_put.default(%x, [%m, %rj], %v, True)`, "%x: i64[4, 5], %m: b8[4], %rj: i64[1], %v: i64[]", 0, 0},
}

func TestIndexPutMaskInORT(t *testing.T) {
	needORT(t)
	for _, c := range indexPutMaskCases {
		t.Run(c.name, func(t *testing.T) {
			checkInORT(t, caseProgram(t, c), c.opset, c.tol+1e-7)
		})
	}
}

// The mixed and accumulating mask forms lower to NonZero + ScatterND (the
// single plain mask stays a Where).
func TestIndexPutMaskLowering(t *testing.T) {
	for _, c := range []struct {
		name, body, inputs string
		want, not          string
	}{
		{"mixed", `
  %out: f32[4, 5] = aten.index_put.default(%x, [%m, %j], %v)`, "%x: f32[4, 5], %m: b8[4], %j: i64[1], %v: f32[]", "NonZero", ""},
		{"accumulate", `
  %out: f32[4, 5] = aten.index_put.default(%x, [%m], %v, True)`, "%x: f32[4, 5], %m: b8[4, 5], %v: f32[]", "NonZero", ""},
		{"plain", `
  %out: f32[4, 5] = aten.index_put.default(%x, [%m], %v)`, "%x: f32[4, 5], %m: b8[4, 5], %v: f32[]", "Where", "NonZero"},
	} {
		m, err := Emit(caseProgram(t, opCase{body: c.body, inputs: c.inputs}), Options{Optimize: OptimizeOff})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if findOp(m.Proto, c.want) == nil {
			t.Errorf("%s: no %s in the model", c.name, c.want)
		}
		if c.not != "" && findOp(m.Proto, c.not) != nil {
			t.Errorf("%s: unexpected %s in the model", c.name, c.not)
		}
	}
}

// Masks that overrun self's rank fail with the reason, naming the node.
func TestIndexPutMaskOverrunFails(t *testing.T) {
	p := caseProgram(t, opCase{body: `
  %out: f32[4, 5] = aten.index_put.default(%x, [%j, %m], %v)`, inputs: "%x: f32[4, 5], %m: b8[5, 2], %j: i64[1], %v: f32[]"})
	_, err := Emit(p, Options{})
	if err == nil || !strings.Contains(err.Error(), "overruns") || !strings.Contains(err.Error(), "%out") {
		t.Fatalf("err = %v; want the overrun reason naming %%out", err)
	}
}
