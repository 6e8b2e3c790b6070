package pte

import (
	"fmt"
	"io"

	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// Write streams the .pte that Encode would return for f to w, byte for
// byte, without holding the segment data in memory: the program flatbuffer
// and header are built and checked first (decoded, with every table index
// and delegate payload validated against the segment table, as Decode
// does) before anything is written; then each segment's Data, or each of
// its Pieces opened in turn and copied through a bounded buffer, goes out
// at its aligned offset. A piece that yields more or fewer bytes than it
// declares is an error naming the segment and the piece; w has then
// received part of the file, so write to a temporary file and rename it
// into place only on success.
func Write(w io.Writer, f *File) error {
	if f == nil || f.Program == nil {
		return fmt.Errorf("write .pte: no program")
	}
	name := f.Name
	if name == "" {
		name = "<encoded program>"
	}
	l, err := layout(f, name)
	if err != nil {
		return err
	}
	if err := checkHead(name, l, f.Segments); err != nil {
		return fmt.Errorf("write: program does not read back: %w", err)
	}
	if _, err := w.Write(l.head); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	buf := make([]byte, copyBufferSize)
	at := uint64(len(l.head))
	for i, s := range f.Segments {
		if l.lens[i] == 0 {
			continue
		}
		start := l.base + l.table[i].Offset
		if err := writeZeros(w, start-at, buf); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		if err := writeSegment(w, i, s, l.lens[i], buf); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		at = start + l.lens[i]
	}
	return nil
}

// checkHead decodes the program part of a laid-out file as Decode would,
// taking segment bytes from segs where they are in memory: the header, the
// flatbuffer verification, the segment table, every index (check) and the
// delegate payloads (resolveMethods). A delegate payload held in lazy
// pieces is not decoded.
func checkHead(name string, l *fileLayout, segs []Segment) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: malformed program (decoder panic: %v)", name, r)
		}
	}()
	if err := loadSchemas(); err != nil {
		return err
	}
	size := uint64(len(l.head)) + l.dataSize
	if l.dataSize > 0 {
		size = l.base + l.dataSize
	}
	h, err := parseExtendedHeaderSized(l.head, size)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	progBytes := l.head
	if h != nil {
		progBytes = l.head[:h.ProgramSize]
	}
	if err := schemas.program.Verify(progBytes, programMagic); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	f := &File{Name: name, Size: int(size), Header: h, ProgramSize: len(progBytes)}
	f.Program = etfb.GetRootAsProgram(progBytes, 0).UnPack()
	if len(f.Program.Segments) != len(segs) {
		return fmt.Errorf("%s: %d segments in the table for %d given", name, len(f.Program.Segments), len(segs))
	}
	lazy := map[uint32]bool{}
	for i, s := range f.Program.Segments {
		if s == nil || s.Size != l.lens[i] || (s.Size > 0 && l.base+s.Offset+s.Size > size) {
			return fmt.Errorf("%s: Program.segments[%d] does not match the layout", name, i)
		}
		seg := Segment{Offset: s.Offset, Size: s.Size, Data: segs[i].Data}
		if segs[i].Pieces != nil {
			lazy[uint32(i)] = true
		} else if seg.Data == nil {
			seg.Data = []byte{}
		}
		f.Segments = append(f.Segments, seg)
	}
	if err := f.check(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	// Delegate payloads are checked from memory; the lazy ones (not
	// produced by the emitter) are skipped rather than read twice.
	for _, plan := range f.Program.ExecutionPlan {
		kept := plan.Delegates[:0:0]
		for _, d := range plan.Delegates {
			if d.Processed != nil && d.Processed.Location == etfb.DataLocationSEGMENT && lazy[d.Processed.Index] {
				continue
			}
			kept = append(kept, d)
		}
		plan.Delegates = kept
	}
	if err := f.resolveMethods(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
