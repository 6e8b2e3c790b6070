package interp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fxport/fxport/ir"
)

func randT(rng *rand.Rand, dt ir.DType, shape ...int64) *Tensor {
	v := make([]float64, numel(shape))
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return FromFloat64(dt, shape, v)
}

// naiveConv2d is an independent direct-loop reference for grouped,
// strided, padded, dilated 2-d convolution.
func naiveConv2d(x, w, b []float64, n, cin, h, wd, cout, kh, kw, sh, sw, ph, pw, dh, dw, g int) ([]float64, int, int) {
	oh := (h+2*ph-dh*(kh-1)-1)/sh + 1
	ow := (wd+2*pw-dw*(kw-1)-1)/sw + 1
	cg, og := cin/g, cout/g
	out := make([]float64, n*cout*oh*ow)
	for bi := 0; bi < n; bi++ {
		for o := 0; o < cout; o++ {
			gi := o / og
			for y := 0; y < oh; y++ {
				for xx := 0; xx < ow; xx++ {
					s := 0.0
					if b != nil {
						s = b[o]
					}
					for c := 0; c < cg; c++ {
						for ky := 0; ky < kh; ky++ {
							for kx := 0; kx < kw; kx++ {
								iy, ix := y*sh-ph+ky*dh, xx*sw-pw+kx*dw
								if iy < 0 || iy >= h || ix < 0 || ix >= wd {
									continue
								}
								s += x[((bi*cin+gi*cg+c)*h+iy)*wd+ix] * w[((o*cg+c)*kh+ky)*kw+kx]
							}
						}
					}
					out[((bi*cout+o)*oh+y)*ow+xx] = s
				}
			}
		}
	}
	return out, oh, ow
}

func TestConv2dAgainstDirectLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := randT(rng, ir.Float64, 2, 4, 7, 6)
	w := randT(rng, ir.Float64, 6, 2, 3, 2)
	b := randT(rng, ir.Float64, 6)
	want, oh, ow := naiveConv2d(x.Float64s(), w.Float64s(), b.Float64s(), 2, 4, 7, 6, 6, 3, 2, 2, 1, 1, 0, 2, 1, 2)
	src := fmt.Sprintf(`graph forward(%%x: f64[2, 4, 7, 6], %%w: f64[6, 2, 3, 2], %%b: f64[6]) {
  %%conv: f64[2, 6, %d, %d] = aten.convolution.default(%%x, %%w, %%b, [2, 1], [1, 0], [2, 1], False, [0, 0], 2)
  %%conv2d: f64[2, 6, %d, %d] = aten.conv2d.default(%%x, %%w, %%b, [2, 1], [1, 0], [2, 1], 2)
  return %%conv, %%conv2d
}
`, oh, ow, oh, ow)
	out := runIR(t, src, x, w, b)
	wantT(t, out[0], ir.Float64, sh(2, 6, int64(oh), int64(ow)), want...)
	wantT(t, out[1], ir.Float64, sh(2, 6, int64(oh), int64(ow)), want...)
}

