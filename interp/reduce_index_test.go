package interp

import (
	"math"
	"testing"

	"github.com/fxport/fxport/ir"
)

func TestReductionDtypesAndDims(t *testing.T) {
	out := runIR(t, `graph forward(%b: b8[2, 3], %x: f32[2, 3]) {
  %sum: i64[] = aten.sum.default(%b)
  %sumd: f32[2, 1] = aten.sum.dim_IntList(%x, [-1], True)
  %sumall: f32[] = aten.sum.dim_IntList(%x, [])
  %mean: f32[3] = aten.mean.dim(%x, [0])
  %prod: i64[3] = aten.prod.dim_int(%b, 0)
  %var: f32[2] = aten.var.correction(%x, [1], correction=1)
  %std0: f32[2] = aten.std.correction(%x, [1], correction=0)
  %any: b8[3] = aten.any.dim(%b, 0)
  %all: b8[] = aten.all.default(%b)
  %cumsum: i64[2, 3] = aten.cumsum.default(%b, 1)
  %lse: f32[2] = aten.logsumexp.default(%x, [1])
  %norm: f32[] = aten.linalg_vector_norm.default(%x)
  return %sum, %sumd, %sumall, %mean, %prod, %var, %std0, %any, %all, %cumsum, %lse, %norm
}
`, b8(sh(2, 3), 1, 0, 1, 1, 1, 0), f32(sh(2, 3), 1, 2, 3, 4, 5, 9))
	wantT(t, out[0], ir.Int64, nil, 4)
	wantT(t, out[1], ir.Float32, sh(2, 1), 6, 18)
	wantT(t, out[2], ir.Float32, nil, 24)
	wantT(t, out[3], ir.Float32, sh(3), 2.5, 3.5, 6)
	wantT(t, out[4], ir.Int64, sh(3), 1, 0, 0)
	wantT(t, out[5], ir.Float32, sh(2), 1, 7)
	wantT(t, out[6], ir.Float32, sh(2), f32r(math.Sqrt(2.0/3)), f32r(math.Sqrt(14.0/3)))
	wantT(t, out[7], ir.Bool, sh(3), 1, 1, 1)
	wantT(t, out[8], ir.Bool, nil, 0)
	wantT(t, out[9], ir.Int64, sh(2, 3), 1, 1, 2, 1, 2, 2)
	lse := func(a, b, c float64) float64 { return f32r(math.Log(math.Exp(a) + math.Exp(b) + math.Exp(c))) }
	wantT(t, out[10], ir.Float32, sh(2), lse(1, 2, 3), lse(4, 5, 9))
	wantT(t, out[11], ir.Float32, nil, f32r(math.Sqrt(1+4+9+16+25+81)))

	_, err := runIRErr(t, `graph forward(%x: i64[3]) {
  %m: f32[] = aten.mean.default(%x)
  return %m
}
`, i64(sh(3), 1, 2, 3))
	wantErr(t, err, "mean()", "floating point")
}

func TestMaxDimTiesAndSort(t *testing.T) {
	out := runIR(t, `graph forward(%x: f32[2, 4]) {
  %max: f32[2], %idx: i64[2] = aten.max.dim(%x, 1)
  %amin: i64[2] = aten.argmin.default(%x, 1, False)
  %sorted: f32[2, 4], %order: i64[2, 4] = aten.sort.default(%x, 1)
  %desc: f32[2, 4], %dorder: i64[2, 4] = aten.sort.stable(%x, stable=True, dim=1, descending=True)
  %top: f32[2, 2], %ti: i64[2, 2] = aten.topk.default(%x, 2)
  %cmax: f32[2, 4], %ci: i64[2, 4] = aten.cummax.default(%x, 1)
  return %max, %idx, %amin, %sorted, %order, %dorder, %top, %ti, %ci
}
`, f32(sh(2, 4), 3, 1, 3, 0, 2, nan, 1, 2))
	wantT(t, out[0], ir.Float32, sh(2), 3, nan)
	wantT(t, out[1], ir.Int64, sh(2), 0, 1) // first of the ties; the NaN
	wantT(t, out[2], ir.Int64, sh(2), 3, 1)
	wantT(t, out[3], ir.Float32, sh(2, 4), 0, 1, 3, 3, 1, 2, 2, nan) // NaN last
	wantT(t, out[4], ir.Int64, sh(2, 4), 3, 1, 0, 2, 2, 0, 3, 1)     // stable
	wantT(t, out[5], ir.Int64, sh(2, 4), 0, 2, 1, 3, 1, 0, 3, 2)     // NaN first when descending
	wantT(t, out[6], ir.Float32, sh(2, 2), 3, 3, nan, 2)
	wantT(t, out[7], ir.Int64, sh(2, 2), 0, 2, 1, 0)
	wantT(t, out[8], ir.Int64, sh(2, 4), 0, 0, 2, 2, 0, 1, 1, 1) // ties take the later index
}

