package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fxport/fxport/internal/testenv"
	"github.com/fxport/fxport/ir"
)

// genuineKnownFailures are the corpus exports the genuine runtime still
// refuses, each with a piece of the judge's error it must show. A listed
// case that passes, or fails otherwise, fails the test, so the list only
// shrinks. It is empty: every corpus program runs (propagate-dim-orders
// gives the pointwise ops after view copies the dim orders the portable
// kernels accept).
var genuineKnownFailures = map[string]string{}

// The programs exported as a bundled program and with external constants.
const (
	genuineBundled  = "transformer_encoder_layer" // portable, --bundle its io/
	genuineExternal = "gpt2_block"                // portable, --external-constants
)

// judgeCase is one case of tools/etjudge's manifest.
type judgeCase struct {
	Name        string   `json:"name"`
	PTE         string   `json:"pte,omitempty"`
	BPTE        string   `json:"bpte,omitempty"`
	PTD         []string `json:"ptd,omitempty"`
	Inputs      string   `json:"inputs"`
	Expected    string   `json:"expected"`
	SkipOutputs int      `json:"skip_outputs"`
}

// judgeResult is one line of its output.
type judgeResult struct {
	Name     string   `json:"name"`
	Loaded   bool     `json:"loaded"`
	Ran      bool     `json:"ran"`
	OK       bool     `json:"ok"`
	Error    string   `json:"error"`
	MaxError *float64 `json:"max_error"`
	Scale    *float64 `json:"scale"`
}

// TestGenuineExecuTorchRuntime exports every tests/corpus program with
// `fxport export` to executorch-portable and executorch-xnnpack, one as a
// bundled program and one with its constants in a .ptd, plus the model of
// `make run` (examples/cnn) to both, and has the
// genuine ExecuTorch runtime (tools/etjudge, the venv's executorch) load
// each with full verification, run it on the corpus inputs and compare
// with torch's outputs (fp32: max error ≤ 1e-4 × max |expected|). Broken
// copies of a small export (genuine_refusals_test.go) must be refused by
// both the genuine runtime and fxport's runner ("refusal" counts the
// runtime's refusals).
func TestGenuineExecuTorchRuntime(t *testing.T) {
	py := testenv.Python(t)
	root := testenv.Root(t)
	progs, err := filepath.Glob(filepath.Join(root, "tests", "corpus", "*", "program.pt2"))
	if err != nil {
		t.Fatal(err)
	}
	if len(progs) == 0 {
		t.Fatal("no tests/corpus/*/program.pt2")
	}
	sort.Strings(progs)
	out := t.TempDir()
	var cases []judgeCase
	group := map[string]string{} // case → its group in the counts
	export := func(g string, c judgeCase, args ...string) {
		var stderr bytes.Buffer
		if err := runExport(args, io.Discard, &stderr); err != nil {
			t.Errorf("%s: fxport export %s: %v\n%s", c.Name, strings.Join(args, " "), err, stderr.String())
			return
		}
		group[c.Name] = g
		cases = append(cases, c)
	}
	for _, prog := range progs {
		dir := filepath.Dir(prog)
		name := filepath.Base(dir)
		ioDir := filepath.Join(dir, "io")
		skip := mutatedBuffers(t, prog)
		for _, tgt := range []string{"portable", "xnnpack"} {
			pte := filepath.Join(out, name+"."+tgt+".pte")
			export(tgt, judgeCase{Name: name + "." + tgt, PTE: pte, Inputs: ioDir, Expected: ioDir, SkipOutputs: skip},
				prog, "--target", "executorch-"+tgt, "-o", pte)
		}
		switch name {
		case genuineBundled:
			bpte := filepath.Join(out, name+".bpte")
			export("bpte", judgeCase{Name: name + ".bpte", BPTE: bpte, Inputs: ioDir, Expected: ioDir, SkipOutputs: skip},
				prog, "--target", "executorch-portable", "--bundle", dir, "-o", bpte)
		case genuineExternal:
			pte := filepath.Join(out, name+".external.pte")
			ptd := strings.TrimSuffix(pte, ".pte") + ".ptd"
			export("ptd", judgeCase{Name: name + ".ptd", PTE: pte, PTD: []string{ptd}, Inputs: ioDir, Expected: ioDir, SkipOutputs: skip},
				prog, "--target", "executorch-portable", "--external-constants", "-o", pte)
			if _, err := os.Stat(ptd); err != nil {
				t.Errorf("%s: --external-constants wrote no .ptd: %v", name, err)
			}
		}
	}
	// The model `make run` takes through every target (examples/cnn, its
	// own group: the corpus counts stay the corpus's).
	example := filepath.Join(root, "examples", "cnn")
	for _, tgt := range []string{"portable", "xnnpack"} {
		pte := filepath.Join(out, "example-cnn."+tgt+".pte")
		ioDir := filepath.Join(example, "io")
		export("example", judgeCase{Name: "example-cnn." + tgt, PTE: pte, Inputs: ioDir, Expected: ioDir},
			filepath.Join(example, "program.pt2"), "--target", "executorch-"+tgt, "-o", pte)
	}
	for _, g := range []string{"bpte", "ptd"} {
		found := false
		for _, x := range group {
			found = found || x == g
		}
		if !found {
			t.Errorf("no %s case: the programs %q / %q are not in tests/corpus", g, genuineBundled, genuineExternal)
		}
	}
	for _, c := range refusalCases(t, out) { // genuine_refusals_test.go
		group[c.Name] = "refusal"
		if c.Name == "callconv.control" {
			group[c.Name] = "control"
		}
		cases = append(cases, c)
	}
	results := runJudge(t, py, root, out, cases)
	passed, total := map[string]int{}, map[string]int{}
	for _, c := range cases {
		g := group[c.Name]
		total[g]++
		r, ok := results[c.Name]
		if !ok {
			t.Errorf("%s: the judge printed no result", c.Name)
			continue
		}
		if g == "refusal" {
			// A broken copy: the runtime must refuse it.
			if !r.OK {
				passed[g]++
				t.Logf("%s: refused by the genuine runtime: %s", c.Name, r.Error)
			} else {
				t.Errorf("%s: the genuine runtime ran it; fxport's runner refuses it", c.Name)
			}
			continue
		}
		if r.OK {
			passed[g]++
		}
		want, known := genuineKnownFailures[c.Name]
		switch {
		case r.OK && known:
			t.Errorf("%s now passes on the genuine runtime: remove it from genuineKnownFailures", c.Name)
		case !r.OK && known && strings.Contains(r.Error, want):
			t.Logf("%s: known failure (%s)", c.Name, want)
		case !r.OK:
			t.Errorf("%s: genuine ExecuTorch runtime: %s", c.Name, describe(r))
		}
	}
	var counts []string
	for _, g := range []string{"portable", "xnnpack", "bpte", "ptd", "example", "control", "refusal"} {
		counts = append(counts, fmt.Sprintf("%s %d/%d", g, passed[g], total[g]))
	}
	line := "genuine ExecuTorch runtime: " + strings.Join(counts, ", ")
	t.Log(line)
	fmt.Println(line)
}

