package pte

import (
	"fmt"
	"io"

	ftfb "github.com/fxport/fxport/targets/executorch/fb/flat_tensor_flatbuffer"
)

// WritePTD streams the .ptd that EncodePTDWith(entries, o) would return to
// w, byte for byte: the header and flatbuffer are built and checked first
// (as DecodePTD checks them) before anything is written, then each
// segment's bytes — an entry's Data, or its Lazy source opened and copied
// through a bounded buffer — go out at their aligned offsets. With
// ShareSegments, lazy entries are compared by their Digest (or hashed as a
// stream when it is nil). A lazy source that yields more or fewer bytes
// than it declares is an error naming the entry; w has then received part
// of the file, so write to a temporary file and rename it on success.
func WritePTD(w io.Writer, entries []NamedTensor, o PTDOptions) error {
	l, err := layoutPTD(entries, o)
	if err != nil {
		return err
	}
	if err := checkPTDHead(l); err != nil {
		return fmt.Errorf("write .ptd: output does not decode: %w", err)
	}
	if _, err := w.Write(l.head); err != nil {
		return fmt.Errorf("write .ptd: %w", err)
	}
	buf := make([]byte, copyBufferSize)
	at := l.base
	for i, e := range l.blobs {
		start := l.base + l.ft.Segments[i].Offset
		if err := writeZeros(w, start-at, buf); err != nil {
			return fmt.Errorf("write .ptd: %w", err)
		}
		if e.Lazy != nil {
			if err := copyLazy(w, *e.Lazy, buf, fmt.Sprintf("write .ptd: entry %q, segment %d", e.Key, i)); err != nil {
				return err
			}
		} else if _, err := w.Write(e.Data); err != nil {
			return fmt.Errorf("write .ptd: %w", err)
		}
		at = start + l.ft.Segments[i].Size
	}
	return nil
}

// checkPTDHead decodes the header and flatbuffer of a laid-out .ptd as
// DecodePTD does, without the segment bytes.
func checkPTDHead(l *ptdLayout) (err error) {
	const name = "encoded .ptd"
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: malformed data file (decoder panic: %v)", name, r)
		}
	}()
	if err := loadSchemas(); err != nil {
		return err
	}
	h, err := parseFlatTensorHeaderSized(l.head, l.base+l.size)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if h == nil || h.FlatbufferOffset+h.FlatbufferSize > uint64(len(l.head)) || h.SegmentBaseOffset != l.base {
		return fmt.Errorf("%s: FH01 header does not match the layout", name)
	}
	fb := l.head[:h.FlatbufferOffset+h.FlatbufferSize]
	if err := schemas.flatTensor.Verify(fb, ptdMagic); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	ft := ftfb.GetRootAsFlatTensor(fb, 0).UnPack()
	for i, nd := range ft.NamedData {
		if int(nd.SegmentIndex) >= len(ft.Segments) {
			return fmt.Errorf("%s: FlatTensor.named_data[%d](%s): segment %d out of range (%d segments)", name, i, nd.Key, nd.SegmentIndex, len(ft.Segments))
		}
		seg := ft.Segments[nd.SegmentIndex]
		if seg.Offset > h.SegmentDataSize || seg.Size > h.SegmentDataSize-seg.Offset {
			return fmt.Errorf("%s: FlatTensor.segments[%d]: [%d, +%d) runs past the %d bytes of segment data", name, nd.SegmentIndex, seg.Offset, seg.Size, h.SegmentDataSize)
		}
	}
	return nil
}
