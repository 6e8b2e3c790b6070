package interp

import "math"

// Float16 and bfloat16 conversions. Both round to nearest, ties to even;
// values that overflow become infinities and NaNs stay NaN (quiet).

// F16Bits converts a float32 to IEEE 754 binary16 bits.
func F16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp == 0 && mant == 0:
		return sign
	}
	// Unbiased exponent.
	e := exp - 127
	if e > 15 {
		return sign | 0x7c00
	}
	if e >= -14 { // normal half
		// 10 mantissa bits kept out of 23: round off 13.
		m := mant
		half := uint32(1) << 12
		rest := m & 0x1fff
		m >>= 13
		if rest > half || (rest == half && m&1 == 1) {
			m++
		}
		he := uint32(e+15) << 10
		v := he + m // a mantissa carry bumps the exponent, possibly to inf
		if v >= 0x7c00 {
			return sign | 0x7c00
		}
		return sign | uint16(v)
	}
	// Subnormal half: value = m * 2^-24.
	if e < -25 {
		return sign
	}
	m := mant | 0x800000          // implicit bit; value = m * 2^(e-23)
	shift := uint32(-e - 14 + 13) // bits to drop so that the unit is 2^-24
	half := uint32(1) << (shift - 1)
	rest := m & ((1 << shift) - 1)
	m >>= shift
	if rest > half || (rest == half && m&1 == 1) {
		m++
	}
	return sign | uint16(m)
}

// F16Float converts binary16 bits to a float32 (exactly).
func F16Float(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		if mant != 0 {
			return math.Float32frombits(sign | 0x7fc00000 | mant<<13)
		}
		return math.Float32frombits(sign | 0x7f800000)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		f := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

// BF16Bits converts a float32 to bfloat16 bits.
func BF16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN
		return uint16(b>>16) | 0x40
	}
	rest := b & 0xffff
	hi := b >> 16
	if rest > 0x8000 || (rest == 0x8000 && hi&1 == 1) {
		hi++
	}
	return uint16(hi)
}

// BF16Float converts bfloat16 bits to a float32 (exactly).
func BF16Float(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// roundF16 rounds x to the nearest float16 value, through float32 as torch's
// c10::Half does for doubles.
func roundF16(x float64) float64 { return float64(F16Float(F16Bits(float32(x)))) }

// roundBF16 rounds x to the nearest bfloat16 value, through float32.
func roundBF16(x float64) float64 { return float64(BF16Float(BF16Bits(float32(x)))) }
