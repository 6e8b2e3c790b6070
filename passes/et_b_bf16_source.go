package passes

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/fxport/fxport/ir"
)

// BF16Source is a weight source that yields another source's float storage
// (f16, f32 or f64, little-endian) converted element by element to bfloat16
// with round-to-nearest-even. The storage is converted whole, so strides and
// storage offset (in elements) are unchanged. Nothing is read until Open.
// Its IR spelling is
//
//	bf16(src="inline(\"…\")", from="f32")
type BF16Source struct {
	Inner ir.WeightSource
	From  ir.DType
}

func init() { ir.RegisterWeightSource("bf16", parseBF16Source) }

func newBF16Source(inner ir.WeightSource, from ir.DType) (*BF16Source, error) {
	s := &BF16Source{Inner: inner, From: from}
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *BF16Source) check() error {
	if s.Inner == nil {
		return fmt.Errorf("bf16(...): no inner source")
	}
	switch s.From {
	case ir.Float16, ir.Float32, ir.Float64:
	default:
		return fmt.Errorf("bf16(...): cannot convert from %s (want f16, f32 or f64)", s.From)
	}
	if n := s.Inner.Size(); n%int64(s.From.Size()) != 0 {
		return fmt.Errorf("bf16(...): source %s has %d bytes, not a whole number of %s elements", s.Inner, n, s.From)
	}
	return nil
}

// Size is the number of bytes of the converted storage.
func (s *BF16Source) Size() int64 { return s.Inner.Size() / int64(s.From.Size()) * 2 }

// Open reads the inner storage and returns the converted bytes.
func (s *BF16Source) Open() (io.ReadCloser, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	data, err := readSource("bf16", s.Inner)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != s.Inner.Size() {
		return nil, fmt.Errorf("bf16(...): %s yielded %d bytes, want %d", s.Inner, len(data), s.Inner.Size())
	}
	es := s.From.Size()
	out := make([]byte, len(data)/es*2)
	for i := 0; i*es < len(data); i++ {
		var f float32
		switch s.From {
		case ir.Float16:
			f = f16ToF32(binary.LittleEndian.Uint16(data[i*es:]))
		case ir.Float32:
			f = math.Float32frombits(binary.LittleEndian.Uint32(data[i*es:]))
		case ir.Float64:
			f = float32(math.Float64frombits(binary.LittleEndian.Uint64(data[i*es:])))
		}
		binary.LittleEndian.PutUint16(out[2*i:], F32ToBF16(f))
	}
	return io.NopCloser(bytes.NewReader(out)), nil
}

func (s *BF16Source) String() string {
	return fmt.Sprintf("bf16(src=%s, from=%s)", strconv.Quote(s.Inner.String()), strconv.Quote(s.From.Abbr()))
}

// F32ToBF16 rounds f to bfloat16 (nearest, ties to even), as torch's
// .to(torch.bfloat16) does; NaNs stay quiet NaNs with their sign.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// f16ToF32 widens an IEEE half (exact).
func f16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | man<<13)
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		// Subnormal: value = man · 2^-24.
		f := float32(man) * float32(math.Ldexp(1, -24))
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

func parseBF16Source(pos []ir.Arg, kw map[string]ir.Arg) (ir.WeightSource, error) {
	if len(pos) != 0 || len(kw) != 2 {
		return nil, fmt.Errorf("bf16(...) takes the keyword arguments src and from")
	}
	src, from := kw["src"], kw["from"]
	if src.Kind != ir.ArgString {
		return nil, fmt.Errorf("bf16(...): src must be a string")
	}
	dt, ok := ir.DTypeFromAbbr(from.Str)
	if from.Kind != ir.ArgString || !ok {
		return nil, fmt.Errorf("bf16(...): from must be f16, f32 or f64")
	}
	inner, err := ir.ParseWeightSource(src.Str)
	if err != nil {
		return nil, fmt.Errorf("bf16(...): src: %w", err)
	}
	return newBF16Source(inner, dt)
}
