package onnx

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

// opCase is one translation-table test: a small graph, run in ONNX Runtime
// and compared with the reference interpreter on the same inputs.
type opCase struct {
	name, body string
	inputs     string // graph parameters
	opset      int
	tol        float64
}

// fftBody exercises the FFTs on the real (re, im) form of complex tensors:
// r2c one-sided and full, over one and two dims; c2c forward and inverse
// with each normalization; complex(), narrow and view_as_complex/real.
const fftBody = `
  %r1: c64[3, 5] = aten._fft_r2c.default(%x, [1], 2, True)
  %r2: c64[3, 8] = aten._fft_r2c.default(%x, [0, 1], 1, False)
  %rr1: f32[3, 5, 2] = aten.view_as_real.default(%r1)
  %z: c64[3, 8] = aten.view_as_complex.default(%y)
  %c1: c64[3, 8] = aten._fft_c2c.default(%z, [1], 0, False)
  %c2: c64[3, 8] = aten._fft_c2c.default(%c1, [0, 1], 2, True)
  %c3: c64[3, 8] = aten._fft_c2c.default(%r2, [0], 1, False)
  %n1: c64[3, 5] = aten.narrow.default(%c2, 1, 2, 5)
  %rc: f32[3, 8, 2] = aten.view_as_real.default(%c3)
  %re: f32[3, 8] = aten.select.int(%rc, 2, 0)
  %im: f32[3, 8] = aten.select.int(%rc, -1, 1)
  %w: c64[3, 8] = aten.complex.default(%im, %re)
  %n2: c64[3, 5] = aten.narrow.default(%w, -1, 0, 5)
  %rn1: f32[3, 5, 2] = aten.view_as_real.default(%n1)
  %rn2: f32[3, 5, 2] = aten.view_as_real.default(%n2)
  %s1: f32[3, 5, 2] = aten.add.Tensor(%rr1, %rn1)
  %out: f32[3, 5, 2] = aten.add.Tensor(%s1, %rn2)`