func TestConvTransposeIsAdjointOfConv(t *testing.T) {
	// <conv(x), y> == <x, conv_transpose(y)> for the same weight.
	rng := rand.New(rand.NewPCG(3, 4))
	x := randT(rng, ir.Float64, 1, 2, 5, 5)
	w := randT(rng, ir.Float64, 4, 2, 3, 3)
	out := runIR(t, `graph forward(%x: f64[1, 2, 5, 5], %w: f64[4, 2, 3, 3], %y: f64[1, 4, 3, 3]) {
  %c: f64[1, 4, 3, 3] = aten.convolution.default(%x, %w, None, [2, 2], [1, 1], [1, 1], False, [0, 0], 1)
  %ct: f64[1, 2, 5, 5] = aten.convolution.default(%y, %w, None, [2, 2], [1, 1], [1, 1], True, [0, 0], 1)
  return %c, %ct
}
`, x, w, randT(rng, ir.Float64, 1, 4, 3, 3))
	_ = out
	y := randT(rand.New(rand.NewPCG(5, 6)), ir.Float64, 1, 4, 3, 3)
	out = runIR(t, `graph forward(%x: f64[1, 2, 5, 5], %w: f64[4, 2, 3, 3], %y: f64[1, 4, 3, 3]) {
  %c: f64[1, 4, 3, 3] = aten.convolution.default(%x, %w, None, [2, 2], [1, 1], [1, 1], False, [0, 0], 1)
  %ct: f64[1, 2, 5, 5] = aten.conv_transpose2d.input(%y, %w, None, [2, 2], [1, 1])
  return %c, %ct
}
`, x, w, y)
	dot := func(a, b []float64) float64 {
		s := 0.0
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	lhs := dot(out[0].(*Tensor).Float64s(), y.Float64s())
	rhs := dot(x.Float64s(), out[1].(*Tensor).Float64s())
	if math.Abs(lhs-rhs) > 1e-9*math.Max(1, math.Abs(lhs)) {
		t.Fatalf("<conv(x), y> = %g but <x, conv_transpose(y)> = %g", lhs, rhs)
	}
}

func TestMatmulValues(t *testing.T) {
	a := f32(sh(2, 3), 1, 2, 3, 4, 5, 6)
	b := f32(sh(3, 2), 1, 0, 0, 1, 1, 1)
	v := f32(sh(3), 1, -1, 2)
	out := runIR(t, `graph forward(%a: f32[2, 3], %b: f32[3, 2], %v: f32[3], %bias: f32[2], %batch: f32[2, 1, 2, 3]) {
  %mm: f32[2, 2] = aten.mm.default(%a, %b)
  %mv: f32[2] = aten.matmul.default(%a, %v)
  %vm: f32[2] = aten.matmul.default(%v, %b)
  %dot: f32[] = aten.matmul.default(%v, %v)
  %addmm: f32[2, 2] = aten.addmm.default(%bias, %a, %b, beta=2, alpha=0.5)
  %bmm: f32[2, 1, 2, 2] = aten.matmul.default(%batch, %b)
  %bt: f32[2, 3] = aten.t.default(%b)
  %lin: f32[2, 2] = aten.linear.default(%a, %bt, %bias)
  %ia: i64[2, 3] = aten._to_copy.default(%a, dtype=torch.int64)
  %ib: i64[3, 2] = aten._to_copy.default(%b, dtype=torch.int64)
  %im: i64[2, 2] = aten.mm.default(%ia, %ib)
  return %mm, %mv, %vm, %dot, %addmm, %bmm, %lin, %im
}
`, a, b, v, f32(sh(2), 10, 20), f32(sh(2, 1, 2, 3), seqVals(12)...))
	wantT(t, out[0], ir.Float32, sh(2, 2), 4, 5, 10, 11)
	wantT(t, out[1], ir.Float32, sh(2), 5, 11)
	wantT(t, out[2], ir.Float32, sh(2), 3, 1)
	wantT(t, out[3], ir.Float32, nil, 6)
	wantT(t, out[4], ir.Float32, sh(2, 2), 22, 42.5, 25, 45.5)
	wantT(t, out[5], ir.Float32, sh(2, 1, 2, 2), 2, 3, 8, 9, 14, 15, 20, 21)
	wantT(t, out[6], ir.Float32, sh(2, 2), 14, 25, 20, 31)
	wantT(t, out[7], ir.Int64, sh(2, 2), 4, 5, 10, 11)
}

func TestPooling(t *testing.T) {
	x := f32(sh(1, 1, 4, 4), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
	out := runIR(t, `graph forward(%x: f32[1, 1, 4, 4]) {
  %mp: f32[1, 1, 2, 2], %mi: i64[1, 1, 2, 2] = aten.max_pool2d_with_indices.default(%x, [2, 2], [2, 2])
  %mpc: f32[1, 1, 3, 3] = aten.max_pool2d.default(%x, [3, 3], [2, 2], [1, 1], [1, 1], True)
  %ap: f32[1, 1, 2, 2] = aten.avg_pool2d.default(%x, [3, 3], [2, 2], [1, 1])
  %apx: f32[1, 1, 2, 2] = aten.avg_pool2d.default(%x, [3, 3], [2, 2], [1, 1], False, False)
  %aa: f32[1, 1, 3, 1] = aten.adaptive_avg_pool2d.default(%x, [3, 1])
  return %mp, %mi, %mpc, %ap, %apx, %aa
}
`, x)
	wantT(t, out[0], ir.Float32, sh(1, 1, 2, 2), 6, 8, 14, 16)
	wantT(t, out[1], ir.Int64, sh(1, 1, 2, 2), 5, 7, 13, 15)
	// ceil_mode adds a last window starting inside the input (at row 3).
	wantT(t, out[2], ir.Float32, sh(1, 1, 3, 3), 6, 8, 8, 14, 16, 16, 14, 16, 16)
	// count_include_pad: the window at (0, 0) covers 4 real values of 9 slots.
	wantT(t, out[3], ir.Float32, sh(1, 1, 2, 2), (1+2+5+6)/9.0, (2+3+4+6+7+8)/9.0, (5+6+9+10+13+14)/9.0, (6+7+8+10+11+12+14+15+16)/9.0)
	wantT(t, out[4], ir.Float32, sh(1, 1, 2, 2), (1+2+5+6)/4.0, (2+3+4+6+7+8)/6.0, (5+6+9+10+13+14)/6.0, (6+7+8+10+11+12+14+15+16)/9.0)
	// Adaptive windows over 4 rows into 3: [0,2), [1,3), [2,4).
	wantT(t, out[5], ir.Float32, sh(1, 1, 3, 1), 4.5, 8.5, 12.5)
}

func TestUpsample(t *testing.T) {
	x := f32(sh(1, 1, 2, 2), 1, 2, 3, 4)
	out := runIR(t, `graph forward(%x: f32[1, 1, 2, 2]) {
  %near: f32[1, 1, 4, 4] = aten.upsample_nearest2d.vec(%x, None, [2.0, 2.0])
  %bil: f32[1, 1, 3, 3] = aten.upsample_bilinear2d.vec(%x, [3, 3], True, None)
  %bil2: f32[1, 1, 4, 4] = aten.upsample_bilinear2d.vec(%x, [4, 4], False, None)
  return %near, %bil, %bil2
}
`, x)
	wantT(t, out[0], ir.Float32, sh(1, 1, 4, 4), 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4)
	wantT(t, out[1], ir.Float32, sh(1, 1, 3, 3), 1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4)
	// Half-pixel centres: source coordinates -0.25 (clamped to 0), 0.25, 0.75, 1.25.
	r := []float64{1, 1.25, 1.75, 2}
	var want []float64
	for _, row := range []float64{0, 0.5, 1.5, 2} {
		for _, c := range r {
			want = append(want, c+row)
		}
	}
	wantT(t, out[2], ir.Float32, sh(1, 1, 4, 4), want...)
}

func TestGroupedMatmul(t *testing.T) {
	// Rows 0-1 use expert 0, row 2 expert 1, row 3 no expert (fallback: zero).
	x := f32(sh(4, 2), 1, 2, 3, 4, 5, 6, 7, 8)
	w := f32(sh(2, 2, 1), 1, 1, 10, -1)
	offs := i32(sh(2), 2, 3)
	out := runIR(t, `graph forward(%x: f32[4, 2], %w: f32[2, 2, 1], %offs: i32[2]) {
  %g: f32[4, 1] = aten._grouped_mm.default(%x, %w, %offs)
  %f: f32[4, 1] = transformers.grouped_mm_fallback.default(%x, %w, %offs)
  return %g, %f
}
`, x, w, offs)
	wantT(t, out[0], ir.Float32, sh(4, 1), 3, 7, 44, 0)
	wantT(t, out[1], ir.Float32, sh(4, 1), 3, 7, 44, 0)
}

func TestVarlenAttentionMatchesPerSequenceSDPA(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	q := randT(rng, ir.Float32, 5, 2, 4)
	k := randT(rng, ir.Float32, 5, 2, 4)
	v := randT(rng, ir.Float32, 5, 2, 3)
	out := runIR(t, `graph forward(%q: f32[5, 2, 4], %k: f32[5, 2, 4], %v: f32[5, 2, 3], %cu: i32[3]) {
  %o: f32[5, 2, 3], %lse: f32[2, 5], %rng: u64[2] = torch_attn._varlen_attn.default(%q, %k, %v, %cu, %cu, 3, 3, True)
  %qs: f32[2, 2, 4] = aten.slice.Tensor(%q, 0, 3, 5)
  %ks: f32[2, 2, 4] = aten.slice.Tensor(%k, 0, 3, 5)
  %vs: f32[2, 2, 3] = aten.slice.Tensor(%v, 0, 3, 5)
  %qt: f32[2, 2, 4] = aten.transpose.int(%qs, 0, 1)
  %kt: f32[2, 2, 4] = aten.transpose.int(%ks, 0, 1)
  %vt: f32[2, 2, 3] = aten.transpose.int(%vs, 0, 1)
  %ref: f32[2, 2, 3] = aten.scaled_dot_product_attention.default(%qt, %kt, %vt, None, 0.0, True)
  %reft: f32[2, 2, 3] = aten.transpose.int(%ref, 0, 1)
  %os: f32[2, 2, 3] = aten.slice.Tensor(%o, 0, 3, 5)
  return %os, %reft
}
`, q, k, v, i32(sh(3), 0, 3, 5))
	wantT(t, out[0], ir.Float32, sh(2, 2, 3), out[1].(*Tensor).Float64s()...)
}
