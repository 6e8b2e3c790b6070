package pt2

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	frontend "github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// originKeys say where a program was read from; they differ between a
// program and its rewrite in the current layout.
var originKeys = []string{frontend.MetaLayout, frontend.MetaSchemaVersion}

// canonical prints p with weight sources replaced by a hash of their bytes
// and, with dropOrigin, without the origin metadata.
func canonical(t testing.TB, p *ir.Program, dropOrigin bool) string {
	t.Helper()
	if dropOrigin {
		p = p.Clone()
		for _, k := range originKeys {
			p.Meta.Delete(k)
		}
	}
	text := ir.Print(p)
	for _, w := range p.Weights {
		if w.Source == nil {
			continue
		}
		rc, err := w.Source.Open()
		if err != nil {
			t.Fatalf("weight %q: %v", w.Name, err)
		}
		h := sha256.New()
		n, err := io.Copy(h, rc)
		rc.Close()
		if err != nil || n != w.Source.Size() {
			t.Fatalf("weight %q: read %d of %d bytes: %v", w.Name, n, w.Source.Size(), err)
		}
		text = strings.ReplaceAll(text, w.Source.String(), "bytes(sha256="+hex.EncodeToString(h.Sum(nil))[:16]+")")
	}
	return text
}

func read(t testing.TB, path string) *ir.Program {
	t.Helper()
	p, err := frontend.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func write(t testing.TB, p *ir.Program, path string) {
	t.Helper()
	if err := Write(p, path); err != nil {
		t.Fatal(err)
	}
}

// The reader's test files: one program in every archive layout torch has
// written. (A bare model.json stores no weights, so it cannot be written
// back as an archive: TestWriteRefusesMissingWeights.)
var layoutFiles = []string{
	"../../frontends/pt2/testdata/archive_2_9.pt2",
	"../../frontends/pt2/testdata/archive_2_8.pt2",
	"../../frontends/pt2/testdata/legacy_2_7.pt2",
}

// TestWriteRefusesMissingWeights: a program whose parameters have no data
// (read from a bare model.json) is refused by name, and nothing is left.
func TestWriteRefusesMissingWeights(t *testing.T) {
	p := read(t, "../../frontends/pt2/testdata/block_8_20.json")
	dir := t.TempDir()
	err := Write(p, filepath.Join(dir, "x.pt2"))
	if err == nil || !strings.Contains(err.Error(), "the program holds no data for it") {
		t.Fatalf("got %v, want a refusal naming the weight", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left %v behind", left[0].Name())
	}
}

// TestRoundTrip: pt2 → IR → pt2 → IR gives the same IR (weights compared by
// their bytes; only the origin metadata and the sources' file names
// differ), and writing that program again to the same file gives exactly
// the same IR text.
func TestRoundTrip(t *testing.T) {
	for _, file := range layoutFiles {
		t.Run(filepath.Base(file), func(t *testing.T) {
			p1 := read(t, file)
			out := filepath.Join(t.TempDir(), "block.pt2")
			write(t, p1, out)
			p2 := read(t, out)
			if d := cmp.Diff(canonical(t, p1, true), canonical(t, p2, true)); d != "" {
				t.Fatalf("pt2 → IR → pt2 → IR changed the program (-before +after):\n%s", d)
			}
			write(t, p2, out) // over the file p2's weights come from
			p3 := read(t, out)
			if d := cmp.Diff(ir.Print(p2), ir.Print(p3)); d != "" {
				t.Fatalf("rewriting changed the IR text (-before +after):\n%s", d)
			}
		})
	}
}

// TestEveryKind: a program using every argument, value and signature kind
// the writer emits reads back as the same IR text.
func TestEveryKind(t *testing.T) {
	src, err := os.ReadFile("testdata/every_kind.fxir")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ir.Parse(src, "every_kind.fxir")
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(p); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "every_kind.pt2")
	write(t, p, out)
	q := read(t, out)
	if d := cmp.Diff(canonical(t, p, false), canonical(t, q, true)); d != "" {
		t.Fatalf("IR → pt2 → IR changed the program (-before +after):\n%s", d)
	}
}

func TestDeterministic(t *testing.T) {
	p := read(t, layoutFiles[0])
	a := filepath.Join(t.TempDir(), "m.pt2")
	b := filepath.Join(t.TempDir(), "m.pt2")
	write(t, p, a)
	write(t, p, b)
	if !bytes.Equal(mustFile(t, a), mustFile(t, b)) {
		t.Fatal("two writes of one program differ")
	}
}

// TestZipConventions checks the container torch's PyTorchStreamWriter
// writes: one root folder named after the file, the markers, records stored
// with flags 0x0808 and data on 64-byte boundaries, a fixed timestamp.
func TestZipConventions(t *testing.T) {
	out := filepath.Join(t.TempDir(), "conv.pt2")
	write(t, read(t, layoutFiles[0]), out)
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if f.Method != zip.Store || f.Flags != 0x808 {
			t.Errorf("%s: method %d flags %#x", f.Name, f.Method, f.Flags)
		}
		off, err := f.DataOffset()
		if err != nil || off%64 != 0 {
			t.Errorf("%s: data at %d (%v), not 64-byte aligned", f.Name, off, err)
		}
		if f.ModifiedDate != 33 || f.ModifiedTime != 0 {
			t.Errorf("%s: timestamp %d %d", f.Name, f.ModifiedDate, f.ModifiedTime)
		}
	}
	want := []string{
		"conv/archive_format", "conv/archive_version", "conv/byteorder", "conv/models/model.json",
		"conv/data/weights/model_weights_config.json", "conv/data/weights/weight_0", "conv/data/weights/weight_1", "conv/data/weights/weight_2",
		"conv/data/constants/model_constants_config.json", "conv/data/constants/tensor_0", "conv/data/constants/tensor_1", "conv/data/sample_inputs/model.pt",
		"conv/.data/version", "conv/.data/serialization_id",
	}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
	for name, want := range map[string]string{"conv/archive_format": "pt2", "conv/archive_version": "0", "conv/byteorder": "little", "conv/.data/version": "6\n"} {
		f, _ := zr.Open(name)
		b, _ := io.ReadAll(f)
		if string(b) != want {
			t.Errorf("%s = %q", name, b)
		}
	}
	f, _ := zr.Open("conv/.data/serialization_id")
	id, _ := io.ReadAll(f)
	if len(id) != 40 {
		t.Errorf("serialization_id %q", id)
	}
}

