package pte

import (
	"fmt"

	"github.com/fxport/fxport/internal/inputfile"

	bpfb "github.com/fxport/fxport/targets/executorch/fb/bundled_program_flatbuffer"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/internal/fbs"
)

// Read reads and decodes the .pte (or .bpte) file at path.
func Read(path string) (*File, error) {
	data, err := inputfile.ReadFile(path, 0)
	if err != nil {
		return nil, err
	}
	return Decode(path, data)
}

// Decode decodes a .pte (or a bundled .bpte) held in data; name labels
// errors. The returned File aliases data.
func Decode(name string, data []byte) (f *File, err error) {
	defer func() {
		if r := recover(); r != nil {
			// The verifier should make this unreachable; keep malformed
			// input from ever crashing the caller.
			f, err = nil, fmt.Errorf("%s: malformed program (decoder panic: %v)", name, r)
		}
	}()
	if err := loadSchemas(); err != nil {
		return nil, err
	}
	if fbs.Identifier(data) == bundledMagic {
		return decodeBundled(name, data)
	}
	f, err = decodeProgram(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f.Name = name
	return f, nil
}

func decodeProgram(data []byte) (*File, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("not a .pte: %d bytes is too short for a program", len(data))
	}
	if id := fbs.Identifier(data); id != programMagic {
		return nil, fmt.Errorf("not a .pte: file identifier (bytes 4-8) is %q, want %q", id, programMagic)
	}
	h, err := parseExtendedHeader(data)
	if err != nil {
		return nil, err
	}
	progBytes := data
	if h != nil {
		progBytes = data[:h.ProgramSize]
	}
	if err := schemas.program.Verify(progBytes, programMagic); err != nil {
		return nil, err
	}
	f := &File{Size: len(data), Header: h, ProgramSize: len(progBytes)}
	f.Program = etfb.GetRootAsProgram(progBytes, 0).UnPack()
	if err := f.resolveSegments(data); err != nil {
		return nil, err
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	if err := f.resolveMethods(); err != nil {
		return nil, err
	}
	return f, nil
}

// resolveSegments slices every Program.segments entry out of the file.
func (f *File) resolveSegments(data []byte) error {
	var base, end uint64
	if f.Header != nil {
		base = f.Header.SegmentBaseOffset
		end = uint64(len(data))
		if f.Header.Length >= 32 {
			end = base + f.Header.SegmentDataSize
		}
	}
	for i, s := range f.Program.Segments {
		if s == nil {
			return fmt.Errorf("Program.segments[%d]: missing", i)
		}
		if s.Size == 0 {
			f.Segments = append(f.Segments, Segment{Offset: s.Offset, Size: 0, Data: []byte{}})
			continue
		}
		if f.Header == nil {
			return fmt.Errorf("Program.segments[%d]: %d bytes of segment data but the file has no eh00 header", i, s.Size)
		}
		if s.Offset > end-base || s.Size > end-base-s.Offset {
			return fmt.Errorf("Program.segments[%d]: [%d, +%d) runs past the segment data (%d bytes from offset %d)", i, s.Offset, s.Size, end-base, base)
		}
		at := base + s.Offset
		f.Segments = append(f.Segments, Segment{Offset: s.Offset, Size: s.Size, Data: data[at : at+s.Size]})
	}
	return nil
}

// resolveMethods attaches each delegate's processed bytes and decodes
// XNNPACK payloads.
func (f *File) resolveMethods() error {
	var named map[string]uint64 // named data sizes, built at the first XNNPACK delegate
	for pi, plan := range f.Program.ExecutionPlan {
		m := Method{Plan: plan}
		for di, d := range plan.Delegates {
			where := fmt.Sprintf("execution_plan[%d](%s).delegates[%d]", pi, plan.Name, di)
			del := Delegate{ID: d.Id}
			if d.Processed != nil {
				del.Location, del.Index = d.Processed.Location, d.Processed.Index
				switch d.Processed.Location {
				case etfb.DataLocationSEGMENT:
					del.Data = f.Segments[d.Processed.Index].Data
				case etfb.DataLocationINLINE:
					if b := f.Program.BackendDelegateData[d.Processed.Index]; b != nil {
						del.Data = b.Data
					}
				}
			}
			if del.ID == XNNPACKBackendID {
				x, err := decodeXNNPayload(del.Data)
				if err != nil {
					return fmt.Errorf("%s(%s): %w", where, del.ID, err)
				}
				if named == nil {
					named = f.namedSizes()
				}
				if err := f.checkXNN(x, named); err != nil {
					return fmt.Errorf("%s(%s): %w", where, del.ID, err)
				}
				del.XNNPACK = x
			}
			m.Delegates = append(m.Delegates, del)
		}
		f.Methods = append(f.Methods, m)
	}
	return nil
}

// decodeBundled decodes a bundled program and the program it embeds.
func decodeBundled(name string, data []byte) (*File, error) {
	if err := schemas.bundled.Verify(data, bundledMagic); err != nil {
		return nil, fmt.Errorf("%s: bundled program: %w", name, err)
	}
	bp := bpfb.GetRootAsBundledProgram(data, 0)
	prog := bp.ProgramBytes()
	if len(prog) == 0 {
		return nil, fmt.Errorf("%s: bundled program: no embedded program", name)
	}
	f, err := decodeProgram(prog)
	if err != nil {
		return nil, fmt.Errorf("%s: embedded program: %w", name, err)
	}
	f.Name, f.Size = name, len(data)
	b := &Bundled{Version: bp.Version(), ProgramSize: len(prog)}
	if b.TestSuites, err = decodeSuites(bp, f); err != nil {
		return nil, fmt.Errorf("%s: bundled program: %w", name, err)
	}
	f.Bundled = b
	return f, nil
}
