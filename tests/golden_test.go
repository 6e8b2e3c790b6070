package tests

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fxport/fxport/frontends/fxtext"
	"github.com/fxport/fxport/ir"
	_ "github.com/fxport/fxport/passes"         // the ExecuTorch workarounds (and the Dynamo stages)
	_ "github.com/fxport/fxport/passes/onnxfix" // the ONNX workarounds
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/tests/goldenfile"
)

var update = flag.Bool("update", false, "rewrite the .golden files")

const caseSeparator = goldenfile.Separator

// goldenCase is one program with its run configuration (see package goldenfile).
type goldenCase = goldenfile.Case

func TestGolden(t *testing.T) {
	// Inputs are IR text (.fxir) or FX text dumps (.fx, read by frontends/fxtext).
	var files []string
	for _, pattern := range []string{"testdata/*/*.fxir", "testdata/*/*.fx"} {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matches...)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no golden inputs found")
	}
	for _, file := range files {
		file := file
		t.Run(strings.TrimSuffix(filepath.ToSlash(file), filepath.Ext(file)), func(t *testing.T) {
			runGoldenFile(t, file)
		})
	}
}

func runGoldenFile(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cases := splitCases(file, string(data))
	var outs []string
	for _, c := range cases {
		out, err := runCase(c)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		outs = append(outs, out)
	}
	got := strings.Join(outs, caseSeparator+"\n")
	golden := strings.TrimSuffix(file, filepath.Ext(file)) + ".golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run `go test ./tests -update` to create it)", err)
	}
	gotPath := strings.TrimSuffix(file, filepath.Ext(file)) + ".got"
	if diff := cmp.Diff(string(want), got); diff != "" {
		_ = os.WriteFile(gotPath, []byte(got), 0o644)
		t.Fatalf("%s differs from %s (-want +got), output written to %s:\n%s", file, golden, gotPath, diff)
	}
	_ = os.Remove(gotPath)
}

// splitCases splits a file on separator lines and reads each case's header.
func splitCases(file, text string) []goldenCase { return goldenfile.Split(file, text) }

// pipelineFor builds the pipeline a case asks for.
func pipelineFor(c goldenCase) (*pm.Pipeline, string, string, error) {
	pl, err := c.Pipeline()
	if err != nil {
		return nil, "", "", err
	}
	return pl, pl.Target, pl.Backend, nil
}

// isFXInput reports a golden input in FX text form (*.fx, read by frontends/fxtext).
func isFXInput(file string) bool { return filepath.Ext(file) == ".fx" }

// runOnce parses src (as FX text when fx is set, else as IR text), runs the
// case's pipeline with verify-each and returns the output text (IR plus
// firing lines) and the program. For FX text, an "# error:" header may also
// match an error of the frontend.
func runOnce(c goldenCase, src string, fx bool) (string, *ir.Program, error) {
	var prog *ir.Program
	var err error
	if fx {
		prog, err = fxtext.Parse([]byte(src), c.File, fxtext.Options{})
		if want, ok := c.Header["error"]; ok && err != nil {
			if !strings.Contains(err.Error(), want) {
				return "", nil, fmt.Errorf("error %q does not contain %q", err, want)
			}
			return "# error: " + err.Error() + "\n", nil, nil
		}
	} else {
		prog, err = ir.Parse([]byte(src), c.File)
	}
	if err != nil {
		return "", nil, err
	}
	pl, target, backend, err := pipelineFor(c)
	if err != nil {
		return "", nil, err
	}
	exp, err := pm.NewExport(target, backend, c.ExportOptions()...)
	if err != nil {
		return "", nil, err
	}
	rep, err := pm.Run(prog, pl, exp, pm.Config{VerifyEach: true})
	if want, ok := c.WantsError(); ok {
		if err == nil {
			return "", nil, fmt.Errorf("expected an error containing %q, the run succeeded", want)
		}
		if !strings.Contains(err.Error(), want) {
			return "", nil, fmt.Errorf("error %q does not contain %q", err, want)
		}
		return "# error: " + err.Error() + "\n", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	var b strings.Builder
	b.WriteString(ir.Print(prog))
	for _, f := range rep.Fired {
		fmt.Fprintf(&b, "# fired: %s\n", f)
	}
	return b.String(), prog, nil
}

func runCase(c goldenCase) (string, error) {
	fx := isFXInput(c.File)
	out, prog, err := runOnce(c, c.Src, fx)
	if err != nil || prog == nil {
		return out, err
	}
	// Determinism: a second run gives identical bytes.
	again, _, err := runOnce(c, c.Src, fx)
	if err != nil {
		return "", fmt.Errorf("second run: %w", err)
	}
	if again != out {
		return "", fmt.Errorf("two runs differ:\n%s", cmp.Diff(out, again))
	}
	// Round trip of the output through the parser.
	printed := ir.Print(prog)
	reparsed, err := ir.Parse([]byte(printed), c.File+" (output)")
	if err != nil {
		return "", fmt.Errorf("output does not parse: %w", err)
	}
	if p2 := ir.Print(reparsed); p2 != printed {
		return "", fmt.Errorf("output does not round-trip:\n%s", cmp.Diff(printed, p2))
	}
	if err := ir.VerifyWith(reparsed, ir.VerifyOptions{Types: true}); err != nil {
		return "", fmt.Errorf("output fails type verification: %w", err)
	}
	// Idempotence: the pipeline changes nothing on its own output.
	second, _, err := runOnce(c, printed, false)
	if err != nil {
		return "", fmt.Errorf("re-running on the output: %w", err)
	}
	if second := stripFired(second); second != printed {
		return "", fmt.Errorf("pipeline is not idempotent:\n%s", cmp.Diff(printed, second))
	}
	return out, nil
}

func stripFired(s string) string {
	var keep []string
	for _, line := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(line, "# fired: ") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "")
}

// TestEveryWorkaroundHasAGolden requires each registered patch, node fix and
// program fix to fire in at least one golden output.
func TestEveryWorkaroundHasAGolden(t *testing.T) {
	goldens, err := filepath.Glob("testdata/*/*.golden")
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	var fired []string
	for _, line := range strings.Split(all.String(), "\n") {
		if strings.HasPrefix(line, "# fired: ") {
			fired = append(fired, line)
		}
	}
	firedIn := func(name string) bool {
		for _, line := range fired {
			if strings.Contains(line, `"`+name+`"`) {
				return true
			}
		}
		return false
	}
	var missing []string
	for _, e := range pm.Default.List() {
		switch e.Kind {
		case pm.EntryPatch, pm.EntryNodeFix, pm.EntryProgramFix:
		default:
			continue
		}
		// Firing lines name the entry; see pm.Firing.String.
		if !firedIn(e.Name) {
			missing = append(missing, e.Name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("workarounds without a golden test that shows them firing: %s", strings.Join(missing, ", "))
	}
}
