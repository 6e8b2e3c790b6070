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

func TestIndexPutMixedMaskFails(t *testing.T) {
	p := caseProgram(t, opCase{body: `
  %out: f32[4, 5] = aten.index_put.default(%x, [%m, %j], %v)`, inputs: "%x: f32[4, 5], %m: b8[4], %j: i64[4], %v: f32[]"})
	_, err := Emit(p, Options{})
	if err == nil || !strings.Contains(err.Error(), "boolean mask") || !strings.Contains(err.Error(), "%out") {
		t.Fatalf("err = %v; want the mixed-mask reason naming %%out", err)
	}
}
