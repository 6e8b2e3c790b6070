package passes

import (
	"encoding/binary"
	"io"
	"math"
	"testing"

	"github.com/fxport/fxport/ir"
)

func TestF32ToBF16Rounding(t *testing.T) {
	cases := []struct {
		in   float32
		want uint16
	}{
		{1, 0x3f80}, {-2, 0xc000}, {0, 0},
		{math.Float32frombits(0x3f808000), 0x3f80}, // tie, even stays
		{math.Float32frombits(0x3f818000), 0x3f82}, // tie, odd rounds up
		{math.Float32frombits(0x3f808001), 0x3f81}, // above half
		{float32(math.Inf(1)), 0x7f80},
	}
	for _, c := range cases {
		if got := F32ToBF16(c.in); got != c.want {
			t.Errorf("F32ToBF16(%#x) = %#x, want %#x", math.Float32bits(c.in), got, c.want)
		}
	}
	if got := F32ToBF16(float32(math.NaN())); got&0x7f80 != 0x7f80 || got&0x7f == 0 {
		t.Errorf("NaN gave %#x", got)
	}
}

func TestBF16SourceConvertsAndParses(t *testing.T) {
	inner, err := ir.ParseWeightSource(`inline("0000803f000000c0")`)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newBF16Source(inner, ir.Float32)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ir.ParseWeightSource(s.String())
	if err != nil || back.String() != s.String() {
		t.Fatalf("round trip %q: %v, %v", s.String(), back, err)
	}
	r, err := back.Open()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	if s.Size() != 4 || len(b) != 4 || binary.LittleEndian.Uint16(b) != 0x3f80 || binary.LittleEndian.Uint16(b[2:]) != 0xc000 {
		t.Errorf("converted % x (size %d)", b, s.Size())
	}
	// f16 1.0 (0x3c00) and a subnormal.
	h, _ := ir.ParseWeightSource(`inline("003c0100")`)
	hs, _ := newBF16Source(h, ir.Float16)
	r, _ = hs.Open()
	b, _ = io.ReadAll(r)
	if binary.LittleEndian.Uint16(b) != 0x3f80 || binary.LittleEndian.Uint16(b[2:]) != F32ToBF16(float32(math.Ldexp(1, -24))) {
		t.Errorf("f16 converted % x", b)
	}
	if _, err := newBF16Source(inner, ir.Int32); err == nil {
		t.Errorf("int32 source accepted")
	}
	if _, err := ir.ParseWeightSource(`bf16(src="inline(\"00\")", from="f32")`); err == nil {
		t.Errorf("odd-sized source accepted")
	}
}
