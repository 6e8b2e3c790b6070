package pte

import (
	"encoding/binary"
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"

	ftfb "github.com/fxport/fxport/targets/executorch/fb/flat_tensor_flatbuffer"
)

// PTDSegmentAlignment is the alignment EncodePTD gives the segment base and
// every segment (exir's default for flat-tensor files).
const PTDSegmentAlignment = 128

// EncodePTD serializes named data as a flat-tensor data file (.ptd,
// identifier FT01, pte-format.md §7.1): one segment per entry, in the order
// given, each starting at a multiple of PTDSegmentAlignment from the segment
// base; the 40-byte FH01 header is inserted at offset 8 (the flatbuffer's
// root offset moves by 40), so the flatbuffer body starts at 48. An entry
// with HasLayout carries its TensorLayout; others (opaque blobs such as a
// CUDA delegate's shared library) have none. Keys must be unique and
// non-empty. The output is deterministic and decodes with DecodePTD, which
// EncodePTD runs before returning.
func EncodePTD(entries []NamedTensor) ([]byte, error) {
	seen := map[string]bool{}
	for i, e := range entries {
		if e.Key == "" {
			return nil, fmt.Errorf("encode .ptd: entry %d has an empty key", i)
		}
		if seen[e.Key] {
			return nil, fmt.Errorf("encode .ptd: key %q appears twice", e.Key)
		}
		seen[e.Key] = true
	}
	ft := &ftfb.FlatTensorT{Version: 0, Segments: []*ftfb.DataSegmentT{}, NamedData: []*ftfb.NamedDataT{}}
	var off uint64
	for i, e := range entries {
		off = alignUp64(off, PTDSegmentAlignment)
		ft.Segments = append(ft.Segments, &ftfb.DataSegmentT{Offset: off, Size: uint64(len(e.Data))})
		nd := &ftfb.NamedDataT{Key: e.Key, SegmentIndex: uint32(i)}
		if e.HasLayout {
			nd.TensorLayout = &ftfb.TensorLayoutT{ScalarType: e.ScalarType, Sizes: append([]int32{}, e.Sizes...), DimOrder: append([]byte{}, e.DimOrder...)}
		}
		ft.NamedData = append(ft.NamedData, nd)
		off += uint64(len(e.Data))
	}
	b := flatbuffers.NewBuilder(1024)
	b.FinishWithFileIdentifier(ft.Pack(b), []byte(ptdMagic))
	fb := b.FinishedBytes()
	const headerLen, fbOffset = 40, 48
	out := make([]byte, 0, fbOffset+len(fb))
	out = append(out, fb[:8]...)
	binary.LittleEndian.PutUint32(out[0:], binary.LittleEndian.Uint32(fb[0:])+headerLen)
	var h [headerLen]byte
	copy(h[0:], ptdHeaderMagic)
	binary.LittleEndian.PutUint32(h[4:], headerLen)
	binary.LittleEndian.PutUint64(h[8:], fbOffset)
	binary.LittleEndian.PutUint64(h[16:], uint64(len(fb)))
	base := alignUp64(uint64(len(fb))+fbOffset, PTDSegmentAlignment)
	binary.LittleEndian.PutUint64(h[24:], base)
	binary.LittleEndian.PutUint64(h[32:], off)
	out = append(out, h[:]...)
	out = append(out, fb[8:]...)
	for uint64(len(out)) < base {
		out = append(out, 0)
	}
	for i, e := range entries {
		for uint64(len(out)) < base+ft.Segments[i].Offset {
			out = append(out, 0)
		}
		out = append(out, e.Data...)
	}
	if _, err := DecodePTD("encoded .ptd", out); err != nil {
		return nil, fmt.Errorf("encode .ptd: output does not decode: %w", err)
	}
	return out, nil
}

func alignUp64(v, a uint64) uint64 { return (v + a - 1) / a * a }
