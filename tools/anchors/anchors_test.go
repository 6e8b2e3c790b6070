package anchors

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/internal/testenv"
)

// TestListsEveryCorpusProgram: anchors.py resolves every tests/corpus
// program to its model factory, and scaling.py parses its arguments.
func TestListsEveryCorpusProgram(t *testing.T) {
	py := testenv.Python(t)
	root := testenv.Root(t)
	out, err := exec.Command(py, filepath.Join(root, "tools", "anchors", "anchors.py"), "--list", "--programs", "corpus").CombinedOutput()
	if err != nil {
		t.Fatalf("anchors.py --list: %v\n%s", err, out)
	}
	listed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, where, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("anchors.py --list: bad line %q", line)
		}
		listed[name] = where
	}
	dirs, err := os.ReadDir(filepath.Join(root, "tests", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(root, "tests", "corpus", d.Name(), "program.pt2")); err != nil {
			continue
		}
		n++
		where, ok := listed[d.Name()]
		switch {
		case !ok:
			t.Errorf("corpus program %s is not listed", d.Name())
		case !strings.HasPrefix(where, "tools/fxgen/models/") || !strings.Contains(where, ".py:"):
			t.Errorf("corpus program %s: no model factory (%q)", d.Name(), where)
		}
	}
	if n == 0 || len(listed) != n {
		t.Errorf("listed %d programs, the corpus has %d", len(listed), n)
	}
	cache := t.TempDir()
	cmd := exec.Command(py, filepath.Join(root, "tools", "anchors", "scaling.py"), "--list", "--cache", cache)
	if out, err := cmd.CombinedOutput(); err != nil || strings.Count(string(out), ".pt2") != 9 {
		t.Errorf("scaling.py --list: %v\n%s", err, out)
	}
	// anchors.py names scaling.py's programs by size and by name, from
	// the same cache.
	cmd = exec.Command(py, filepath.Join(root, "tools", "anchors", "anchors.py"), "--list", "--programs", "1k,vit_10k",
		"--scaling-cache", cache)
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("anchors.py --list --programs 1k,vit_10k: %v\n%s", err, out)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, where, _ := strings.Cut(line, "\t")
		names = append(names, name)
		if !strings.Contains(where, filepath.Join(cache, name+".pt2")) || !strings.HasSuffix(where, "(not captured)") {
			t.Errorf("%s: %q does not name the empty cache's file", name, where)
		}
	}
	if strings.Join(names, " ") != "decoder_1k vit_1k resnet_1k vit_10k" {
		t.Errorf("anchors.py --list --programs 1k,vit_10k listed %v", names)
	}
}

// TestRunsOneProgram runs the whole anchors script on the smallest corpus
// program: both of torch's exporters must succeed and match eager on the
// genuine runtimes, and both tables must carry the program's row. It needs
// the built fxport binary (go build here) and about a minute.
func TestRunsOneProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("runs torch's exporters (about a minute); skipped with -short")
	}
	py := testenv.Python(t)
	root := testenv.Root(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "fxport")
	build := exec.Command("go", "build", "-o", bin, "./cmd/fxport")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	md := filepath.Join(dir, "benchmarks.md")
	cmd := exec.Command(py, filepath.Join(root, "tools", "anchors", "anchors.py"), "--only", "moe_router",
		"--runs", "2", "--fxport", bin, "--out", md)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("anchors.py: %v\n%s", err, out)
	}
	text, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(line, "| `moe_router` |") {
			rows = append(rows, line)
		}
	}
	if len(rows) != 2 {
		t.Fatalf("want the program's row in both tables, got %d rows:\n%s", len(rows), text)
	}
	for i, row := range rows {
		cells := strings.Split(row, " | ")
		last := cells[len(cells)-1]
		if !strings.HasPrefix(last, "yes (") {
			t.Errorf("table %d: torch's exporter does not match eager: %s", i+1, row)
		}
		if strings.Contains(cells[2], "fails") {
			t.Errorf("table %d: torch's exporter failed: %s", i+1, row)
		}
	}
	if !strings.Contains(string(text), "DO NOT EDIT") || !strings.Contains(string(text), "## Machine and versions") {
		t.Errorf("the page lacks its generated-file line or the machine:\n%s", text[:min(len(text), 600)])
	}
}