// cases are IR bodies over the inputs; the last line's value is returned.
var opCases = []opCase{
	{"unary", `
  %a: f32[2, 3] = aten.abs.default(%x)
  %b: f32[2, 3] = aten.neg.default(%a)
  %c: f32[2, 3] = aten.relu.default(%x)
  %d: f32[2, 3] = aten.exp.default(%b)
  %e: f32[2, 3] = aten.sigmoid.default(%d)
  %f: f32[2, 3] = aten.tanh.default(%e)
  %g: f32[2, 3] = aten.sqrt.default(%a)
  %h: f32[2, 3] = aten.rsqrt.default(%d)
  %i: f32[2, 3] = aten.silu.default(%x)
  %j: f32[2, 3] = aten.hardswish.default(%x)
  %k: f32[2, 3] = aten.hardsigmoid.default(%x)
  %l: f32[2, 3] = aten.erf.default(%x)
  %m: f32[2, 3] = aten.sin.default(%x)
  %n: f32[2, 3] = aten.cos.default(%x)
  %o: f32[2, 3] = aten.floor.default(%x)
  %p: f32[2, 3] = aten.ceil.default(%x)
  %q: f32[2, 3] = aten.log.default(%d)
  %r: f32[2, 3] = aten.reciprocal.default(%d)
  %s: f32[2, 3] = aten.trunc.default(%x)
  %t: f32[2, 3] = aten.sign.default(%x)
  %u: f32[2, 3] = aten.expm1.default(%x)
  %v: f32[2, 3] = aten.log1p.default(%a)
  %w: f32[2, 3] = aten.mish.default(%x)
  %s1: f32[2, 3] = aten.add.Tensor(%c, %f)
  %s2: f32[2, 3] = aten.add.Tensor(%s1, %g)
  %s3: f32[2, 3] = aten.add.Tensor(%s2, %h)
  %s4: f32[2, 3] = aten.add.Tensor(%s3, %i)
  %s5: f32[2, 3] = aten.add.Tensor(%s4, %j)
  %s6: f32[2, 3] = aten.add.Tensor(%s5, %k)
  %s7: f32[2, 3] = aten.add.Tensor(%s6, %l)
  %s8: f32[2, 3] = aten.add.Tensor(%s7, %m)
  %s9: f32[2, 3] = aten.add.Tensor(%s8, %n)
  %t1: f32[2, 3] = aten.add.Tensor(%s9, %o)
  %t2: f32[2, 3] = aten.add.Tensor(%t1, %p)
  %t3: f32[2, 3] = aten.add.Tensor(%t2, %q)
  %t4: f32[2, 3] = aten.add.Tensor(%t3, %r)
  %t5: f32[2, 3] = aten.add.Tensor(%t4, %s)
  %t6: f32[2, 3] = aten.add.Tensor(%t5, %t)
  %t7: f32[2, 3] = aten.add.Tensor(%t6, %u)
  %t8: f32[2, 3] = aten.add.Tensor(%t7, %v)
  %out: f32[2, 3] = aten.add.Tensor(%t8, %w)`, "%x: f32[2, 3]", 0, 1e-5},
	{"gelu", `
  %a: f32[2, 3] = aten.gelu.default(%x)
  %b: f32[2, 3] = aten.gelu.default(%x, approximate="tanh")
  %out: f32[2, 3] = aten.add.Tensor(%a, %b)`, "%x: f32[2, 3]", 0, 1e-5},
	{"gelu20", `
  %a: f32[2, 3] = aten.gelu.default(%x)
  %b: f32[2, 3] = aten.gelu.default(%x, approximate="tanh")
  %out: f32[2, 3] = aten.add.Tensor(%a, %b)`, "%x: f32[2, 3]", 20, 1e-5},
	{"binary", `
  %a: f32[2, 3] = aten.add.Tensor(%x, %y, alpha=2)
  %b: f32[2, 3] = aten.sub.Tensor(%a, %y)
  %c: f32[2, 3] = aten.mul.Tensor(%b, %y)
  %d: f32[2, 3] = aten.div.Tensor(%c, 3.0)
  %e: f32[2, 3] = aten.maximum.default(%d, %x)
  %f: f32[2, 3] = aten.minimum.default(%e, %y)
  %g: f32[2, 3] = aten.pow.Tensor_Scalar(%f, 2)
  %h: f32[2, 3] = aten.mul.Scalar(%g, 0.5)
  %i: f32[2, 3] = aten.rsub.Scalar(%h, 1.0)
  %j: f32[2, 3] = aten.add.Scalar(%i, 2)
  %k: f32[2, 3] = aten.sub.Scalar(%j, 1)
  %l: f32[2, 3] = aten.div.Tensor_mode(%k, %y, rounding_mode="floor")
  %m: f32[2, 3] = aten.remainder.Scalar(%x, 0.7)
  %n: f32[2, 3] = aten.clamp.default(%m, -0.2, 0.3)
  %o: f32[2, 3] = aten.hardtanh.default(%x, -0.5, 0.5)
  %p: f32[2, 3] = aten.leaky_relu.default(%x, 0.1)
  %q: f32[2, 3] = aten.elu.default(%x)
  %r: f32[2, 3] = aten.softplus.default(%x)
  %s1: f32[2, 3] = aten.add.Tensor(%l, %n)
  %s2: f32[2, 3] = aten.add.Tensor(%s1, %o)
  %s3: f32[2, 3] = aten.add.Tensor(%s2, %p)
  %s4: f32[2, 3] = aten.add.Tensor(%s3, %q)
  %out: f32[2, 3] = aten.add.Tensor(%s4, %r)`, "%x: f32[2, 3], %y: f32[2, 3]", 0, 1e-5},
	{"compare-where", `
  %a: b8[2, 3] = aten.lt.Tensor(%x, %y)
  %b: b8[2, 3] = aten.ge.Scalar(%x, 0.5)
  %c: b8[2, 3] = aten.logical_and.default(%a, %b)
  %d: b8[2, 3] = aten.logical_not.default(%c)
  %e: b8[2, 3] = aten.ne.Tensor(%x, %y)
  %f: b8[2, 3] = aten.logical_or.default(%d, %e)
  %g: b8[2, 3] = aten.eq.Scalar(%x, 0.0)
  %h: b8[2, 3] = aten.logical_xor.default(%f, %g)
  %i: b8[2, 3] = aten.le.Tensor(%x, %y)
  %j: b8[2, 3] = aten.gt.Scalar(%x, 0.1)
  %k: b8[2, 3] = aten.where.self(%h, %i, %j)
  %l: f32[2, 3] = aten.where.self(%k, %x, %y)
  %m: f32[2, 3] = aten.masked_fill.Scalar(%l, %a, -1.0)
  %n: b8[2, 3] = aten.masked_fill.Scalar(%k, %a, True)
  %o: f32[2, 3] = aten._to_copy.default(%n, dtype=torch.float32)
  %out: f32[2, 3] = aten.add.Tensor(%m, %o)`, "%x: f32[2, 3], %y: f32[2, 3]", 0, 1e-6},
	{"reduce-softmax", `
  %a: f32[2, 1, 4] = aten.mean.dim(%x, [1], True)
  %b: f32[2, 1, 4] = aten.sum.dim_IntList(%x, [1], True)
  %c: f32[2, 3, 1] = aten.amax.default(%x, [-1], True)
  %d: f32[2, 3, 1] = aten.amin.default(%x, [-1], True)
  %e: f32[2, 3, 4] = aten._softmax.default(%x, -1, False)
  %f: f32[2, 3, 4] = aten._log_softmax.default(%x, 1, False)
  %g: f32[] = aten.mean.default(%x)
  %h: f32[] = aten.sum.default(%x)
  %i: f32[2, 3, 4] = aten.cumsum.default(%x, 2)
  %s1: f32[2, 3, 4] = aten.add.Tensor(%e, %a)
  %s2: f32[2, 3, 4] = aten.add.Tensor(%s1, %b)
  %s3: f32[2, 3, 4] = aten.add.Tensor(%s2, %c)
  %s4: f32[2, 3, 4] = aten.sub.Tensor(%s3, %d)
  %s5: f32[2, 3, 4] = aten.add.Tensor(%s4, %f)
  %s6: f32[2, 3, 4] = aten.add.Tensor(%s5, %g)
  %s7: f32[2, 3, 4] = aten.add.Tensor(%s6, %h)
  %out: f32[2, 3, 4] = aten.add.Tensor(%s7, %i)`, "%x: f32[2, 3, 4]", 0, 1e-5},
	{"reduce17", `
  %a: f32[2, 1, 4] = aten.mean.dim(%x, [1], True)
  %c: f32[2, 3, 1] = aten.amax.default(%x, [-1], True)
  %out: f32[2, 3, 4] = aten.add.Tensor(%a, %c)`, "%x: f32[2, 3, 4]", 17, 1e-5},
	{"argmax", `
  %out: i64[2, 4] = aten.argmax.default(%x, 1)`, "%x: f32[2, 3, 4]", 0, 0},
	{"shape", `
  %a: f32[6, 4] = aten.view.default(%x, [6, 4])
  %b: f32[4, 6] = aten.t.default(%a)
  %c: f32[6, 4] = aten.permute.default(%b, [1, 0])
  %d: f32[2, 3, 4] = aten.reshape.default(%c, [2, 3, 4])
  %e: f32[2, 4, 3] = aten.transpose.int(%d, 1, 2)
  %f: f32[2, 1, 4, 3] = aten.unsqueeze.default(%e, 1)
  %g: f32[2, 4, 3] = aten.squeeze.dim(%f, 1)
  %h: f32[2, 4, 3] = aten.clone.default(%g)
  %i: f32[2, 2, 3] = aten.slice.Tensor(%h, 1, 1, 4, 2)
  %j: f32[2, 3] = aten.select.int(%i, 1, -1)
  %k: f32[2, 6] = aten.cat.default([%j, %j], 1)
  %l: f32[2, 2, 6] = aten.stack.default([%k, %k], 1)
  %m: f32[3, 2, 2, 6] = aten.expand.default(%l, [3, -1, -1, -1])
  %n: f32[3, 24] = aten.flatten.using_ints(%m, 1)
  %o: f32[3, 10], %p: f32[3, 14] = aten.split_with_sizes.default(%n, [10, 14], 1)
  %q: f32[3, 10] = aten.detach.default(%o)
  %r: f32[3, 10] = aten.alias.default(%q)
  %s: f32[3, 14] = aten.contiguous.default(%p)
  %out: f32[3, 24] = aten.cat.default([%r, %s], -1)`, "%x: f32[2, 3, 4]", 0, 0},
	{"split-chunk", `
  %a: f32[2, 2], %b: f32[2, 2] = aten.split.Tensor(%x, 2, 1)
  %c: f32[1, 4], %d: f32[1, 4] = aten.chunk.default(%x, 2)
  %e: f32[2, 4] = aten.cat.default([%a, %b], 1)
  %f: f32[2, 4] = aten.cat.default([%c, %d])
  %out: f32[2, 4] = aten.add.Tensor(%e, %f)`, "%x: f32[2, 4]", 0, 0},
	{"unsafe-split", `
  %a: f32[2, 3], %b: f32[2, 1] = aten.unsafe_split.Tensor(%x, 3, 1)
  %c: f32[2, 1], %d: f32[2, 3] = aten.unsafe_split_with_sizes.default(%x, [1, 3], 1)
  %e: f32[2, 4] = aten.cat.default([%b, %a], 1)
  %f: f32[2, 4] = aten.cat.default([%d, %c], 1)
  %out: f32[2, 4] = aten.sub.Tensor(%e, %f, alpha=2)`, "%x: f32[2, 4]", 0, 0},
	{"linalg", `
  %a: f32[2, 5] = aten.mm.default(%x, %w)
  %b: f32[2, 5] = aten.addmm.default(%bias, %x, %w, beta=0.5, alpha=2)
  %c: f32[2, 5] = aten.linear.default(%x, %wt, %bias)
  %d: f32[2, 5] = aten.linear.default(%x, %wt)
  %e: f32[1, 2, 5] = aten.unsqueeze.default(%a, 0)
  %f: f32[1, 5, 2] = aten.transpose.int(%e, 1, 2)
  %g: f32[1, 2, 2] = aten.bmm.default(%e, %f)
  %h: f32[1, 2, 5] = aten.matmul.default(%g, %e)
  %i: f32[2, 5] = aten.squeeze.dim(%h, 0)
  %s1: f32[2, 5] = aten.add.Tensor(%i, %b)
  %s2: f32[2, 5] = aten.add.Tensor(%s1, %c)
  %out: f32[2, 5] = aten.add.Tensor(%s2, %d)`, "%x: f32[2, 3], %w: f32[3, 5], %wt: f32[5, 3], %bias: f32[5]", 0, 1e-4},
	{"conv-pool-bn", `
  %a: f32[1, 4, 4, 4] = aten.convolution.default(%x, %w, %cb, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  %b: f32[1, 4, 4, 4], %b1: f32[0], %b2: f32[0] = aten.native_batch_norm.default(%a, %g, %cb, %rm, %rv, False, 0.1, 1e-05)
  %c: f32[1, 4, 2, 2], %c1: i64[1, 4, 2, 2] = aten.max_pool2d_with_indices.default(%b, [2, 2], [2, 2])
  %d: f32[1, 4, 1, 1] = aten.adaptive_avg_pool2d.default(%c, [1, 1])
  %e: f32[1, 4, 2, 2] = aten.avg_pool2d.default(%b, [2, 2], [2, 2])
  %f: f32[1, 4, 2, 2] = aten._adaptive_avg_pool2d.default(%b, [2, 2])
  %t: f32[1, 4, 3, 3] = aten.convolution.default(%e, %tw, None, [2, 2], [1, 1], [1, 1], True, [0, 0], 1)
  %tt: f32[1, 4, 2, 3] = aten.slice.Tensor(%t, 2, 0, 2)
  %t2: f32[1, 4, 2, 2] = aten.slice.Tensor(%tt, 3, 0, 2)
  %s1: f32[1, 4, 2, 2] = aten.add.Tensor(%c, %d)
  %s2: f32[1, 4, 2, 2] = aten.add.Tensor(%s1, %e)
  %s3: f32[1, 4, 2, 2] = aten.add.Tensor(%s2, %f)
  %out: f32[1, 4, 2, 2] = aten.add.Tensor(%s3, %t2)`, "%x: f32[1, 2, 4, 4], %w: f32[4, 2, 3, 3], %cb: f32[4], %g: f32[4], %rm: f32[4], %rv: f32[4], %tw: f32[4, 4, 3, 3]", 0, 1e-4},
	// Below opset 22 Conv has no bfloat16: it runs in float32 between
	// casts (ORT's CPU provider has no bfloat16 Conv at any opset). The
	// result is read back as float32: the Go binding cannot return a
	// bfloat16 output.
	{"conv-bf16-opset18", `
  %a: bf16[1, 4, 4, 4] = aten.convolution.default(%x, %w, %cb, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  %t: bf16[1, 2, 7, 7] = aten.convolution.default(%a, %tw, None, [2, 2], [1, 1], [1, 1], True, [0, 0], 1)
  %o: f32[1, 2, 7, 7] = aten._to_copy.default(%t, dtype=torch.float32)`, "%x: bf16[1, 2, 4, 4], %w: bf16[4, 2, 3, 3], %cb: bf16[4], %tw: bf16[4, 2, 3, 3]", 18, 2e-2},
	{"layer-norm", `
  %a: f32[2, 3, 4], %m: f32[2, 3, 1], %r: f32[2, 3, 1] = aten.native_layer_norm.default(%x, [4], %w, %b, 1e-05)
  %c: f32[2, 3, 4] = aten.layer_norm.default(%x, [3, 4])
  %d: f32[2, 3, 4] = aten.add.Tensor(%a, %c)
  %e: f32[2, 3, 4] = aten.add.Tensor(%d, %m)
  %out: f32[2, 3, 4] = aten.add.Tensor(%e, %r)`, "%x: f32[2, 3, 4], %w: f32[4], %b: f32[4]", 0, 1e-4},
	{"index", `
  %a: f32[3, 4] = aten.embedding.default(%w, %i)
  %b: f32[3, 4] = aten.index_select.default(%w, 0, %i)
  %c: f32[3, 4] = aten.index.Tensor(%w, [%i])
  %g: f32[3, 2], %j: i64[3, 2] = aten.topk.default(%a, 2)
  %d: f32[3, 2] = aten.gather.default(%a, 1, %j)
  %e: f32[3, 4] = aten.scatter.src(%b, 1, %j, %d)
  %f: f32[3, 4] = aten.scatter.value(%c, 1, %j, 2.5)
  %k: f32[3, 4], %l: i64[3, 4] = aten.sort.default(%f, 1, True)
  %m: f32[5, 4] = aten.index_put.default(%w, [%i], %a, True)
  %i2: i64[3] = aten.arange.default(3)
  %i3: i64[3] = aten.flip.default(%i2, [0])
  %n: f32[3, 4] = aten.index_copy.default(%a, 0, %i3, %b)
  %o: f32[3, 4] = aten.tril.default(%n)
  %p: f32[3, 4] = aten.triu.default(%n, 1)
  %q: f32[3, 2] = aten.add.Tensor(%g, %d)
  %r: f32[3, 4] = aten.add.Tensor(%k, %o)
  %s: f32[3, 4] = aten.add.Tensor(%r, %p)
  %t: f32[3, 4] = aten.slice.Tensor(%m, 0, 0, 3)
  %u: f32[3, 4] = aten.add.Tensor(%s, %t)
  %out: f32[3, 4] = aten.add.Tensor(%u, %e)`, "%w: f32[5, 4], %i: i64[3]", 0, 1e-5},
	// argsort and sort over tied values (floor makes ties): ORT's TopK puts
	// the lower index first in both directions, the interpreter's stable
	// order; indices are compared exactly.
	{"argsort-ties", `
  %f: f32[3, 6] = aten.floor.default(%x)
  %a: i64[3, 6] = aten.argsort.default(%f, 1)
  %b: i64[3, 6] = aten.argsort.default(%f, 0, True)
  %c: i64[3, 6] = aten.argsort.stable(%f, stable=True, dim=1, descending=True)
  %v: f32[3, 6], %i: i64[3, 6] = aten.sort.default(%f, 1, True)
  %d: i64[3, 6] = aten.add.Tensor(%a, %b)
  %e: i64[3, 6] = aten.mul.Tensor(%d, 7)
  %g: i64[3, 6] = aten.add.Tensor(%e, %c)
  %h: i64[3, 6] = aten.mul.Tensor(%g, 7)
  %out: i64[3, 6] = aten.add.Tensor(%h, %i)`, "%x: f32[3, 6]", 0, 0},
	{"fft", fftBody, "%x: f32[3, 8], %y: f32[3, 8, 2]", 0, 1e-4},
	// The same at opset 20, where DFT takes its axis as an input.
	{"fft20", fftBody, "%x: f32[3, 8], %y: f32[3, 8, 2]", 20, 1e-4},
	// _embedding_bag's extra results as torch's CPU kernel fills them:
	// offset2bag, bag_size (non-padding counts; zeros for sum) and
	// max_indices (max: the first row index reaching the maximum, 0 for an
	// empty bag; sum and mean: a copy of bag_size).
	{"embedding-bag-max-indices", `
  %o: i64[4] = aten.arange.start_step(0, 8, 2)
  %z: i64[4] = aten.clamp.default(%o, None, 3)
  %a: f32[4, 4], %a1: i64[8], %a2: i64[4], %a3: i64[4, 4] = aten._embedding_bag.default(%w, %i, %z, False, 2, False, None, False, 1)
  %s: i64[4, 1] = aten.unsqueeze.default(%a2, 1)
  %m: i64[4, 1] = aten.mul.Tensor(%s, 100)
  %out: i64[4, 4] = aten.add.Tensor(%a3, %m)`, "%w: f32[5, 4], %i: i64[8]", 18, 0},
	{"embedding-bag-offset2bag", `
  %o: i64[4] = aten.arange.start_step(0, 8, 2)
  %z: i64[4] = aten.clamp.default(%o, None, 3)
  %o2: i64[3] = aten.arange.start_step(0, 9, 4)
  %a: f32[2, 4], %a1: i64[8], %a2: i64[2], %a3: i64[2] = aten._embedding_bag.default(%w, %i, %o2, False, 1, False, None, True, 2)
  %b: f32[4, 4], %b1: i64[8], %b2: i64[4], %b3: i64[4] = aten._embedding_bag.default(%w, %i, %z, False, 0, False, None, False, 1)
  %c: i64[2] = aten.mul.Tensor(%a3, 10)
  %d: i64[2] = aten.add.Tensor(%a2, %c)
  %e: i64[4] = aten.add.Tensor(%b2, %b3)
  %f: i64[8] = aten.mul.Tensor(%b1, 10)
  %g: i64[8] = aten.add.Tensor(%a1, %f)
  %h: i64[1] = aten.sum.dim_IntList(%d, [0], True)
  %k: i64[1] = aten.sum.dim_IntList(%e, [0], True)
  %l: i64[1] = aten.mul.Tensor(%k, 1000)
  %q: i64[1] = aten.add.Tensor(%h, %l)
  %out: i64[8] = aten.add.Tensor(%g, %q)`, "%w: f32[5, 4], %i: i64[8]", 18, 0},
	{"factory", `
  %a: f32[2, 3] = aten.zeros_like.default(%x)
  %b: f32[2, 3] = aten.ones_like.default(%x)
  %c: f32[2, 3] = aten.full_like.default(%x, 3.5)
  %d: f32[2, 3] = aten.full.default([2, 3], 2, dtype=torch.float32)
  %e: i64[3] = aten.arange.default(3)
  %f: f32[3] = aten._to_copy.default(%e, dtype=torch.float32)
  %g: f32[2, 3] = aten.zeros.default([2, 3], dtype=torch.float32)
  %h: f32[2, 3] = aten.ones.default([2, 3], dtype=torch.float32)
  %i: f32[] = aten.scalar_tensor.default(1.5)
  %s1: f32[2, 3] = aten.add.Tensor(%a, %b)
  %s2: f32[2, 3] = aten.add.Tensor(%s1, %c)
  %s3: f32[2, 3] = aten.add.Tensor(%s2, %d)
  %s4: f32[2, 3] = aten.add.Tensor(%s3, %f)
  %s5: f32[2, 3] = aten.add.Tensor(%s4, %g)
  %s6: f32[2, 3] = aten.add.Tensor(%s5, %h)
  %s7: f32[2, 3] = aten.add.Tensor(%s6, %i)
  %out: f32[2, 3] = aten.add.Tensor(%s7, %x)`, "%x: f32[2, 3]", 0, 0},
	{"repeat-bincount", `
  %a: f32[2, 6] = aten.repeat_interleave.self_int(%x, 2, 1)
  %b: i64[4] = aten.bincount.default(%i, None, 4)
  %c: f32[4] = aten._to_copy.default(%b, dtype=torch.float32)
  %e: f32[] = aten.sum.default(%c)
  %out: f32[2, 6] = aten.add.Tensor(%a, %e)`, "%x: f32[2, 3], %i: i64[5]", 0, 1e-6},
	{"symbolic", `
  %s: Sym(s0) = aten.sym_size.int(%x, 0)
  %t: Sym(2*s0) = operator.mul(%s, 2)
  %u: Sym(2*s0 + 1) = operator.add(%t, 1)
  %v: Sym(2*s0) = operator.sub(%u, 1)
  %w: Sym(s0) = operator.floordiv(%v, 2)
  %a: f32[s0, 2, 2] = aten.view.default(%x, [%w, 2, 2])
  %b: f32[s0, 4] = aten.view.default(%a, [-1, 4])
  %out: f32[s0, 4] = aten.add.Tensor(%b, %x)`, "%x: f32[s0, 4]", 0, 0},
}

