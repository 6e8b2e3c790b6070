package pte

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

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

// Write encodes f (see Encode) and writes the bytes to w.
func Write(w io.Writer, f *File) error {
	b, err := Encode(f)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Encode serializes f.Program and the bytes of f.Segments into a .pte.
//
// f.Segments is authoritative for the segment table: its entries' Data are
// laid out in order, each at the next multiple of SegmentAlignment relative
// to the segment base offset (an empty segment takes the current aligned
// position without advancing it), and Program.segments is rewritten from
// that layout (f.Program itself is not modified). When any segment holds
// data, a 32-byte eh00 header is inserted at offset 8 with program_size,
// segment_base_offset = align_up(program_size, 128) and segment_data_size =
// the end of the last segment; without segment data no header is written,
// as exir does. Inline Buffer.storage and BackendDelegateInlineData.data
// vectors are aligned to 16 (their force_align). File.Name, Size, Header,
// ProgramSize, Methods and Bundled are ignored.
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
	prog := *f.Program // shallow copy: only the segment table is replaced
	if f.Program.Segments != nil || len(f.Segments) > 0 {
		prog.Segments = make([]*etfb.DataSegmentT, len(f.Segments))
	}
	var cursor uint64
	for i, s := range f.Segments {
		if s.Size != 0 && s.Size != uint64(len(s.Data)) {
			return nil, fmt.Errorf("encode %s: segment %d: size %d but %d bytes of data", name, i, s.Size, len(s.Data))
		}
		off := alignUp(cursor, SegmentAlignment)
		prog.Segments[i] = &etfb.DataSegmentT{Offset: off, Size: uint64(len(s.Data))}
		if len(s.Data) > 0 {
			cursor = off + uint64(len(s.Data))
		}
	}
	fb, err := packProgram(&prog)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", name, err)
	}
	var out []byte
	if cursor == 0 {
		out = fb
	} else {
		programSize := uint64(len(fb)) + extHeaderPadded
		base := alignUp(programSize, SegmentAlignment)
		var buf bytes.Buffer
		buf.Grow(int(base + cursor))
		buf.Write(fb[:8])
		var h [extHeaderPadded]byte
		copy(h[0:4], extHeaderMagic)
		binary.LittleEndian.PutUint32(h[4:], ExtendedHeaderLength)
		binary.LittleEndian.PutUint64(h[8:], programSize)
		binary.LittleEndian.PutUint64(h[16:], base)
		binary.LittleEndian.PutUint64(h[24:], cursor)
		buf.Write(h[:])
		buf.Write(fb[8:])
		buf.Write(make([]byte, base-programSize))
		for i, s := range f.Segments {
			if len(s.Data) == 0 {
				continue
			}
			at := base + prog.Segments[i].Offset
			buf.Write(make([]byte, at-uint64(buf.Len())))
			buf.Write(s.Data)
		}
		out = buf.Bytes()
		// Bump the root table offset past the inserted header; every other
		// flatbuffer offset is relative and unchanged.
		root := binary.LittleEndian.Uint32(out[0:4])
		binary.LittleEndian.PutUint32(out[0:4], root+extHeaderPadded)
	}
	if _, err := Decode(name, out); err != nil {
		return nil, fmt.Errorf("encode: written program does not read back: %w", err)
	}
	return out, nil
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
