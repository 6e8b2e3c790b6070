package pte

import (
	"bytes"
	"encoding/binary"
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"

	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// Layout constants of the files Encode writes (exir's defaults).
const (
	// SegmentAlignment is the alignment of every segment relative to the
	// segment base offset, and of the segment base offset itself.
	SegmentAlignment = 128
	// ExtendedHeaderLength is the eh00 header version Encode writes.
	ExtendedHeaderLength = 32
	// extHeaderPadded is the eh00 block inserted at offset 8: the header
	// padded to 16 (the schema's largest force_align).
	extHeaderPadded = 32
	// inlineAlignment is the force_align of Buffer.storage and
	// BackendDelegateInlineData.data.
	inlineAlignment = 16
)

// Encode serializes f.Program and the bytes of f.Segments into a .pte held
// in memory; Write streams the same bytes.
//
// f.Segments is authoritative for the segment table: its entries' bytes
// (Data, or Pieces read now) are laid out in order, each at the next
// multiple of SegmentAlignment relative to the segment base offset (an
// empty segment takes the current aligned position without advancing it),
// and Program.segments is rewritten from that layout (f.Program itself is
// not modified). When any segment holds data, a 32-byte eh00 header is
// inserted at offset 8 with program_size, segment_base_offset =
// align_up(program_size, 128) and segment_data_size = the end of the last
// segment; without segment data no header is written, as exir does. Inline
// Buffer.storage and BackendDelegateInlineData.data vectors are aligned to
// 16 (their force_align). File.Name, Size, Header, ProgramSize, Methods and
// Bundled are ignored.
//
// The bytes are deterministic for a given File, and Encode decodes them
// again with Decode before returning, so a File the reader would reject is
// an error rather than a written file.
func Encode(f *File) ([]byte, error) {
	if f == nil || f.Program == nil {
		return nil, fmt.Errorf("encode .pte: no program")
	}
	name := f.Name
	if name == "" {
		name = "<encoded program>"
	}
	segs := make([]Segment, len(f.Segments))
	for i, s := range f.Segments {
		b, err := materialize(i, s)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", name, err)
		}
		segs[i] = Segment{Offset: s.Offset, Size: s.Size, Data: b}
		if s.Pieces != nil {
			segs[i].Size = uint64(len(b))
		}
	}
	lf := *f
	lf.Segments = segs
	l, err := layout(&lf, name)
	if err != nil {
		return nil, err
	}
	out := l.head
	if l.dataSize > 0 {
		var buf bytes.Buffer
		buf.Grow(int(l.base + l.dataSize))
		buf.Write(l.head)
		for i, s := range segs {
			if len(s.Data) == 0 {
				continue
			}
			at := l.base + l.table[i].Offset
			buf.Write(make([]byte, at-uint64(buf.Len())))
			buf.Write(s.Data)
		}
		out = buf.Bytes()
	}
	if _, err := Decode(name, out); err != nil {
		return nil, fmt.Errorf("encode: written program does not read back: %w", err)
	}
	return out, nil
}

// fileLayout is a .pte laid out but not yet written: the bytes before the
// segment data and where each segment goes.
type fileLayout struct {
	// head is the program flatbuffer with the eh00 header and the zero
	// padding up to the segment base (just the flatbuffer when no segment
	// holds data).
	head     []byte
	base     uint64               // segment base offset (0 without segment data)
	table    []*etfb.DataSegmentT // Program.segments as written
	lens     []uint64             // each segment's length
	dataSize uint64               // segment_data_size: the end of the last segment
	prog     *etfb.ProgramT       // the program with its segment table
}

// layout places f's segments and builds the program flatbuffer and header.
func layout(f *File, name string) (*fileLayout, error) {
	prog := *f.Program // shallow copy: only the segment table is replaced
	if f.Program.Segments != nil || len(f.Segments) > 0 {
		prog.Segments = make([]*etfb.DataSegmentT, len(f.Segments))
	}
	l := &fileLayout{table: prog.Segments, lens: make([]uint64, len(f.Segments)), prog: &prog}
	var cursor uint64
	for i, s := range f.Segments {
		n, err := segmentLen(i, s)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", name, err)
		}
		off := alignUp(cursor, SegmentAlignment)
		prog.Segments[i] = &etfb.DataSegmentT{Offset: off, Size: n}
		l.lens[i] = n
		if n > 0 {
			cursor = off + n
		}
	}
	fb, err := packProgram(&prog)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", name, err)
	}
	l.dataSize = cursor
	if cursor == 0 {
		l.head = fb
		return l, nil
	}
	programSize := uint64(len(fb)) + extHeaderPadded
	l.base = alignUp(programSize, SegmentAlignment)
	head := make([]byte, 0, l.base)
	head = append(head, fb[:8]...)
	var h [extHeaderPadded]byte
	copy(h[0:4], extHeaderMagic)
	binary.LittleEndian.PutUint32(h[4:], ExtendedHeaderLength)
	binary.LittleEndian.PutUint64(h[8:], programSize)
	binary.LittleEndian.PutUint64(h[16:], l.base)
	binary.LittleEndian.PutUint64(h[24:], cursor)
	head = append(head, h[:]...)
	head = append(head, fb[8:]...)
	head = append(head, make([]byte, l.base-programSize)...)
	// Bump the root table offset past the inserted header; every other
	// flatbuffer offset is relative and unchanged.
	root := binary.LittleEndian.Uint32(head[0:4])
	binary.LittleEndian.PutUint32(head[0:4], root+extHeaderPadded)
	l.head = head
	return l, nil
}

