package pt2_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	frontend "github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/internal/testenv"
	_ "github.com/fxport/fxport/passes"
	"github.com/fxport/fxport/pm"
	pt2target "github.com/fxport/fxport/targets/pt2"
)

// torchRefuses lists corpus programs whose written .pt2 genuine torch does
// not load or run yet, each with the reason; the test fails when one of
// them starts to pass (drop it then) and for every other failure.
var torchRefuses = map[string]string{}

// TestTorchLoadsWrittenCorpus exports every tests/corpus program with the
// dynamo target (its pipeline, then this package's writer) and has genuine
// torch (the project venv) torch.export.load each file and run ep.module()
// on the corpus inputs: the outputs must be the fixture's eager outputs.
// One Python process serves every program.
func TestTorchLoadsWrittenCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("runs genuine torch on the whole corpus")
	}
	python := testenv.Python(t)
	root := testenv.Root(t)
	files, err := filepath.Glob(filepath.Join(root, "tests", "corpus", "*", "program.pt2"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus programs: %v", err)
	}
	type job struct {
		Name string `json:"name"`
		PT2  string `json:"pt2"`
		IO   string `json:"io"`
	}
	tmp := t.TempDir()
	var jobs []job
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f))
		p, err := frontend.Read(f)
		if err != nil {
			t.Errorf("%s: read: %v", name, err)
			continue
		}
		pl, err := pm.Build(pm.TargetDynamo, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil {
			t.Errorf("%s: dynamo pipeline: %v", name, err)
			continue
		}
		out := filepath.Join(tmp, name+".pt2")
		if err := pt2target.Write(p, out); err != nil {
			t.Errorf("%s: write: %v", name, err)
			continue
		}
		jobs = append(jobs, job{name, out, filepath.Join(filepath.Dir(f), "io")})
	}
	raw, err := json.Marshal(jobs)
	if err != nil {
		t.Fatal(err)
	}
	jobsFile := filepath.Join(tmp, "jobs.json")
	if err := os.WriteFile(jobsFile, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(python, filepath.Join(root, "targets", "pt2", "testdata", "torch_load.py"), jobsFile)
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("torch_load.py: %v\n%s", err, stderr.String())
	}
	seen := map[string]bool{}
	loaded := 0
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Name   string   `json:"name"`
			OK     bool     `json:"ok"`
			Error  string   `json:"error"`
			MaxAbs *float64 `json:"max_abs"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("torch_load.py printed %q: %v", sc.Text(), err)
		}
		seen[r.Name] = true
		why, expected := torchRefuses[r.Name]
		switch {
		case r.OK && expected:
			t.Errorf("%s: torch now loads and runs it: drop it from torchRefuses (%s)", r.Name, why)
		case r.OK:
			loaded++
			t.Logf("%s: torch.export.load + module() match the fixture (max abs %g)", r.Name, *r.MaxAbs)
		case expected:
			t.Logf("%s: expected failure (%s): %s", r.Name, why, r.Error)
		default:
			t.Errorf("%s: genuine torch refuses fxport's .pt2: %s", r.Name, r.Error)
		}
	}
	for _, j := range jobs {
		if !seen[j.Name] {
			t.Errorf("%s: torch_load.py reported nothing\n%s", j.Name, stderr.String())
		}
	}
	t.Logf("%d/%d corpus programs written by fxport load and run in genuine torch", loaded, len(files))
}
