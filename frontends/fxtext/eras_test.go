package fxtext

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

var update = flag.Bool("update", false, "rewrite testdata/eras/golden")

// eraInputs types the inputs of the era dumps that print no types (graph
// and code forms), as the models that the dumps were written for take them.
var eraInputs = map[string]map[string]string{
	"users_count.graph.txt":      {"a": "f32[2, 5]", "b": "f32[2, 5]"},
	"signature_lines.graph.txt":  {"p_scale": "f32[5]", "b_count": "f32[]", "x": "f32[3, 5]"},
	"while_loop_opaque.code.txt": {"step_1": "i64[]", "acc_1": "f32[2, 2]"},
	"branch_body.code.txt":       {"arg0_1": "f32[6]"},
}

// TestEraDumps parses the dumps of testdata/eras (the print formats of
// torch releases older than the venv's, see its README) and compares the
// IR, or the error, with testdata/eras/golden. Every program
// that parses must also print and parse back as IR text, and its annotated
// types must agree with shape inference.
func TestEraDumps(t *testing.T) {
	files, err := filepath.Glob("testdata/eras/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 8 {
		t.Fatalf("only %d era dumps found", len(files))
	}
	seen := map[string]bool{}
	for _, file := range files {
		base := filepath.Base(file)
		t.Run(base, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{InputTypes: map[string]ir.Type{}}
			for name, ts := range eraInputs[base] {
				seen[base] = true
				ty, err := ir.ParseType(ts)
				if err != nil {
					t.Fatal(err)
				}
				opts.InputTypes[name] = ty
			}
			var got, goldenPath string
			p, err := Parse(src, base, opts)
			if err != nil {
				got, goldenPath = err.Error()+"\n", filepath.Join("testdata/eras/golden", base+".err")
			} else {
				got, goldenPath = ir.Print(p), filepath.Join("testdata/eras/golden", base+".fxir")
				roundTrip(t, p)
				if err := ir.VerifyWith(p, ir.VerifyOptions{Types: true}); err != nil {
					t.Errorf("annotated types disagree with shape inference: %v", err)
				}
				// Annotated dumps must pass the stricter check too.
				if _, err := Parse(src, base, Options{InputTypes: opts.InputTypes, CheckTypes: true}); err != nil {
					t.Errorf("CheckTypes: %v", err)
				}
			}
			compareGolden(t, goldenPath, got)
		})
	}
	for name := range eraInputs {
		if !seen[name] {
			t.Errorf("eraInputs names %s, which is not in testdata/eras", name)
		}
	}
}

// roundTrip checks that p prints as IR text that parses back identically.
func roundTrip(t *testing.T, p *ir.Program) {
	t.Helper()
	text := ir.Print(p)
	q, err := ir.Parse([]byte(text), "printed")
	if err != nil {
		t.Fatalf("printed IR does not parse: %v\n%s", err, text)
	}
	if again := ir.Print(q); again != text {
		t.Fatalf("printed IR does not round-trip:\n%s\n---\n%s", text, again)
	}
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		for _, stale := range []string{strings.TrimSuffix(path, filepath.Ext(path)) + ".fxir", strings.TrimSuffix(path, filepath.Ext(path)) + ".err"} {
			if stale != path {
				_ = os.Remove(stale)
			}
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./frontends/fxtext -run TestRealDumps -update)\ngot:\n%s", err, got)
	}
	if string(want) != got {
		t.Errorf("%s differs:\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}
