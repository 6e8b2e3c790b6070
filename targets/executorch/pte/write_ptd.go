package pte

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"

	ftfb "github.com/fxport/fxport/targets/executorch/fb/flat_tensor_flatbuffer"
)

// PTDSegmentAlignment is the alignment EncodePTD gives the segment base and
// every segment (exir's default for flat-tensor files).
const PTDSegmentAlignment = 128

// PTDOptions configure EncodePTDWith.
type PTDOptions struct {
	// SegmentAlignment aligns the segment base and every segment; 0 means
	// PTDSegmentAlignment. exir's FlatTensorConfig uses 16.
	SegmentAlignment uint64
	// ShareSegments stores byte-identical entries once: their named_data
	// entries point at one segment (exir's NamedDataStore keeps one buffer
	// per distinct content).
	ShareSegments bool
}

// EncodePTD serializes named data as a flat-tensor data file (.ptd,
// identifier FT01, pte-format.md §7.1) with PTDSegmentAlignment and one
// segment per entry; see EncodePTDWith.
func EncodePTD(entries []NamedTensor) ([]byte, error) {
	return EncodePTDWith(entries, PTDOptions{})
}

// EncodePTDWith serializes named data as a flat-tensor data file: one
// segment per entry (or per distinct content with ShareSegments), in the
// order given, each starting at a multiple of lcm(SegmentAlignment, the
// entry's Alignment) from the segment base; the 40-byte FH01 header is
// inserted at offset 8 (the flatbuffer's root offset moves by 40), so the
// flatbuffer body starts at 48, and the segment base is the flatbuffer's
// end, padded to 16, aligned to SegmentAlignment (exir's layout). An entry
// with HasLayout carries its TensorLayout; others (opaque blobs such as a
// CUDA delegate's shared library or XNNPACK weights) have none. Keys must be
// unique and non-empty. The output is deterministic and decodes with
// DecodePTD, which EncodePTDWith runs before returning.
func EncodePTDWith(entries []NamedTensor, o PTDOptions) ([]byte, error) {
	in := make([]NamedTensor, len(entries))
	for i, e := range entries {
		in[i] = e
		if e.Lazy == nil {
			continue
		}
		if e.Data != nil {
			return nil, fmt.Errorf("encode .ptd: entry %d (%s): both data and a lazy source", i, e.Key)
		}
		var b bytes.Buffer
		b.Grow(int(e.Lazy.Size))
		if err := copyLazy(&b, *e.Lazy, make([]byte, 4096), fmt.Sprintf("encode .ptd: entry %d %q", i, e.Key)); err != nil {
			return nil, err
		}
		in[i].Data, in[i].Lazy = b.Bytes(), nil
	}
	l, err := layoutPTD(in, o)
	if err != nil {
		return nil, err
	}
	out := l.head
	for i, e := range l.blobs {
		for uint64(len(out)) < l.base+l.ft.Segments[i].Offset {
			out = append(out, 0)
		}
		out = append(out, e.Data...)
	}
	if _, err := DecodePTD("encoded .ptd", out); err != nil {
		return nil, fmt.Errorf("encode .ptd: output does not decode: %w", err)
	}
	return out, nil
}

// ptdLayout is a .ptd laid out but not yet written.
type ptdLayout struct {
	head  []byte // header and flatbuffer, padded to the segment base
	base  uint64
	size  uint64 // segment_data_size
	ft    *ftfb.FlatTensorT
	blobs []NamedTensor // the entry holding each segment's bytes, in segment order
}

