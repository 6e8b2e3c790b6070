package pte

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every genuine file decodes with flatc and fxport's own schemas too (the
// corrupt one is rejected); XNNPACK payloads, cut out of their segments and
// stripped of the XH00 header, decode with xnnpack.fbs.
func TestFlatcDecodesWithOurSchemas(t *testing.T) {
	flatc, err := exec.LookPath("flatc")
	if err != nil {
		t.Skip("flatc not installed (Debian: flatbuffers-compiler)")
	}
	schemaDir, err := filepath.Abs(filepath.Join("..", "schema"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	decode := func(schema, file string) error {
		cmd := exec.Command(flatc, "--json", "--strict-json", "-o", out, "-I", schemaDir, filepath.Join(schemaDir, schema), "--", file)
		b, err := cmd.CombinedOutput()
		if err != nil {
			return &flatcError{err, string(b)}
		}
		return nil
	}
	for _, path := range genuineFiles(t, "*.pte") {
		name := filepath.Base(path)
		err := decode("program.fbs", path)
		if name == corruptFile {
			if err == nil {
				t.Errorf("%s: flatc accepted the corrupt file", name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		f, err := Read(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, m := range f.Methods {
			for di, d := range m.Delegates {
				if d.XNNPACK == nil || d.XNNPACK.Header == nil {
					continue
				}
				h := d.XNNPACK.Header
				blob := filepath.Join(out, strings.TrimSuffix(name, ".pte")+".xnn")
				if err := os.WriteFile(blob, d.Data[h.FlatbufferOffset:h.FlatbufferOffset+h.FlatbufferSize], 0o644); err != nil {
					t.Fatal(err)
				}
				if err := decode("xnnpack.fbs", blob); err != nil {
					t.Errorf("%s: delegate %d XNNPACK graph: %v", name, di, err)
				}
			}
		}
	}
	for _, path := range genuineFiles(t, "*.ptd") {
		if err := decode("flat_tensor.fbs", path); err != nil {
			t.Errorf("%s: %v", filepath.Base(path), err)
		}
	}
	for _, path := range genuineFiles(t, "*.bpte") {
		if err := decode("bundled_program.fbs", path); err != nil {
			t.Errorf("%s: %v", filepath.Base(path), err)
		}
	}
}

type flatcError struct {
	err    error
	output string
}

func (e *flatcError) Error() string { return "flatc: " + e.err.Error() + ": " + e.output }
