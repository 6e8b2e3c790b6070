package fxtext

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

var update = flag.Bool("update", false, "rewrite testdata/real/golden")

// realInputs types the inputs of the real dumps that print no types (graph
// and code forms), from the example inputs of the models that printed them
// (or, where the source does not show them, chosen by this test).
var realInputs = map[string]map[string]string{
	"export_no_grad_param_inplace.graph.txt": {"p_parameter": "f32[4, 4]", "x": "f32[4, 4]"},
	"ir_spec_add.graph.txt":                  {"x": "f32[1]", "y": "f32[1]"},
	"ir_spec_add_one_users.graph.txt":        {"ph_0": "i32[2]"},
	"graph_signature_functional.graph.txt": {"p_my_parameter": "f32[]", "b_my_buffer1": "f32[]", "b_my_buffer2": "f32[]",
		"x1": "f32[]", "x2": "f32[]"},
	"while_loop_nested_cond_graph.code.txt":        {"arg0_1": "f32[2, 2]", "arg1_1": "f32[2, 2]", "arg2_1": "f32[2, 2]"},
	"cond_nested_traced_multi_true_graph.code.txt": {"arg0_1": "f32[4]"},
}

// TestRealDumps parses text torch printed (testdata/real, see its README) and
// compares the IR, or the error, with testdata/real/golden. Every program
// that parses must also print and parse back as IR text, and its annotated
// types must agree with shape inference.
func TestRealDumps(t *testing.T) {
	files, err := filepath.Glob("testdata/real/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("only %d real dumps found", len(files))
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
			for name, ts := range realInputs[base] {
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
				got, goldenPath = err.Error()+"\n", filepath.Join("testdata/real/golden", base+".err")
			} else {
				got, goldenPath = ir.Print(p), filepath.Join("testdata/real/golden", base+".fxir")
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
	for name := range realInputs {
		if !seen[name] {
			t.Errorf("realInputs names %s, which is not in testdata/real", name)
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