// describe says how far a case got.
func describe(r judgeResult) string {
	stage := "did not load"
	switch {
	case r.Ran:
		stage = "ran but does not match torch"
	case r.Loaded:
		stage = "loaded but did not run"
	}
	return stage + ": " + r.Error
}

// mutatedBuffers counts the program's buffer-mutation outputs: fxport's
// method returns them before the user outputs torch's io/ holds.
func mutatedBuffers(t *testing.T, prog string) int {
	t.Helper()
	p, err := loadProgram(prog)
	if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	n := 0
	for _, o := range p.Signature.Outputs {
		if o.Kind == ir.BufferMutation {
			n++
		}
	}
	return n
}

// runJudge runs tools/etjudge once over cases and returns its results by
// case name.
func runJudge(t *testing.T, py, root, dir string, cases []judgeCase) map[string]judgeResult {
	t.Helper()
	manifest := filepath.Join(dir, "manifest.json")
	b, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, filepath.Join(root, "tools", "etjudge", "etjudge.py"), manifest)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 3 {
		testenv.Missing(t, "the venv's ExecuTorch runtime ("+strings.TrimSpace(stderr.String())+")", "make venv")
	}
	if code := cmd.ProcessState.ExitCode(); err != nil && code != 1 {
		t.Fatalf("etjudge: %v (exit %d)\n%s", err, code, stderr.String())
	}
	if len(bytes.TrimSpace(stdout)) == 0 {
		t.Fatalf("etjudge printed nothing (exit %d)\n%s", cmd.ProcessState.ExitCode(), stderr.String())
	}
	res := map[string]judgeResult{}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r judgeResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("etjudge printed %q: %v", sc.Text(), err)
		}
		res[r.Name] = r
	}
	return res
}