func TestSoftmaxAndNorms(t *testing.T) {
	out := runIR(t, `graph forward(%x: f32[2, 3], %w: f32[3], %b: f32[3]) {
  %sm: f32[2, 3] = aten._softmax.default(%x, 1, False)
  %lsm: f32[2, 3] = aten._log_softmax.default(%x, -1, False)
  %ln: f32[2, 3], %mean: f32[2, 1], %rstd: f32[2, 1] = aten.native_layer_norm.default(%x, [3], %w, %b, 1e-05)
  return %sm, %lsm, %ln, %mean, %rstd
}
`, f32(sh(2, 3), 1, 2, 3, -1, 0, 1000), f32(sh(3), 1, 2, 3), f32(sh(3), 0, 0, 1))
	e := []float64{math.Exp(1), math.Exp(2), math.Exp(3)}
	s := e[0] + e[1] + e[2]
	wantT(t, out[0], ir.Float32, sh(2, 3), f32r(e[0]/s), f32r(e[1]/s), f32r(e[2]/s), 0, 0, 1)
	wantT(t, out[1], ir.Float32, sh(2, 3), f32r(1-math.Log(s)), f32r(2-math.Log(s)), f32r(3-math.Log(s)), -1001, -1000, 0)
	r := 1 / math.Sqrt(2.0/3+1e-5)
	wantT(t, out[2].(*Tensor).sliceRow(0), ir.Float32, sh(3), f32r(-r), 0, f32r(3*r+1))
	wantT(t, out[3], ir.Float32, sh(2, 1), 2, 333)
	wantT(t, out[4].(*Tensor).sliceRow(0), ir.Float32, sh(1), f32r(r))
}

// sliceRow selects row i of dim 0 (test helper).
func (t *Tensor) sliceRow(i int64) *Tensor {
	v, _ := selectView(t, 0, i)
	return v
}

func TestBatchNormEvalAndTraining(t *testing.T) {
	out := runIR(t, `graph forward(%x: f32[2, 2, 1], %w: f32[2], %b: f32[2], %rm: f32[2], %rv: f32[2]) {
  %eval: f32[2, 2, 1], %sm: f32[0], %sr: f32[0] = aten._native_batch_norm_legit_no_training.default(%x, %w, %b, %rm, %rv, 0.1, 0.0)
  %tr: f32[2, 2, 1], %m: f32[2], %r: f32[2], %nrm: f32[2], %nrv: f32[2] = aten._native_batch_norm_legit_functional.default(%x, %w, %b, %rm, %rv, True, 0.5, 0.0)
  return %eval, %tr, %m, %nrm, %nrv
}
`, f32(sh(2, 2, 1), 1, 2, 3, 6), f32(sh(2), 1, 2), f32(sh(2), 0, 1), f32(sh(2), 1, 2), f32(sh(2), 4, 1))
	// eval: (x - rm) / sqrt(rv) * w + b
	wantT(t, out[0], ir.Float32, sh(2, 2, 1), 0, 1, 1, 9)
	// training: channel 0 = {1, 3}: mean 2, var 1; channel 1 = {2, 6}: mean 4, var 4.
	wantT(t, out[1], ir.Float32, sh(2, 2, 1), -1, -1, 1, 3)
	wantT(t, out[2], ir.Float32, sh(2), 2, 4)
	wantT(t, out[3], ir.Float32, sh(2), 1.5, 3)
	wantT(t, out[4], ir.Float32, sh(2), 3, 4.5) // unbiased batch variances 2 and 8
}

