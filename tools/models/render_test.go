package models

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite docs/models.md from tools/models/results.json")

// listed reads the names of a sweep list file.
func listed(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	for _, m := range doc.Models {
		out = append(out, m.Name)
	}
	return out
}

// TestModelsDoc: docs/models.md is what the sweep's results render to; every
// listed model has a result, and every result that is not a pass has its
// reason. Run with -update after `make models` to rewrite the page.
func TestModelsDoc(t *testing.T) {
	root := testenv.Root(t)
	dir := filepath.Join(root, "tools", "models")
	res, err := Load(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]*Model{}
	for i := range res.Models {
		m := &res.Models[i]
		if have[m.Name] != nil {
			t.Errorf("results: %s twice", m.Name)
		}
		have[m.Name] = m
	}
	n := 0
	for _, list := range []string{"archs.json", "torchvision.json", "skips.json"} {
		names := listed(t, filepath.Join(dir, list))
		n += len(names)
		for _, name := range names {
			m := have[name]
			if m == nil {
				t.Errorf("%s lists %s, results.json has no result for it (run make models)", list, name)
				continue
			}
			for _, k := range Targets {
				if m.Capture.Status != NotRun && !m.Passed(k) && m.Reason(k) == "" {
					t.Errorf("%s %s: not a pass and no reason", name, k)
				}
			}
		}
	}
	if n != len(res.Models) {
		t.Errorf("results.json has %d models, the lists %d (run make models)", len(res.Models), n)
	}
	got := Render(res)
	path := filepath.Join(root, "docs", "models.md")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/models.md is stale: go test ./tools/models -run TestModelsDoc -update")
	}
}

// TestCountsAndReasons: the headline counts follow the records.
func TestCountsAndReasons(t *testing.T) {
	f := 1e-7
	pass := Result{Status: "pass", Worst: &f}
	ms := []Model{
		{Name: "a", Capture: Capture{Status: "ok"}, Fxport: map[string]Result{"onnx": pass, "portable": pass, "xnnpack": pass}},
		{Name: "b", Capture: Capture{Status: "ok"}, Fxport: map[string]Result{"onnx": pass, "portable": {Status: "export-failed", Error: "no kernel"}, "xnnpack": pass}},
		{Name: "c", Capture: Capture{Status: "capture-failed", Error: "guard"}},
	}
	if got := Count(ms, "onnx"); got != 2 {
		t.Errorf("onnx: %d, want 2", got)
	}
	if got := Count(ms, "all"); got != 1 {
		t.Errorf("all: %d, want 1", got)
	}
	if r := ms[1].Reason("portable"); r != "export-failed: no kernel" {
		t.Errorf("reason %q", r)
	}
	if r := ms[2].Reason("onnx"); r != "capture-failed: guard" {
		t.Errorf("reason %q", r)
	}
	doc := string(Render(&Results{Models: ms}))
	for _, want := range []string{"**3** models", "ONNX **2 (67%)**", "no kernel", "guard"} {
		if !bytes.Contains([]byte(doc), []byte(want)) {
			t.Errorf("rendered page lacks %q", want)
		}
	}
}