func TestWriteErrors(t *testing.T) {
	base := func() *ir.Program { return read(t, layoutFiles[0]) }
	for _, c := range []struct {
		name   string
		mangle func(p *ir.Program)
		want   string
	}{
		{"invalid program", func(p *ir.Program) { p.Signature.Inputs = p.Signature.Inputs[1:] }, "cannot write an invalid program"},
		{"short source", func(p *ir.Program) { p.Weight("fc.bias").Source = &shortSource{n: 32} }, `weight "fc.bias": its source yielded 16 bytes, not the 32 it declares`},
		{"failing source", func(p *ir.Program) { p.Weight("fc.bias").Source = &shortSource{n: 32, fail: true} }, `weight "fc.bias": disk on fire`},
		{"view outside its source", func(p *ir.Program) { p.Weight("running_tail").StorageOffset = 6 }, `weight "running_tail" (f32[4]): needs 40 bytes`},
		{"dtype without a code", func(p *ir.Program) { p.Weight("fc.bias").Type = ir.Tensor(ir.QInt8, 8) }, `dtype qint8 has no torch.export code`},
		{"bad metadata", func(p *ir.Program) { p.Meta.Set(frontend.MetaVerifiers, "[1]") }, `program metadata "pt2.verifiers"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := base()
			c.mangle(p)
			err := Write(p, filepath.Join(dir, "x.pt2"))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Join(dir, "x.pt2")+": ") {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			left, _ := os.ReadDir(dir)
			if len(left) != 0 {
				t.Errorf("left %v behind", left[0].Name())
			}
		})
	}
}

// shortSource declares n bytes but yields half (or fails).
type shortSource struct {
	n    int64
	fail bool
}

func (s *shortSource) Open() (io.ReadCloser, error) {
	if s.fail {
		return nil, errors.New("disk on fire")
	}
	return io.NopCloser(bytes.NewReader(make([]byte, s.n/2))), nil
}
func (s *shortSource) Size() int64    { return s.n }
func (s *shortSource) String() string { return "short()" }

func TestSrepr(t *testing.T) {
	env := sym.NewEnv()
	env.Declare("s0", sym.Range{Lo: sym.Finite(2), Hi: sym.PosInf()}, nil, false)
	for _, text := range []string{
		"s0", "2*s0 - 1", "s0**3 + s0*u1", "(s0 + 1)//2", "Mod(s0, 3)", "Max(4, s0)", "Min(s0, u1)",
		"s0 == 4", "s0 != u1", "s0 <= 7", "And(s0 <= 7, u1 == 2)", "Or(s0 == 2, u1 == 3)", "True", "False",
		"123456789012345678901234567890*s0", "-s0",
	} {
		e := sym.MustParse(text)
		s := srepr(e, env)
		back, err := sym.Parse(s)
		if err != nil || !back.Equal(e) {
			t.Errorf("%s → %s → %v (%v)", text, s, back, err)
		}
	}
	if got := srepr(sym.MustParse("2*s0"), env); got != "Mul(Integer(2), Symbol('s0', integer=True, positive=True))" {
		t.Errorf("srepr(2*s0) = %s", got)
	}
	if _, err := sym.Parse(unknownExpr); err == nil {
		t.Errorf("%s parses; the reader would not see an unknown expression", unknownExpr)
	}
}

func TestTarget(t *testing.T) {
	for name, want := range map[string]string{
		"aten.add.Tensor": "torch.ops.aten.add.Tensor", "aten.relu.default": "torch.ops.aten.relu.default",
		"operator.add": "_operator.add", "math.ceil": "math.ceil", "torch.sym_max": "torch.sym_max",
		"higher_order.cond": "torch.ops.higher_order.cond",
	} {
		op := ir.MustLookupOp(name)
		if got := target(op); got != want {
			t.Errorf("target(%s) = %s, want %s", name, got, want)
		}
		if back, ok := ir.LookupOp(want); !ok || back != op {
			t.Errorf("%s does not read back as %s", want, name)
		}
	}
}

func mustFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
