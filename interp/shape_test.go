package interp

import (
	"math"
	"testing"

	"github.com/fxport/fxport/ir"
)

func TestDataMovementOps(t *testing.T) {
	x := f32(sh(1, 4, 1, 2), 0, 1, 2, 3, 4, 5, 6, 7)
	out := runIR(t, `graph forward(%x: f32[1, 4, 1, 2], %m: f32[2, 3]) {
  %ps: f32[1, 1, 2, 4] = aten.pixel_shuffle.default(%x, 2)
  %pu: f32[1, 4, 1, 2] = aten.pixel_unshuffle.default(%ps, 2)
  %roll: f32[2, 3] = aten.roll.default(%m, [1], [1])
  %rollflat: f32[2, 3] = aten.roll.default(%m, [-2])
  %flip: f32[2, 3] = aten.flip.default(%m, [0, 1])
  %tril: f32[2, 3] = aten.tril.default(%m, 1)
  %triu: f32[2, 3] = aten.triu.default(%m, -1)
  %pad: f32[2, 5] = aten.constant_pad_nd.default(%m, [2, 0], 9.0)
  %crop: f32[2, 1] = aten.constant_pad_nd.default(%m, [-1, -1])
  %refl: f32[2, 5] = aten.reflection_pad1d.default(%m, [2, 0])
  %rep: f32[4, 6] = aten.repeat.default(%m, [2, 2])
  return %ps, %pu, %roll, %rollflat, %flip, %tril, %triu, %pad, %crop, %refl, %rep
}
`, x, f32(sh(2, 3), 1, 2, 3, 4, 5, 6))
	wantT(t, out[0], ir.Float32, sh(1, 1, 2, 4), 0, 2, 1, 3, 4, 6, 5, 7)
	wantT(t, out[1], ir.Float32, sh(1, 4, 1, 2), 0, 1, 2, 3, 4, 5, 6, 7)
	wantT(t, out[2], ir.Float32, sh(2, 3), 3, 1, 2, 6, 4, 5)
	wantT(t, out[3], ir.Float32, sh(2, 3), 3, 4, 5, 6, 1, 2)
	wantT(t, out[4], ir.Float32, sh(2, 3), 6, 5, 4, 3, 2, 1)
	wantT(t, out[5], ir.Float32, sh(2, 3), 1, 2, 0, 4, 5, 6)
	wantT(t, out[6], ir.Float32, sh(2, 3), 1, 2, 3, 4, 5, 6)
	wantT(t, out[7], ir.Float32, sh(2, 5), 9, 9, 1, 2, 3, 9, 9, 4, 5, 6)
	wantT(t, out[8], ir.Float32, sh(2, 1), 2, 5)
	wantT(t, out[9], ir.Float32, sh(2, 5), 3, 2, 1, 2, 3, 6, 5, 4, 5, 6)
	wantT(t, out[10], ir.Float32, sh(4, 6), 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6)
}

func TestIndexingHelpers(t *testing.T) {
	out := runIR(t, `graph forward(%c: i64[3], %x: f32[5], %b: f32[3]) {
  %oh: i64[3, 4] = aten.one_hot.default(%c, 4)
  %ri: i64[4] = aten.repeat_interleave.Tensor(%c)
  %bl: i64[5] = aten.bucketize.Tensor(%x, %b)
  %br: i32[5] = aten.bucketize.Tensor(%x, %b, out_int32=True, right=True)
  %u: f32[3], %inv: i64[5], %cnt: i64[3] = aten._unique2.default(%x, True, True, True)
  %h: f32[2] = aten.histc.default(%x, 2, 0, 4)
  return %oh, %ri, %bl, %br, %u, %inv, %cnt, %h
}
`, i64(sh(3), 2, 0, 2), f32(sh(5), 1, 3, 1, 5, 3), f32(sh(3), 1, 3, 4))
	wantT(t, out[0], ir.Int64, sh(3, 4), 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0)
	wantT(t, out[1], ir.Int64, sh(4), 0, 0, 2, 2)
	wantT(t, out[2], ir.Int64, sh(5), 0, 1, 0, 3, 1)
	wantT(t, out[3], ir.Int32, sh(5), 1, 2, 1, 3, 2)
	wantT(t, out[4], ir.Float32, sh(3), 1, 3, 5)
	wantT(t, out[5], ir.Int64, sh(5), 0, 1, 0, 2, 1)
	wantT(t, out[6], ir.Int64, sh(3), 2, 2, 1)
	wantT(t, out[7], ir.Float32, sh(2), 2, 2) // 5 is outside [0, 4]
	_, err := runIRErr(t, `graph forward(%x: f32[2], %b: f32[3]) {
  %bl: i64[2] = aten.bucketize.Tensor(%x, %b)
  return %bl
}
`, f32(sh(2), 1, 2), f32(sh(3), 3, 1, 2))
	wantErr(t, err, "sorted")
	if !IsDomainError(err) {
		t.Fatal("unsorted boundaries should be a domain error")
	}
}

