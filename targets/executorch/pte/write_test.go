package pte

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// Fields of a File that describe the byte layout rather than the content;
// they are compared separately.
var layoutFields = cmp.Options{
	cmpopts.IgnoreFields(File{}, "Name", "Size", "Header", "ProgramSize", "Bundled"),
	cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }),
}

// Every genuine program (portable, XNNPACK, other delegates, the deprecated
// inline-constant ones and the program embedded in the .bpte) survives
// Decode(Encode(Decode(x))) structurally, with exir's segment layout and
// header conventions, and the encoding is a deterministic fixed point.
func TestEncodeRoundTripsGenuineFiles(t *testing.T) {
	files := append(genuineFiles(t, "*.pte"), genuineFiles(t, "*.bpte")...)
	for _, path := range files {
		name := filepath.Base(path)
		if name == corruptFile {
			continue
		}
		t.Run(name, func(t *testing.T) {
			f, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Encode(f)
			if err != nil {
				t.Fatal(err)
			}
			g, err := Decode(name, b)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(f, g, layoutFields); d != "" {
				t.Fatalf("decoded structure differs after encoding (-genuine +written):\n%s", d)
			}
			checkLayout(t, f, g, b)
			b2, err := Encode(f)
			if err != nil || !bytes.Equal(b, b2) {
				t.Errorf("encoding is not deterministic (err %v)", err)
			}
			b3, err := Encode(g)
			if err != nil || !bytes.Equal(b, b3) {
				t.Errorf("encoding of the written file differs from the first encoding (err %v)", err)
			}
		})
	}
}

// checkLayout compares the written file's header and segment layout with
// the genuine one: segment offsets are part of the structural comparison;
// here the header presence, version, alignment and segment data size.
func checkLayout(t *testing.T, f, g *File, b []byte) {
	t.Helper()
	if (f.Header == nil) != (g.Header == nil) {
		t.Fatalf("eh00 header: genuine %+v, written %+v", f.Header, g.Header)
	}
	if g.Header == nil {
		if len(b) != g.ProgramSize {
			t.Errorf("no header but %d bytes after the %d-byte program", len(b)-g.ProgramSize, g.ProgramSize)
		}
		return
	}
	h := g.Header
	if h.Length != ExtendedHeaderLength || h.ProgramSize != uint64(g.ProgramSize) || h.SegmentBaseOffset%SegmentAlignment != 0 ||
		h.SegmentBaseOffset != alignUp(h.ProgramSize, SegmentAlignment) || uint64(len(b)) != h.SegmentBaseOffset+h.SegmentDataSize {
		t.Errorf("written header %+v for a %d-byte file", h, len(b))
	}
	if f.Header.Length >= 32 && f.Header.SegmentDataSize != h.SegmentDataSize {
		t.Errorf("segment_data_size: genuine %d, written %d", f.Header.SegmentDataSize, h.SegmentDataSize)
	}
	size := f.Size // a bundled program's File.Size is the .bpte's
	if f.Bundled != nil {
		size = f.Bundled.ProgramSize
	}
	if f.Header.SegmentBaseOffset%SegmentAlignment == 0 && uint64(size)-f.Header.SegmentBaseOffset != uint64(len(b))-h.SegmentBaseOffset {
		t.Errorf("segment region: genuine %d bytes, written %d", uint64(size)-f.Header.SegmentBaseOffset, uint64(len(b))-h.SegmentBaseOffset)
	}
	for i, s := range g.Segments {
		if s.Offset%SegmentAlignment != 0 {
			t.Errorf("segment %d at %d is not %d-aligned", i, s.Offset, SegmentAlignment)
		}
	}
}

// The inline constant buffers of the deprecated format keep their 16-byte
// force_align.
func TestEncodeAlignsInlineBuffers(t *testing.T) {
	f := mustRead(t, "et_deprecated_inline_constant_buffer_mul_add.pte")
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	p := etfb.GetRootAsProgram(b, 0)
	var buf etfb.Buffer
	n := 0
	for i := 0; i < p.ConstantBufferLength(); i++ {
		p.ConstantBuffer(&buf, i)
		if buf.StorageLength() == 0 {
			continue
		}
		n++
		tab := buf.Table()
		o := tab.Offset(4)
		start := tab.Vector(flatbuffers.UOffsetT(o))
		if start%16 != 0 {
			t.Errorf("constant_buffer[%d] storage starts at %d, not 16-aligned", i, start)
		}
	}
	if n != 2 {
		t.Errorf("%d non-empty inline buffers, want 2", n)
	}
}

func TestEncodeRejectsBadInput(t *testing.T) {
	if _, err := Encode(&File{}); err == nil {
		t.Error("encoding a File without a program succeeded")
	}
	f := mustRead(t, "et_portable_add_scalar_constant.pte")
	bad := *f
	bad.Segments = []Segment{{Size: 8, Data: []byte{1, 2}}}
	if _, err := Encode(&bad); err == nil {
		t.Error("segment size/data mismatch accepted")
	}
	// An index the reader rejects is an encode error, not a written file.
	prog := *f.Program
	cs := *prog.ConstantSegment
	cs.SegmentIndex = 7
	prog.ConstantSegment = &cs
	bad = *f
	bad.Program = &prog
	if _, err := Encode(&bad); err == nil {
		t.Error("constant segment index out of range accepted")
	}
}

// flatc decodes what Encode writes with fxport's schema.
func TestFlatcDecodesWrittenFiles(t *testing.T) {
	flatc, err := exec.LookPath("flatc")
	if err != nil {
		t.Skip("flatc not installed (Debian: flatbuffers-compiler)")
	}
	schemaDir, err := filepath.Abs(filepath.Join("..", "schema"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for _, path := range genuineFiles(t, "*.pte") {
		name := filepath.Base(path)
		if name == corruptFile {
			continue
		}
		f, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Encode(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		written := filepath.Join(out, name)
		if err := os.WriteFile(written, b, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(flatc, "--json", "--strict-json", "-o", out, "-I", schemaDir, filepath.Join(schemaDir, "program.fbs"), "--", written)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: flatc: %v: %s", name, err, msg)
		}
	}
}
