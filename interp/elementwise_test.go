package interp

import (
	"math"
	"testing"

	"github.com/fxport/fxport/ir"
)

func TestHalfConversions(t *testing.T) {
	cases := []struct {
		f    float32
		bits uint16
	}{
		{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00}, // rounds to inf
		{float32(math.Inf(-1)), 0xfc00}, {5.960464477539063e-08, 0x0001}, // smallest subnormal
		{0.333333333, 0x3555}, {1.0009765625, 0x3c01}, {1.00048828125, 0x3c00}, // tie to even
		{2.9802322387695312e-08, 0x0000}, // half of the smallest subnormal ties to 0
	}
	for _, c := range cases {
		if got := F16Bits(c.f); got != c.bits {
			t.Errorf("F16Bits(%g) = %#04x, want %#04x", c.f, got, c.bits)
		}
	}
	for _, bits := range []uint16{0x3c00, 0x0001, 0x03ff, 0x7bff, 0xc000, 0x8000} {
		if got := F16Bits(F16Float(bits)); got != bits {
			t.Errorf("round trip of %#04x gives %#04x", bits, got)
		}
	}
	if !math.IsNaN(float64(F16Float(F16Bits(float32(math.NaN()))))) {
		t.Error("NaN does not survive float16")
	}
	if BF16Bits(1) != 0x3f80 || BF16Bits(-2.5) != 0xc020 || BF16Float(0x3f80) != 1 {
		t.Error("bfloat16 of simple values")
	}
	// 1 + 2^-8 is a tie between 1 and 1 + 2^-7: rounds to even (1).
	if BF16Bits(1+1.0/256) != 0x3f80 || BF16Bits(1+3.0/256) != 0x3f82 {
		t.Errorf("bfloat16 ties: %#x %#x", BF16Bits(1+1.0/256), BF16Bits(1+3.0/256))
	}
}

func TestTypePromotion(t *testing.T) {
	out := runIR(t, `graph forward(%i: i64[2], %h: f16[2], %j: i32[2], %z: i64[]) {
  %a: f32[2] = aten.add.Tensor(%i, 1.5)
  %b: f16[2] = aten.mul.Tensor(%h, 2.0)
  %c: i32[2] = aten.add.Tensor(%j, %z)
  %d: f32[2] = aten.div.Tensor(%i, 4)
  %e: b8[2] = aten.lt.Scalar(%i, 1.5)
  return %a, %b, %c, %d, %e
}
`, i64(sh(2), 1, 2), FromFloat64(ir.Float16, sh(2), []float64{1, 3}), i32(sh(2), 5, 6), i64(nil, 10))
	wantT(t, out[0], ir.Float32, sh(2), 2.5, 3.5)
	wantT(t, out[1], ir.Float16, sh(2), 2, 6)
	wantT(t, out[2], ir.Int32, sh(2), 15, 16)
	wantT(t, out[3], ir.Float32, sh(2), 0.25, 0.5)
	wantT(t, out[4], ir.Bool, sh(2), 1, 0)
}

func TestIntegerDivisionSigns(t *testing.T) {
	out := runIR(t, `graph forward(%a: i64[4], %b: i64[4], %x: f32[4], %y: f32[4]) {
  %floor: i64[4] = aten.div.Tensor_mode(%a, %b, rounding_mode="floor")
  %trunc: i64[4] = aten.div.Tensor_mode(%a, %b, rounding_mode="trunc")
  %rem: i64[4] = aten.remainder.Tensor(%a, %b)
  %fmod: i64[4] = aten.fmod.Tensor(%a, %b)
  %ffloor: f32[4] = aten.floor_divide.default(%x, %y)
  %frem: f32[4] = aten.remainder.Tensor(%x, %y)
  %ffmod: f32[4] = aten.fmod.Tensor(%x, %y)
  return %floor, %trunc, %rem, %fmod, %ffloor, %frem, %ffmod
}
`, i64(sh(4), 7, -7, 7, -7), i64(sh(4), 2, 2, -2, -2),
		f32(sh(4), 7, -7, 7, -7.5), f32(sh(4), 2, 2, -2, 2))
	wantT(t, out[0], ir.Int64, sh(4), 3, -4, -4, 3)
	wantT(t, out[1], ir.Int64, sh(4), 3, -3, -3, 3)
	wantT(t, out[2], ir.Int64, sh(4), 1, 1, -1, -1)
	wantT(t, out[3], ir.Int64, sh(4), 1, -1, 1, -1)
	wantT(t, out[4], ir.Float32, sh(4), 3, -4, -4, -4)
	wantT(t, out[5], ir.Float32, sh(4), 1, 1, -1, 0.5)
	wantT(t, out[6], ir.Float32, sh(4), 1, -1, 1, -1.5)

	_, err := runIRErr(t, `graph forward(%a: i64[2], %b: i64[2]) {
  %r: i64[2] = aten.remainder.Tensor(%a, %b)
  return %r
}
`, i64(sh(2), 1, 2), i64(sh(2), 1, 0))
	wantErr(t, err, "ZeroDivisionError", "%r (aten.remainder.Tensor)")
	if !IsDomainError(err) {
		t.Fatal("integer division by zero should be a domain error")
	}
}