func TestViewsShareStorage(t *testing.T) {
	out := runIR(t, `graph forward(%x: f32[2, 3]) {
  %c: f32[2, 3] = aten.clone.default(%x)
  %p: f32[3, 2] = aten.permute.default(%c, [1, 0])
  %v: f32[6] = aten.reshape.default(%p, [6])
  %s: f32[3, 1] = aten.slice.Tensor(%p, 1, 1, 9223372036854775807)
  %u: f32[1, 3, 1] = aten.unsqueeze.default(%s, 0)
  %e: f32[2, 3, 2] = aten.expand.default(%u, [2, -1, 2])
  %d: f32[2] = aten.diagonal.default(%c)
  %fill: f32[2] = aten.fill_.Scalar(%d, 0)
  return %v, %e, %c
}
`, f32(sh(2, 3), 1, 2, 3, 4, 5, 6))
	wantT(t, out[0], ir.Float32, sh(6), 1, 4, 2, 5, 3, 6) // a copy: reshape of a non-viewable layout
	// %e views %c, so the later fill_ of %c's diagonal shows through it.
	wantT(t, out[1], ir.Float32, sh(2, 3, 2), 4, 4, 0, 0, 6, 6, 4, 4, 0, 0, 6, 6)
	wantT(t, out[2], ir.Float32, sh(2, 3), 0, 2, 3, 4, 0, 6) // fill_ through the diagonal view
}

func TestSplitChunkCatStack(t *testing.T) {
	out := runIR(t, `graph forward(%x: f32[5, 2]) {
  %a: f32[2, 2], %b: f32[2, 2], %c: f32[1, 2] = aten.split.Tensor(%x, 2)
  %d: f32[3, 2], %e: f32[2, 2] = aten.chunk.default(%x, 2)
  %cat: f32[3, 2] = aten.cat.default([%c, %a])
  %st: f32[2, 2, 2] = aten.stack.default([%a, %b], 1)
  %i: i64[1, 2] = aten._to_copy.default(%c, dtype=torch.int64)
  %mixed: f32[2, 2] = aten.cat.default([%i, %c])
  return %cat, %st, %e, %mixed
}
`, f32(sh(5, 2), 0, 1, 2, 3, 4, 5, 6, 7, 8.5, 9))
	wantT(t, out[0], ir.Float32, sh(3, 2), 8.5, 9, 0, 1, 2, 3)
	wantT(t, out[1], ir.Float32, sh(2, 2, 2), 0, 1, 4, 5, 2, 3, 6, 7)
	wantT(t, out[2], ir.Float32, sh(2, 2), 6, 7, 8.5, 9)
	wantT(t, out[3], ir.Float32, sh(2, 2), 8, 9, 8.5, 9)
}

func TestAdvancedIndexing(t *testing.T) {
	x := f32(sh(2, 3, 4), seqVals(24)...)
	out := runIR(t, `graph forward(%x: f32[2, 3, 4], %i: i64[2], %j: i64[2], %k: i64[2], %m: b8[2, 3]) {
  %a: f32[2, 2, 4] = aten.index.Tensor(%x, [None, %i])
  %b: f32[2, 3, 2] = aten.index.Tensor(%x, [None, None, %j])
  %c: f32[2, 3] = aten.index.Tensor(%x, [%k, None, %j])
  %d: f32[3, 4] = aten.index.Tensor(%x, [%m])
  %e: f32[2, 2] = aten.index.Tensor(%x, [None, %i, %j])
  return %a, %b, %c, %d, %e
}
`, x, i64(sh(2), 2, -3), i64(sh(2), 1, 3), i64(sh(2), 1, 0), b8(sh(2, 3), 1, 0, 0, 0, 1, 1))
	wantT(t, out[0], ir.Float32, sh(2, 2, 4), 8, 9, 10, 11, 0, 1, 2, 3, 20, 21, 22, 23, 12, 13, 14, 15)
	wantT(t, out[1], ir.Float32, sh(2, 3, 2), 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23)
	wantT(t, out[2], ir.Float32, sh(2, 3), 13, 17, 21, 3, 7, 11) // non-adjacent: broadcast dims first
	wantT(t, out[3], ir.Float32, sh(3, 4), 0, 1, 2, 3, 16, 17, 18, 19, 20, 21, 22, 23)
	wantT(t, out[4], ir.Float32, sh(2, 2), 9, 3, 21, 15)

	_, err := runIRErr(t, `graph forward(%x: f32[2, 3, 4], %i: i64[2]) {
  %a: f32[2, 2, 4] = aten.index.Tensor(%x, [None, %i])
  return %a
}
`, x, i64(sh(2), 3, 0))
	wantErr(t, err, "out of bounds", "%a (aten.index.Tensor)")
}