func init() {
	opCases = append(opCases, opCase{"more-unary", `
  %a: f32[2, 3] = aten.tanh.default(%x)
  %b: f32[2, 3] = aten.acos.default(%a)
  %c: f32[2, 3] = aten.asin.default(%a)
  %d: f32[2, 3] = aten.atan.default(%x)
  %e: f32[2, 3] = aten.atanh.default(%a)
  %f: f32[2, 3] = aten.asinh.default(%x)
  %g: f32[2, 3] = aten.cosh.default(%x)
  %h: f32[2, 3] = aten.acosh.default(%g)
  %i: f32[2, 3] = aten.sinh.default(%x)
  %j: f32[2, 3] = aten.tan.default(%a)
  %k: f32[2, 3] = aten.round.default(%x)
  %l: f32[2, 3] = aten.exp.default(%x)
  %m: f32[2, 3] = aten.log2.default(%l)
  %n: f32[2, 3] = aten.pow.Tensor_Tensor(%l, %a)
  %o: f32[2, 3] = aten.pow.Scalar(2.0, %x)
  %p: f32[2, 3] = aten.fmod.Tensor(%x, %l)
  %q: f32[2, 3] = aten.fmod.Scalar(%x, 0.3)
  %r: f32[2, 3] = aten.remainder.Tensor(%x, %l)
  %s: f32[2, 3] = aten.div.Scalar(%x, 4)
  %t: f32[2, 3] = aten.softmax.int(%x, 1)
  %u: f32[2, 3] = aten.log_softmax.int(%x, 0)
  %v: f32[2, 3] = aten.clamp.Tensor(%x, %a, %l)
  %w: f32[2, 3] = aten.lift_fresh_copy.default(%x)
  %s1: f32[2, 3] = aten.add.Tensor(%b, %c)
  %s2: f32[2, 3] = aten.add.Tensor(%s1, %d)
  %s3: f32[2, 3] = aten.add.Tensor(%s2, %e)
  %s4: f32[2, 3] = aten.add.Tensor(%s3, %f)
  %s5: f32[2, 3] = aten.add.Tensor(%s4, %h)
  %s6: f32[2, 3] = aten.add.Tensor(%s5, %i)
  %s7: f32[2, 3] = aten.add.Tensor(%s6, %j)
  %s8: f32[2, 3] = aten.add.Tensor(%s7, %k)
  %s9: f32[2, 3] = aten.add.Tensor(%s8, %m)
  %t1: f32[2, 3] = aten.add.Tensor(%s9, %n)
  %t2: f32[2, 3] = aten.add.Tensor(%t1, %o)
  %t3: f32[2, 3] = aten.add.Tensor(%t2, %p)
  %t4: f32[2, 3] = aten.add.Tensor(%t3, %q)
  %t5: f32[2, 3] = aten.add.Tensor(%t4, %r)
  %t6: f32[2, 3] = aten.add.Tensor(%t5, %s)
  %t7: f32[2, 3] = aten.add.Tensor(%t6, %t)
  %t8: f32[2, 3] = aten.add.Tensor(%t7, %u)
  %t9: f32[2, 3] = aten.add.Tensor(%t8, %v)
  %out: f32[2, 3] = aten.add.Tensor(%t9, %w)`, "%x: f32[2, 3]", 0, 1e-5},
		opCase{"more-compare", `
  %a: b8[2, 3] = aten.eq.Tensor(%i, %j)
  %b: b8[2, 3] = aten.ge.Tensor(%x, %y)
  %c: b8[2, 3] = aten.gt.Tensor(%x, %y)
  %d: b8[2, 3] = aten.le.Scalar(%x, 0.0)
  %e: b8[2, 3] = aten.lt.Scalar(%i, 1)
  %f: b8[2, 3] = aten.ne.Scalar(%i, 1)
  %g: b8[2, 3] = aten.bitwise_and.Tensor(%a, %b)
  %h: b8[2, 3] = aten.bitwise_or.Tensor(%c, %d)
  %k: b8[2, 3] = aten.bitwise_not.default(%e)
  %l: i64[2, 3] = aten.bitwise_and.Tensor(%i, %j)
  %m: i64[2, 3] = aten.bitwise_not.default(%l)
  %n: b8[2, 3] = aten.isnan.default(%x)
  %o: f32[2, 3] = aten.masked_fill.Tensor(%x, %g, %s)
  %p: f32[2, 3] = aten.masked_fill.Scalar(%o, %h, 9.0)
  %q: f32[2, 3] = aten.masked_fill.Scalar(%p, %k, -9.0)
  %r: f32[2, 3] = aten.masked_fill.Scalar(%q, %f, 3.0)
  %t: f32[2, 3] = aten.masked_fill.Scalar(%r, %n, 4.0)
  %u: f32[2, 3] = aten._to_copy.default(%m, dtype=torch.float32)
  %out: f32[2, 3] = aten.add.Tensor(%t, %u)`, "%x: f32[2, 3], %y: f32[2, 3], %i: i64[2, 3], %j: i64[2, 3], %s: f32[]", 0, 1e-6},
		opCase{"more-shape-factory", `
  %a: f32[2, 3] = aten.squeeze.default(%x)
  %b: f32[2, 3] = aten.squeeze.dims(%x, [0, 3])
  %c: i64[1, 2, 3] = aten.argmin.default(%x, 3)
  %d1: f32[1, 2, 3] = aten._to_copy.default(%c, dtype=torch.float32)
  %d: f32[2, 3] = aten.squeeze.dim(%d1, 0)
  %e: i64[2] = aten.arange.start(1, 3)
  %f: f32[3] = aten.arange.start_step(0.5, 2.0, 0.5, dtype=torch.float32)
  %g: f32[2, 3] = aten.new_zeros.default(%a, [2, 3])
  %h: f32[2, 3] = aten.new_ones.default(%a, [2, 3])
  %i: f32[2, 3] = aten.new_full.default(%a, [2, 3], 7.0)
  %j: f32[2, 3] = aten.new_empty.default(%a, [2, 3])
  %k: f32[2, 3] = aten.empty.memory_format([2, 3], dtype=torch.float32)
  %l: f32[1, 2, 3, 1] = aten.empty_like.default(%x)
  %m: f32[2] = aten._to_copy.default(%e, dtype=torch.float32)
  %n: f32[2, 1] = aten.unsqueeze.default(%m, 1)
  %s1: f32[2, 3] = aten.add.Tensor(%a, %b)
  %s2: f32[2, 3] = aten.add.Tensor(%s1, %d)
  %s3: f32[2, 3] = aten.add.Tensor(%s2, %f)
  %s4: f32[2, 3] = aten.add.Tensor(%s3, %g)
  %s5: f32[2, 3] = aten.add.Tensor(%s4, %h)
  %s6: f32[2, 3] = aten.add.Tensor(%s5, %i)
  %s7: f32[2, 3] = aten.mul.Tensor(%j, 0.0)
  %s8: f32[2, 3] = aten.add.Tensor(%s6, %s7)
  %s9: f32[2, 3] = aten.mul.Tensor(%k, 0.0)
  %t1: f32[2, 3] = aten.add.Tensor(%s8, %s9)
  %t2: f32[2, 3] = aten.add.Tensor(%t1, %n)
  %t3: f32[1, 2, 3, 1] = aten.mul.Tensor(%l, 0.0)
  %t4: f32[2, 3] = aten.squeeze.default(%t3)
  %out: f32[2, 3] = aten.add.Tensor(%t2, %t4)`, "%x: f32[1, 2, 3, 1]", 0, 1e-6},
		opCase{"overloads-torch-decomposes", `
  %a: f32[2, 3, 7, 9] = aten.upsample_bilinear2d.default(%x, [7, 9], False)
  %b: f32[2, 3, 7, 9] = aten.upsample_bilinear2d.default(%x, [7, 9], True)
  %c: f32[2, 3, 7, 9] = aten.upsample_bilinear2d.default(%x, [7, 9], False, 1.4, 2.25)
  %d: f32[2, 3, 7, 9] = aten.upsample_bilinear2d.default(%x, [7, 9], True)
  %e: f32[2, 3, 5, 4], %e1: f32[0], %e2: f32[0] = aten._native_batch_norm_legit.default(%x, %w, %w, %w, %v, False, 0.1, 1e-05)
  %f: f32[2, 3, 5, 4], %f1: f32[3], %f2: f32[3] = aten._native_batch_norm_legit.default(%x, %w, %w, %w, %v, True, 0.1, 1e-05)
  %g: f32[2, 3, 5, 4] = aten.add.Tensor(%e, %f)
  %h: f32[2, 3, 7, 9] = aten.upsample_bilinear2d.default(%g, [7, 9], False)
  %s1: f32[2, 3, 7, 9] = aten.add.Tensor(%a, %b)
  %s2: f32[2, 3, 7, 9] = aten.add.Tensor(%s1, %c)
  %s3: f32[2, 3, 7, 9] = aten.add.Tensor(%s2, %d)
  %out: f32[2, 3, 7, 9] = aten.add.Tensor(%s3, %h)`, "%x: f32[2, 3, 5, 4], %w: f32[3], %v: f32[3]", 0, 1e-5},
		opCase{"storage-queries", `
  %n: Sym(s0*12) = aten.sym_numel.default(%x)
  %st: Sym(4) = aten.sym_stride.int(%x, 1)
  %so: Sym(0) = aten.sym_storage_offset.default(%x)
  %sz: Sym(s0) = aten.sym_size.int(%x, 0)
  %e: f32[s0, 3, 4] = aten.empty_strided.default([%sz, 3, 4], [12, 4, 1])
  %c: f32[s0, 3, 4] = aten.copy.default(%e, %y)
  %f: f32[s0, 3, 4] = aten.fill.Scalar(%c, 1.5)
  %g: f32[s0, 3, 4] = aten.add.Tensor(%c, %f)
  %h: f32[s0, 3, 4] = aten.mul.Scalar(%g, %n)
  %k: f32[s0, 3, 4] = aten.add.Scalar(%h, %st)
  %out: f32[s0, 3, 4] = aten.add.Scalar(%k, %so)`, "%x: f32[s0, 3, 4], %y: f32[3, 1]", 0, 1e-6},
		opCase{"symbolic-batch-pools", `
  %a: f32[s0, 2, 1, 1] = aten.adaptive_avg_pool2d.default(%x, [1, 1])
  %b: f32[s0, 2, 2, 2] = aten._adaptive_avg_pool2d.default(%x, [2, 2])
  %c: f32[s0, 2, 3, 3] = aten._adaptive_avg_pool2d.default(%x, [3, 3])
  %d: f32[s0, 2, 6, 6] = aten._adaptive_avg_pool2d.default(%a, [6, 6])
  %f: f32[s0, 2, 3, 3] = aten._adaptive_avg_pool2d.default(%d, [3, 3])
  %g: f32[s0, 2, 3, 3] = aten._adaptive_avg_pool2d.default(%b, [3, 3])
  %sz: Sym(s0) = aten.sym_size.int(%x, 0)
  %e: f32[s0, 2, 3, 3] = aten.empty_permuted.default([%sz, 2, 3, 3], [0, 2, 3, 1])
  %s1: f32[s0, 2, 3, 3] = aten.add.Tensor(%c, %f)
  %s2: f32[s0, 2, 3, 3] = aten.add.Tensor(%s1, %g)
  %s3: f32[s0, 2, 3, 3] = aten.mul.Tensor(%e, 0.0)
  %s4: f32[s0, 2, 3, 3] = aten.add.Tensor(%s2, %s3)
  %u1: f32[s0, 2, 8, 8] = aten.upsample_bilinear2d.vec(%x, [8, 8], False, None)
  %u2: f32[s0, 2, 7, 9] = aten.upsample_bilinear2d.default(%x, [7, 9], True)
  %u3: f32[s0, 2, 8, 8] = aten.upsample_nearest2d.vec(%x, None, [2.0, 2.0])
  %u4: f32[s0, 2, 8, 8] = aten.add.Tensor(%u1, %u3)
  %p1: f32[s0, 2, 3, 3] = aten._adaptive_avg_pool2d.default(%u4, [3, 3])
  %p2: f32[s0, 2, 3, 3] = aten._adaptive_avg_pool2d.default(%u2, [3, 3])
  %s5: f32[s0, 2, 3, 3] = aten.add.Tensor(%s4, %p1)
  %out: f32[s0, 2, 3, 3] = aten.add.Tensor(%s5, %p2)`, "%x: f32[s0, 2, 4, 4]", 0, 1e-5},
		opCase{"more-nn", `
  %a: f32[1, 2, 4, 4], %a1: f32[0], %a2: f32[0] = aten._native_batch_norm_legit_no_training.default(%x, %g, %b, %rm, %rv, 0.1, 1e-05)
  %c: f32[1, 2, 2, 2] = aten.max_pool2d.default(%a, [3, 3], [2, 2], [1, 1])
  %d: f32[1, 2, 2, 2] = aten.max_pool2d.default(%x, [2, 2], [], [0, 0], [1, 1], True)
  %out: f32[1, 2, 2, 2] = aten.add.Tensor(%c, %d)`, "%x: f32[1, 2, 4, 4], %g: f32[2], %b: f32[2], %rm: f32[2], %rv: f32[2]", 0, 1e-5})
}