func TestNaNPropagation(t *testing.T) {
	out := runIR(t, `graph forward(%x: f32[3], %y: f32[3]) {
  %max: f32[3] = aten.maximum.default(%x, %y)
  %fmax: f32[3] = aten.fmax.default(%x, %y)
  %amax: f32[] = aten.amax.default(%x)
  %argmax: i64[] = aten.argmax.default(%x)
  %clamp: f32[3] = aten.clamp.default(%x, 0.0, 1.5)
  %relu: f32[3] = aten.relu.default(%x)
  %sign: f32[3] = aten.sign.default(%x)
  return %max, %fmax, %amax, %argmax, %clamp, %relu, %sign
}
`, f32(sh(3), 1, nan, 3), f32(sh(3), 2, 2, nan))
	wantT(t, out[0], ir.Float32, sh(3), 2, nan, nan)
	wantT(t, out[1], ir.Float32, sh(3), 2, 2, 3)
	wantT(t, out[2], ir.Float32, nil, nan)
	wantT(t, out[3], ir.Int64, nil, 1)
	wantT(t, out[4], ir.Float32, sh(3), 1, nan, 1.5)
	wantT(t, out[5], ir.Float32, sh(3), 1, nan, 3)
	wantT(t, out[6], ir.Float32, sh(3), 1, 0, 1)
}

func TestUnaryFloatAndIntegerRules(t *testing.T) {
	out := runIR(t, `graph forward(%i: i64[3], %x: f32[3]) {
  %sqrt: f32[3] = aten.sqrt.default(%i)
  %abs: i64[3] = aten.abs.default(%i)
  %round: f32[3] = aten.round.default(%x)
  %log: f32[3] = aten.log.default(%x)
  %sig: f32[3] = aten.sigmoid.default(%x)
  %gelu: f32[3] = aten.gelu.default(%x)
  %gelut: f32[3] = aten.gelu.default(%x, approximate="tanh")
  %hs: f32[3] = aten.hardswish.default(%x)
  %silu: f32[3] = aten.silu.default(%x)
  return %sqrt, %abs, %round, %log, %sig, %gelu, %gelut, %hs, %silu
}
`, i64(sh(3), 4, -9, 2), f32(sh(3), 0.5, 2.5, -1.5))
	wantT(t, out[0], ir.Float32, sh(3), 2, nan, float64(float32(math.Sqrt2)))
	wantT(t, out[1], ir.Int64, sh(3), 4, 9, 2)
	wantT(t, out[2], ir.Float32, sh(3), 0, 2, -2) // half to even
	wantT(t, out[3], ir.Float32, sh(3), f32r(math.Log(0.5)), f32r(math.Log(2.5)), nan)
	wantT(t, out[4], ir.Float32, sh(3), f32r(1/(1+math.Exp(-0.5))), f32r(1/(1+math.Exp(-2.5))), f32r(1/(1+math.Exp(1.5))))
	g := func(x float64) float64 { return f32r(0.5 * x * (1 + math.Erf(x/math.Sqrt2))) }
	wantT(t, out[5], ir.Float32, sh(3), g(0.5), g(2.5), g(-1.5))
	gt := func(x float64) float64 {
		return f32r(0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))))
	}
	wantT(t, out[6], ir.Float32, sh(3), gt(0.5), gt(2.5), gt(-1.5))
	wantT(t, out[7], ir.Float32, sh(3), 0.5*3.5/6, 2.5*5.5/6, -1.5*1.5/6)
	s := func(x float64) float64 { return f32r(x / (1 + math.Exp(-x))) }
	wantT(t, out[8], ir.Float32, sh(3), s(0.5), s(2.5), s(-1.5))
}

func f32r(x float64) float64 { return float64(float32(x)) }