func TestIndexPutScatterGather(t *testing.T) {
	out := runIR(t, `graph forward(%x: f32[3, 2], %i: i64[3], %v: f32[3, 2], %idx: i64[2, 2]) {
  %put: f32[3, 2] = aten.index_put.default(%x, [%i], %v)
  %acc: f32[3, 2] = aten.index_put.default(%x, [%i], %v, True)
  %g: f32[2, 2] = aten.gather.default(%x, 0, %idx)
  %s: f32[3, 2] = aten.scatter_add.default(%x, 0, %idx, %v)
  %r: f32[3, 2] = aten.scatter_reduce.two(%x, 0, %idx, %v, "amax", include_self=False)
  %sel: f32[3, 2] = aten.index_select.default(%x, 0, %i)
  return %put, %acc, %g, %s, %r, %sel
}
`, f32(sh(3, 2), 1, 2, 3, 4, 5, 6), i64(sh(3), 2, 0, 2), f32(sh(3, 2), 10, 20, 30, 40, 50, 60), i64(sh(2, 2), 2, 0, 1, 2))
	wantT(t, out[0], ir.Float32, sh(3, 2), 30, 40, 3, 4, 50, 60) // the last write wins
	wantT(t, out[1], ir.Float32, sh(3, 2), 31, 42, 3, 4, 65, 86)
	wantT(t, out[2], ir.Float32, sh(2, 2), 5, 2, 3, 6)
	wantT(t, out[3], ir.Float32, sh(3, 2), 1, 22, 33, 4, 15, 46)
	wantT(t, out[4], ir.Float32, sh(3, 2), 1, 20, 30, 4, 10, 40)
	wantT(t, out[5], ir.Float32, sh(3, 2), 5, 6, 1, 2, 5, 6)
}

func TestEmbeddingAndNonzero(t *testing.T) {
	out := runIR(t, `graph forward(%w: f32[4, 2], %ids: i64[2, 2], %x: f32[2, 2]) {
  %e: f32[2, 2, 2] = aten.embedding.default(%w, %ids)
  %nz: i64[u0, 2] = aten.nonzero.default(%x)
  %n: Sym(u0) = aten.sym_size.int(%nz, 0)
  %z: f32[u0] = aten.zeros.default([%n])
  return %e, %nz, %z
}
`, f32(sh(4, 2), seqVals(8)...), i64(sh(2, 2), 3, 0, 1, 1), f32(sh(2, 2), 0, 1, 2, 0))
	wantT(t, out[0], ir.Float32, sh(2, 2, 2), 6, 7, 0, 1, 2, 3, 2, 3)
	wantT(t, out[1], ir.Int64, sh(2, 2), 0, 1, 1, 0)
	wantT(t, out[2], ir.Float32, sh(2), 0, 0)
}

func seqVals(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)
	}
	return v
}

// An index out of range names the op (gather and scatter share the walk
// that wraps indices) and negative indices wrap as in torch.
func TestGatherScatterIndexRange(t *testing.T) {
	x := f32(sh(3, 2), 1, 2, 3, 4, 5, 6)
	v := f32(sh(2, 2), 10, 20, 30, 40)
	out := runIR(t, `graph forward(%x: f32[3, 2], %idx: i64[2, 2], %v: f32[2, 2]) {
  %g: f32[2, 2] = aten.gather.default(%x, 0, %idx)
  %s: f32[3, 2] = aten.scatter.src(%x, 0, %idx, %v)
  return %g, %s
}
`, x, i64(sh(2, 2), -1, 0, 1, -3), v)
	wantT(t, out[0], ir.Float32, sh(2, 2), 5, 2, 3, 2)
	wantT(t, out[1], ir.Float32, sh(3, 2), 1, 40, 30, 4, 10, 6)
	for _, c := range []struct{ src, op string }{
		{"%r: f32[2, 2] = aten.gather.default(%x, 0, %idx)", "gather()"},
		{"%r: f32[3, 2] = aten.scatter.src(%x, 0, %idx, %v)", "scatter()"},
	} {
		_, err := runIRErr(t, "graph forward(%x: f32[3, 2], %idx: i64[2, 2], %v: f32[2, 2]) {\n  "+c.src+"\n  return %r\n}\n",
			x, i64(sh(2, 2), 0, 3, 1, 1), v)
		wantErr(t, err, c.op)
	}
}
