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

	"github.com/fxport/fxport/ir"
	_ "github.com/fxport/fxport/passes" // the workaround catalog
	"github.com/fxport/fxport/pm"
)

var update = flag.Bool("update", false, "rewrite the .golden files")

const caseSeparator = "# -----"

// goldenCase is one program with its run configuration.
type goldenCase struct {
	file, name string
	header     map[string]string
	src        string
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*/*.fxir")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden inputs found")
	}
	for _, file := range files {
		file := file
		t.Run(strings.TrimSuffix(filepath.ToSlash(file), ".fxir"), func(t *testing.T) {
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
			t.Fatalf("%s: %v", c.name, err)
		}
		outs = append(outs, out)
	}
	got := strings.Join(outs, caseSeparator+"\n")
	golden := strings.TrimSuffix(file, ".fxir") + ".golden"
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
	gotPath := strings.TrimSuffix(file, ".fxir") + ".got"
	if diff := cmp.Diff(string(want), got); diff != "" {
		_ = os.WriteFile(gotPath, []byte(got), 0o644)
		t.Fatalf("%s differs from %s (-want +got), output written to %s:\n%s", file, golden, gotPath, diff)
	}
	_ = os.Remove(gotPath)
}

// splitCases splits a file on separator lines and reads each case's header.
func splitCases(file, text string) []goldenCase {
	var cases []goldenCase
	common := map[string]string{}
	for i, part := range strings.Split(text, caseSeparator+"\n") {
		h := map[string]string{}
		for k, v := range common {
			h[k] = v
		}
		for _, line := range strings.Split(part, "\n") {
			if !strings.HasPrefix(line, "#") {
				break
			}
			if k, v, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":"); ok && isHeaderKey(k) {
				h[k] = strings.TrimSpace(v)
				if i == 0 {
					common[k] = h[k]
				}
			}
		}
		cases = append(cases, goldenCase{file: file, name: fmt.Sprintf("%s case %d", file, i+1), header: h, src: part})
	}
	return cases
}

func isHeaderKey(k string) bool {
	switch k {
	case "target", "backend", "passes", "pipeline", "exclude-patches", "error":
		return true
	}
	return false
}

// pipelineFor builds the pipeline a case asks for.
func pipelineFor(c goldenCase) (*pm.Pipeline, string, string, error) {
	if text, ok := c.header["pipeline"]; ok {
		pl, err := pm.ParsePipeline(text)
		if err != nil {
			return nil, "", "", err
		}
		return pl, pl.Target, pl.Backend, nil
	}
	target := c.header["target"]
	if target == "" {
		target = pm.TargetDynamo
	}
	backend := c.header["backend"]
	pl, err := pm.Build(target, backend)
	if err != nil {
		return nil, "", "", err
	}
	if names, ok := c.header["passes"]; ok {
		var list []string
		for _, n := range strings.Split(names, ",") {
			if n = strings.TrimSpace(n); n != "" {
				list = append(list, n)
			}
		}
		pl = pl.Only(list...)
		if err := pl.Validate(); err != nil {
			return nil, "", "", err
		}
	}
	return pl, pl.Target, pl.Backend, nil
}

// runOnce parses src, runs the case's pipeline with verify-each and returns
// the output text (IR plus firing lines) and the program.
func runOnce(c goldenCase, src string) (string, *ir.Program, error) {
	prog, err := ir.Parse([]byte(src), c.file)
	if err != nil {
		return "", nil, err
	}
	pl, target, backend, err := pipelineFor(c)
	if err != nil {
		return "", nil, err
	}
	var opts []pm.ExportOption
	if ex := c.header["exclude-patches"]; ex != "" {
		opts = append(opts, pm.ExcludePatches(strings.Split(ex, ",")...))
	}
	exp, err := pm.NewExport(target, backend, opts...)
	if err != nil {
		return "", nil, err
	}
	rep, err := pm.Run(prog, pl, exp, pm.Config{VerifyEach: true})
	if want, ok := c.header["error"]; ok {
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
	out, prog, err := runOnce(c, c.src)
	if err != nil || prog == nil {
		return out, err
	}
	// Determinism: a second run gives identical bytes.
	again, _, err := runOnce(c, c.src)
	if err != nil {
		return "", fmt.Errorf("second run: %w", err)
	}
	if again != out {
		return "", fmt.Errorf("two runs differ:\n%s", cmp.Diff(out, again))
	}
	// Round trip of the output through the parser.
	printed := ir.Print(prog)
	reparsed, err := ir.Parse([]byte(printed), c.file+" (output)")
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
	second, _, err := runOnce(c, printed)
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