// layoutPTD places the entries' segments (sharing identical contents with
// ShareSegments: the sha256 of Data, or a lazy entry's Digest, or its bytes
// hashed as a stream) and builds the header and flatbuffer.
func layoutPTD(entries []NamedTensor, o PTDOptions) (*ptdLayout, error) {
	segAlign := o.SegmentAlignment
	if segAlign == 0 {
		segAlign = PTDSegmentAlignment
	}
	seen := map[string]bool{}
	for i, e := range entries {
		if e.Key == "" {
			return nil, fmt.Errorf("encode .ptd: entry %d has an empty key", i)
		}
		if seen[e.Key] {
			return nil, fmt.Errorf("encode .ptd: key %q appears twice", e.Key)
		}
		seen[e.Key] = true
		if e.Lazy != nil && e.Data != nil {
			return nil, fmt.Errorf("encode .ptd: entry %d (%s): both data and a lazy source", i, e.Key)
		}
		if e.Lazy != nil && e.Lazy.Open == nil {
			return nil, fmt.Errorf("encode .ptd: entry %d (%s): lazy source without an opener", i, e.Key)
		}
	}
	l := &ptdLayout{ft: &ftfb.FlatTensorT{Version: 0, Segments: []*ftfb.DataSegmentT{}, NamedData: []*ftfb.NamedDataT{}}}
	ft := l.ft
	shared := map[[32]byte]uint32{}
	var off uint64
	for i, e := range entries {
		size := uint64(len(e.Data))
		if e.Lazy != nil {
			size = e.Lazy.Size
		}
		var key [32]byte
		if o.ShareSegments {
			var err error
			if key, err = entryDigest(e); err != nil {
				return nil, fmt.Errorf("encode .ptd: entry %d (%s): %w", i, e.Key, err)
			}
		}
		seg, ok := shared[key]
		if !o.ShareSegments || !ok {
			off = alignUp64(off, lcm64(segAlign, e.Alignment))
			ft.Segments = append(ft.Segments, &ftfb.DataSegmentT{Offset: off, Size: size})
			l.blobs = append(l.blobs, e)
			off += size
			seg = uint32(len(ft.Segments) - 1)
			shared[key] = seg
		}
		nd := &ftfb.NamedDataT{Key: e.Key, SegmentIndex: seg}
		if e.HasLayout {
			nd.TensorLayout = &ftfb.TensorLayoutT{ScalarType: e.ScalarType, Sizes: append([]int32{}, e.Sizes...), DimOrder: append([]byte{}, e.DimOrder...)}
		}
		ft.NamedData = append(ft.NamedData, nd)
	}
	b := flatbuffers.NewBuilder(1024)
	b.FinishWithFileIdentifier(ft.Pack(b), []byte(ptdMagic))
	fb := b.FinishedBytes()
	const headerLen, fbOffset = 40, 48
	l.base = alignUp64(alignUp64(uint64(len(fb)), 16)+fbOffset, segAlign)
	l.size = off
	out := make([]byte, 0, l.base)
	out = append(out, fb[:8]...)
	binary.LittleEndian.PutUint32(out[0:], binary.LittleEndian.Uint32(fb[0:])+headerLen)
	var h [headerLen]byte
	copy(h[0:], ptdHeaderMagic)
	binary.LittleEndian.PutUint32(h[4:], headerLen)
	binary.LittleEndian.PutUint64(h[8:], fbOffset)
	binary.LittleEndian.PutUint64(h[16:], uint64(len(fb)))
	binary.LittleEndian.PutUint64(h[24:], l.base)
	binary.LittleEndian.PutUint64(h[32:], off)
	out = append(out, h[:]...)
	out = append(out, fb[8:]...)
	for uint64(len(out)) < l.base {
		out = append(out, 0)
	}
	l.head = out
	return l, nil
}

// entryDigest is the sha256 of an entry's bytes.
func entryDigest(e NamedTensor) ([32]byte, error) {
	if e.Lazy == nil {
		return sha256.Sum256(e.Data), nil
	}
	if e.Lazy.Digest != nil {
		return *e.Lazy.Digest, nil
	}
	h := sha256.New()
	if err := copyLazy(h, *e.Lazy, make([]byte, 64<<10), "hashing"); err != nil {
		return [32]byte{}, err
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, nil
}

func alignUp64(v, a uint64) uint64 {
	if a <= 1 {
		return v
	}
	return (v + a - 1) / a * a
}

// lcm64 is the least common multiple of two alignments (0 counts as 1).
func lcm64(a, b uint64) uint64 {
	if a == 0 {
		a = 1
	}
	if b == 0 {
		b = 1
	}
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}