func TestAttentionMaskAndNorms(t *testing.T) {
	// One query over three keys; the mask hides key 1.
	out := runIR(t, `graph forward(%q: f32[1, 1, 1, 2], %k: f32[1, 1, 3, 2], %v: f32[1, 1, 3, 1], %m: b8[1, 3], %x: f32[1, 4, 2]) {
  %a: f32[1, 1, 1, 1] = aten.scaled_dot_product_attention.default(%q, %k, %v, %m, scale=1.0)
  %gn: f32[1, 4, 2] = aten.group_norm.default(%x, 2)
  %rms: f32[1, 4, 2] = aten.rms_norm.default(%x, [2], None, 0.0)
  return %a, %gn, %rms
}
`, f32(sh(1, 1, 1, 2), 1, 0), f32(sh(1, 1, 3, 2), 0, 0, 5, 0, 1, 0), f32(sh(1, 1, 3, 1), 10, 20, 30), b8(sh(1, 3), 1, 0, 1),
		f32(sh(1, 4, 2), 1, 3, 1, 3, 0, 0, 4, 4))
	// Scores 0 and 1 (key 1 masked): weights 1/(1+e) and e/(1+e).
	e := math.E
	wantT(t, out[0], ir.Float32, sh(1, 1, 1, 1), f32r((10+30*e)/(1+e)))
	// Group 0 = {1, 3, 1, 3}: mean 2, var 1; group 1 = {0, 0, 4, 4}: mean 2, var 4.
	r0, r1 := 1/math.Sqrt(1+1e-5), 1/math.Sqrt(4+1e-5)
	wantT(t, out[1], ir.Float32, sh(1, 4, 2), f32r(-r0), f32r(r0), f32r(-r0), f32r(r0), f32r(-2*r1), f32r(-2*r1), f32r(2*r1), f32r(2*r1))
	s := 1 / math.Sqrt(5)
	wantT(t, out[2], ir.Float32, sh(1, 4, 2), f32r(s), f32r(3*s), f32r(s), f32r(3*s), nan, nan, 1, 1)
}

func TestConvSamePaddingAndGridSample(t *testing.T) {
	// A 1x2 kernel with 'same' padding pads one column on the right.
	out := runIR(t, `graph forward(%x: f32[1, 1, 1, 3], %w: f32[1, 1, 1, 2], %g: f32[1, 1, 2, 2]) {
  %c: f32[1, 1, 1, 3] = aten.conv2d.padding(%x, %w, None, [1, 1], "same")
  %s: f32[1, 1, 1, 2] = aten.grid_sampler_2d.default(%x, %g, 0, 0, True)
  return %c, %s
}
`, f32(sh(1, 1, 1, 3), 1, 2, 3), f32(sh(1, 1, 1, 2), 1, 10), f32(sh(1, 1, 2, 2), -1, 0, 0, 0))
	wantT(t, out[0], ir.Float32, sh(1, 1, 1, 3), 21, 32, 3)
	// align_corners: x = -1 is column 0, x = 0 the middle column (2).
	wantT(t, out[1], ir.Float32, sh(1, 1, 1, 2), 1, 2)
}