func TestFloat16ComputesThroughFloat32(t *testing.T) {
	h := FromFloat64(ir.Float16, sh(2), []float64{1, 2049})
	if got := h.Float64s(); got[1] != 2048 {
		t.Fatalf("2049 in float16 is 2048 (ties to even), got %v", got[1])
	}
	out := runIR(t, `graph forward(%x: bf16[2], %y: bf16[2]) {
  %add: bf16[2] = aten.add.Tensor(%x, %y)
  return %add
}
`, FromFloat64(ir.BFloat16, sh(2), []float64{1, 256}), FromFloat64(ir.BFloat16, sh(2), []float64{1.0 / 256, 1}))
	// 1 + 1/256 ties to 1 in bfloat16; 256 + 1 rounds to 256.
	wantT(t, out[0], ir.BFloat16, sh(2), 1, 256)
}

func TestWhereAndMaskedFill(t *testing.T) {
	out := runIR(t, `graph forward(%c: b8[2, 1], %x: f32[3], %y: i64[]) {
  %w: f32[2, 3] = aten.where.self(%c, %x, %y)
  %m: b8[3] = aten.gt.Scalar(%x, 1)
  %mf: f32[3] = aten.masked_fill.Scalar(%x, %m, -1)
  %ws: i64[3] = aten.where.Scalar(%m, 1, 0)
  return %w, %mf, %ws
}
`, b8(sh(2, 1), 1, 0), f32(sh(3), 1, 2, 3), i64(nil, 7))
	wantT(t, out[0], ir.Float32, sh(2, 3), 1, 2, 3, 7, 7, 7)
	wantT(t, out[1], ir.Float32, sh(3), 1, -1, -1)
	wantT(t, out[2], ir.Int64, sh(3), 0, 1, 1)
}

func TestPowIntegerRules(t *testing.T) {
	out := runIR(t, `graph forward(%i: i64[3], %x: f32[3]) {
  %a: i64[3] = aten.pow.Tensor_Scalar(%i, 2)
  %b: f32[3] = aten.pow.Tensor_Scalar(%i, 0.5)
  %n: i64[3] = aten.neg.default(%i)
  %c: i64[3] = aten.pow.Tensor_Tensor(%i, %n)
  %d: f32[3] = aten.pow.Scalar(2, %x)
  return %a, %b, %c, %d
}
`, i64(sh(3), 1, -1, 3), f32(sh(3), 0, 1, -1))
	wantT(t, out[0], ir.Int64, sh(3), 1, 1, 9)
	wantT(t, out[1], ir.Float32, sh(3), 1, nan, f32r(math.Sqrt(3)))
	wantT(t, out[2], ir.Int64, sh(3), 1, -1, 0) // 1^-1, (-1)^1, 3^-3 → 0
	wantT(t, out[3], ir.Float32, sh(3), 1, 2, 0.5)
	_, err := runIRErr(t, `graph forward(%i: i64[3]) {
  %a: i64[3] = aten.pow.Tensor_Scalar(%i, -2)
  return %a
}
`, i64(sh(3), 1, 2, 3))
	wantErr(t, err, "negative integer powers")
}

func TestInPlaceThroughViews(t *testing.T) {
	out := runIR(t, `graph forward(%x: f32[2, 3]) {
  %clone: f32[2, 3] = aten.clone.default(%x)
  %row: f32[3] = aten.select.int(%clone, 0, 1)
  %add_: f32[3] = aten.add_.Tensor(%row, 10)
  %t: f32[3, 2] = aten.t.default(%clone)
  %mul_: f32[3, 2] = aten.mul_.Scalar(%t, 2)
  return %clone, %x
}
`, f32(sh(2, 3), 1, 2, 3, 4, 5, 6))
	wantT(t, out[0], ir.Float32, sh(2, 3), 2, 4, 6, 28, 30, 32)
	wantT(t, out[1], ir.Float32, sh(2, 3), 1, 2, 3, 4, 5, 6) // the caller's input is untouched
	_, err := runIRErr(t, `graph forward(%x: i64[2]) {
  %d: i64[2] = aten.div_.Scalar(%x, 2)
  return %d
}
`, i64(sh(2), 1, 2))
	wantErr(t, err, "can't be cast")
}

func TestComparisonsAcrossDtypes(t *testing.T) {
	out := runIR(t, `graph forward(%u: u8[2], %s: i8[2]) {
  %lt: b8[2] = aten.lt.Tensor(%u, %s)
  %eq: b8[2] = aten.eq.Scalar(%u, 255)
  return %lt, %eq
}
`, FromInt64(ir.Uint8, sh(2), []int64{200, 1}), FromInt64(ir.Int8, sh(2), []int64{-1, 2}))
	// uint8 with int8 compares in int16: 200 < -1 is false.
	wantT(t, out[0], ir.Bool, sh(2), 0, 1)
	wantT(t, out[1], ir.Bool, sh(2), 0, 0)
}
