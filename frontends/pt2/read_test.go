package pt2

import (
	"encoding/binary"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fxport/fxport/ir"
)

// The testdata files hold one program ("block", see testdata/gen.py) in each
// container torch.export.save has used.
var layouts = []struct {
	file, layout, schema string
}{
	{"testdata/archive_2_9.pt2", LayoutArchive, "8.14"},
	{"testdata/archive_2_8.pt2", LayoutArchivePickle, "8.8"},
	{"testdata/legacy_2_7.pt2", LayoutLegacyZip, "8.7"},
	{"testdata/block_8_20.json", LayoutJSON, "8.20"},
}

func TestReadEveryLayout(t *testing.T) {
	for _, l := range layouts {
		t.Run(l.layout, func(t *testing.T) {
			p := mustRead(t, l.file)
			if got, _ := p.Meta.Get(MetaLayout); got != l.layout {
				t.Errorf("layout %q, want %q", got, l.layout)
			}
			if got, _ := p.Meta.Get(MetaSchemaVersion); got != l.schema {
				t.Errorf("schema version %q, want %q", got, l.schema)
			}
			if err := ir.Verify(p); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLayoutsAgree: the same program read from every container gives the
// same IR, weights included (compared by their bytes).
func TestLayoutsAgree(t *testing.T) {
	want := canonical(t, mustRead(t, layouts[0].file), true)
	checkGolden(t, "testdata/block.golden", want)
	for _, l := range layouts[1:] {
		got := canonical(t, mustRead(t, l.file), true)
		if l.layout == LayoutJSON {
			// A bare program has no weights.
			var keep []string
			for _, line := range strings.Split(want, "\n") {
				if !strings.HasPrefix(line, "weight ") {
					keep = append(keep, line)
				}
			}
			if d := cmp.Diff(strings.Join(keep, "\n"), got); d != "" {
				t.Errorf("%s differs from %s (-want +got):\n%s", l.file, layouts[0].file, d)
			}
			continue
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s differs from %s (-want +got):\n%s", l.file, layouts[0].file, d)
		}
	}
}

// TestWeightsAreViews checks the weights' bytes and that the aliased buffer
// views share one storage.
func TestWeightsAreViews(t *testing.T) {
	for _, l := range layouts[:3] {
		t.Run(l.layout, func(t *testing.T) {
			p := mustRead(t, l.file)
			floats := func(name string) []float32 {
				w := p.Weight(name)
				if w == nil || w.Source == nil {
					t.Fatalf("no data for weight %q", name)
				}
				rc, err := w.Source.Open()
				if err != nil {
					t.Fatal(err)
				}
				defer rc.Close()
				b, err := io.ReadAll(rc)
				if err != nil {
					t.Fatal(err)
				}
				out := make([]float32, len(b)/4)
				for i := range out {
					out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
				}
				return out
			}
			fw := floats("fc.weight")
			if len(fw) != 32 || fw[0] != 0 || fw[9] != 9.0/8 {
				t.Errorf("fc.weight storage = %v", fw)
			}
			w := p.Weight("fc.weight")
			if !cmp.Equal(w.Strides, []int64{1, 8}) || w.StorageOffset != 0 {
				t.Errorf("fc.weight view: strides %v offset %d", w.Strides, w.StorageOffset)
			}
			run, tail := p.Weight("running"), p.Weight("running_tail")
			if run.Source.String() != tail.Source.String() {
				t.Errorf("running and running_tail do not share a storage: %s vs %s", run.Source, tail.Source)
			}
			if tail.StorageOffset != 4 || tail.Strides != nil || tail.Type.String() != "f32[4]" {
				t.Errorf("running_tail view: %s offset %d strides %v", tail.Type, tail.StorageOffset, tail.Strides)
			}
			if got := floats("running_tail"); len(got) != 8 || got[4] != 5 {
				t.Errorf("running_tail storage = %v", got)
			}
			c := p.Weight("lifted_tensor_0")
			rc, err := c.Source.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			if len(b) != 8 || binary.LittleEndian.Uint64(b) != 7 {
				t.Errorf("lifted_tensor_0 = %x", b)
			}
		})
	}
}

// TestPrintParses: the IR text of a read program (pt2(...) sources
// included) parses back into a program that prints identically.
func TestPrintParses(t *testing.T) {
	for _, l := range layouts {
		p := mustRead(t, l.file)
		text := ir.Print(p)
		q, err := ir.Parse([]byte(text), l.file)
		if err != nil {
			t.Fatalf("%s: %v", l.file, err)
		}
		if d := cmp.Diff(text, ir.Print(q)); d != "" {
			t.Errorf("%s: reparse differs:\n%s", l.file, d)
		}
		if l.layout == LayoutArchive {
			// The parsed sources still open the right bytes.
			if a, b := canonical(t, p, false), canonical(t, q, false); a != b {
				t.Errorf("%s: parsed sources read other bytes", l.file)
			}
		}
	}
}

func TestSeveralModels(t *testing.T) {
	_, err := Read("testdata/two_models.pt2")
	if err == nil || !strings.Contains(err.Error(), "several programs (decoder, encoder)") {
		t.Fatalf("Read: %v", err)
	}
	p, err := ReadModel("testdata/two_models.pt2", "decoder")
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := p.Meta.Get(MetaModel); m != "decoder" {
		t.Errorf("model meta %q", m)
	}
	if w := p.Weight("fc.bias"); w == nil || !strings.Contains(w.Source.String(), "weight_11") {
		t.Errorf("decoder's fc.bias: %v", w)
	}
	if _, err := ReadModel("testdata/two_models.pt2", "nope"); err == nil || !strings.Contains(err.Error(), `no program "nope"`) {
		t.Errorf("ReadModel(nope): %v", err)
	}
}

func TestSourceSpelling(t *testing.T) {
	p, err := ir.Parse([]byte(`weight "w": f32[2] = pt2("a.pt2", "a/data/weights/weight_0", offset=8, size=8)
graph g() {
  return
}
`), "t")
	if err != nil {
		t.Fatal(err)
	}
	s, ok := p.Weights[0].Source.(*Source)
	if !ok || s.Archive != "a.pt2" || s.Entry != "a/data/weights/weight_0" || s.Offset != 8 || s.Len != 8 {
		t.Fatalf("parsed source %#v", p.Weights[0].Source)
	}
	for _, bad := range []string{`pt2("a.pt2")`, `pt2("a", "b", offset=1)`, `pt2("a", "b", size=-1)`, `pt2("a", "b", size=1, extra=2)`, `pt2(1, "b", size=1)`} {
		_, err := ir.Parse([]byte(`weight "w": f32[2] = `+bad+"\ngraph g() {\n  return\n}\n"), "t")
		if err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
	if _, err := (&Source{Archive: "testdata/archive_2_9.pt2", Entry: "archive_2_9/data/weights/weight_0", Offset: 120, Len: 16}).Open(); err == nil {
		t.Error("a range past the entry opened")
	}
	if _, err := (&Source{Archive: "testdata/archive_2_9.pt2", Entry: "nope", Len: 1}).Open(); err == nil {
		t.Error("a missing entry opened")
	}
}