func caseProgram(t *testing.T, c opCase) *ir.Program {
	lines := strings.Split(strings.TrimSpace(c.body), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	ret := strings.TrimPrefix(strings.Fields(last)[0], "%")
	ret = strings.TrimSuffix(ret, ":")
	sym := ""
	if strings.Contains(c.inputs, "s0") {
		sym = "symbol s0: [1, 64] hint 3\n"
	}
	src := fmt.Sprintf("%sgraph forward(%s) {\n%s\n  return %%%s\n}\n", sym, c.inputs, strings.TrimRight(c.body, "\n"), ret)
	return parse(t, src)
}

func TestOpCasesInORT(t *testing.T) {
	needORT(t)
	for _, c := range opCases {
		t.Run(c.name, func(t *testing.T) {
			p := caseProgram(t, c)
			checkInORT(t, p, c.opset, c.tol+1e-7)
		})
	}
}

// TestEveryEntryTested: every op in the table is exercised by an op case,
// a one-op torch program (testdata/opcases) or, for the ops listed in
// corpusOnly, the corpus test.
func TestEveryEntryTested(t *testing.T) {
	seen := map[ir.Op]bool{}
	for _, c := range opCases {
		p := caseProgram(t, c)
		for _, n := range p.Main.Nodes() {
			seen[n.Op] = true
		}
	}
	for _, src := range loopCasePrograms {
		for _, n := range parse(t, src).Main.Nodes() {
			seen[n.Op] = true
		}
	}
	for op := range opCaseOps(t) {
		seen[op] = true // judged against torch in TestOpCasesGenuine
	}
	var missing []string
	for _, op := range CoveredOps() {
		if !seen[op] && !corpusOnly[op.String()] {
			missing = append(missing, op.String())
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d table entries without an ORT op test:\n  %s", len(missing), strings.Join(missing, "\n  "))
	}
}

// corpusOnly are table ops whose ORT test is a corpus program.
var corpusOnly = map[string]bool{
	"aten.as_strided.default":   true, // convnext_tiny
	"aten._unsafe_view.default": true, // gpt2_block, llama_block
	// torch.export decomposes it; TestBicubicDefaultMatchesVec holds it to
	// the .vec form that TestOpCasesGenuine judges against torch.
	"aten.upsample_bicubic2d.default": true,
}

// TestCoreOpsCoveredOrUnsupported: every Core ATen op has a lowering or an
// explicit Unsupported reason.
func TestCoreOpsCoveredOrUnsupported(t *testing.T) {
	var missing []string
	for _, op := range ir.AllOps() {
		if !op.Has(ir.PropCore) {
			continue
		}
		if !Covered(op) {
			if !unsupported.Has(op) {
				missing = append(missing, op.String())
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d core ops with neither a lowering nor an Unsupported reason:\n  %s", len(missing), strings.Join(missing, "\n  "))
	}
}