func alignUp(x, a uint64) uint64 { return (x + a - 1) / a * a }

// packProgram builds the program flatbuffer with the generated builder code.
// It mirrors ProgramT.Pack except that the inline data vectors get their
// schema's force_align (flatc's Go generator ignores it).
func packProgram(t *etfb.ProgramT) (fb []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			fb, err = nil, fmt.Errorf("flatbuffer builder: %v", r)
		}
	}()
	for i, p := range t.ExecutionPlan {
		if p == nil {
			return nil, fmt.Errorf("Program.execution_plan[%d]: nil", i)
		}
	}
	b := flatbuffers.NewBuilder(1024)
	vec := func(n int, each func(j int) flatbuffers.UOffsetT) flatbuffers.UOffsetT {
		offs := make([]flatbuffers.UOffsetT, n)
		for j := range offs {
			offs[j] = each(j)
		}
		b.StartVector(4, n, 4)
		for j := n - 1; j >= 0; j-- {
			b.PrependUOffsetT(offs[j])
		}
		return b.EndVector(n)
	}
	var plans, consts, inline, segs, mut, named flatbuffers.UOffsetT
	if t.ExecutionPlan != nil {
		plans = vec(len(t.ExecutionPlan), func(j int) flatbuffers.UOffsetT { return t.ExecutionPlan[j].Pack(b) })
	}
	if t.ConstantBuffer != nil {
		consts = vec(len(t.ConstantBuffer), func(j int) flatbuffers.UOffsetT {
			buf := t.ConstantBuffer[j]
			if buf == nil {
				return 0
			}
			var data flatbuffers.UOffsetT
			if buf.Storage != nil {
				data = alignedBytes(b, buf.Storage)
			}
			etfb.BufferStart(b)
			etfb.BufferAddStorage(b, data)
			return etfb.BufferEnd(b)
		})
	}
	if t.BackendDelegateData != nil {
		inline = vec(len(t.BackendDelegateData), func(j int) flatbuffers.UOffsetT {
			d := t.BackendDelegateData[j]
			if d == nil {
				return 0
			}
			var data flatbuffers.UOffsetT
			if d.Data != nil {
				data = alignedBytes(b, d.Data)
			}
			etfb.BackendDelegateInlineDataStart(b)
			etfb.BackendDelegateInlineDataAddData(b, data)
			return etfb.BackendDelegateInlineDataEnd(b)
		})
	}
	if t.Segments != nil {
		segs = vec(len(t.Segments), func(j int) flatbuffers.UOffsetT { return t.Segments[j].Pack(b) })
	}
	constSeg := t.ConstantSegment.Pack(b)
	if t.MutableDataSegments != nil {
		mut = vec(len(t.MutableDataSegments), func(j int) flatbuffers.UOffsetT { return t.MutableDataSegments[j].Pack(b) })
	}
	if t.NamedData != nil {
		named = vec(len(t.NamedData), func(j int) flatbuffers.UOffsetT { return t.NamedData[j].Pack(b) })
	}
	etfb.ProgramStart(b)
	etfb.ProgramAddVersion(b, t.Version)
	etfb.ProgramAddExecutionPlan(b, plans)
	etfb.ProgramAddConstantBuffer(b, consts)
	etfb.ProgramAddBackendDelegateData(b, inline)
	etfb.ProgramAddSegments(b, segs)
	etfb.ProgramAddConstantSegment(b, constSeg)
	etfb.ProgramAddMutableDataSegments(b, mut)
	etfb.ProgramAddNamedData(b, named)
	root := etfb.ProgramEnd(b)
	b.FinishWithFileIdentifier(root, []byte(programMagic))
	return append([]byte(nil), b.FinishedBytes()...), nil
}

// alignedBytes writes a [ubyte] vector whose first element is 16-aligned.
func alignedBytes(b *flatbuffers.Builder, data []byte) flatbuffers.UOffsetT {
	b.StartVector(1, len(data), inlineAlignment)
	for j := len(data) - 1; j >= 0; j-- {
		b.PrependByte(data[j])
	}
	return b.EndVector(len(data))
}
