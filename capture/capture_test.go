package capture_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fxport/fxport/capture"
	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/internal/testenv"
)

// TestCaptureSteps captures a module that needs four capture steps and
// checks that each fired, that the program's metadata lists them for
// check-capture-steps, that the named dynamic dim reached the metadata, and
// that the inputs and eager outputs were written.
func TestCaptureSteps(t *testing.T) {
	py := testenv.Python(t)
	root := testenv.Root(t)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := capture.Run(context.Background(), []string{
		"--model", filepath.Join(root, "capture", "testdata", "tiny_attention.py") + ":tiny_attention",
		"--dim", "hidden_states.1=seq:2:32",
		"-o", out, "--json",
	}, capture.Options{Python: py, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatalf("capture: %v\n%s", err, stderr.String())
	}
	var rep struct {
		Fired []string `json:"fired"`
		Nodes int      `json:"nodes"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	for _, id := range []string{"DYN-S01", "DYN-S04", "DYN-S06", "DYN-S07", "DYN-S08", "DYN-S09", "DYN-P05"} {
		if !contains(rep.Fired, id) {
			t.Errorf("capture step %s did not fire; fired %v", id, rep.Fired)
		}
	}
	if contains(rep.Fired, "DYN-P06") {
		t.Errorf("DYN-P06 fired for a model that never imports transformers")
	}
	prog, err := pt2.Read(filepath.Join(out, "program.pt2"))
	if err != nil {
		t.Fatalf("reading the captured program: %v", err)
	}
	steps, _ := prog.Meta.Get("export.capture_steps")
	var got []string
	if err := json.Unmarshal([]byte(steps), &got); err != nil || !reflect.DeepEqual(got, rep.Fired) {
		t.Errorf("export.capture_steps = %q, want the fired steps %v", steps, rep.Fired)
	}
	dyn, _ := prog.Meta.Get("export.dynamic_shapes")
	if !strings.Contains(dyn, `"name": "seq"`) || !strings.Contains(dyn, `"max": 32`) {
		t.Errorf("export.dynamic_shapes = %q, want the named dim seq in [2, 32]", dyn)
	}
	for _, f := range []string{"io/input_0.npy", "io/input_1.npy", "io/output_0.npy", "capture.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
}

// TestCaptureBatchedExperts: a mixture-of-experts model whose experts
// implementation can be switched is captured with batched_mm (ET-B01, as
// transformers' prepare_for_xnnpack does), so the program holds a bmm
// instead of the grouped loop no ExecuTorch kernel runs.
func TestCaptureBatchedExperts(t *testing.T) {
	py := testenv.Python(t)
	root := testenv.Root(t)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := capture.Run(context.Background(), []string{
		"--model", filepath.Join(root, "capture", "testdata", "tiny_experts.py") + ":tiny_experts",
		"-o", out, "--json",
	}, capture.Options{Python: py, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatalf("capture: %v\n%s", err, stderr.String())
	}
	var rep struct {
		Fired []string `json:"fired"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	if !contains(rep.Fired, "ET-B01") {
		t.Errorf("capture step ET-B01 did not fire; fired %v", rep.Fired)
	}
	prog, err := pt2.Read(filepath.Join(out, "program.pt2"))
	if err != nil {
		t.Fatalf("reading the captured program: %v", err)
	}
	bmm := 0
	for _, n := range prog.Main.Nodes() {
		if n.Op.String() == "aten.bmm.default" {
			bmm++
		}
	}
	if bmm != 1 {
		t.Errorf("want the batched_mm experts' one bmm in the program, got %d", bmm)
	}
}

// TestCaptureTransformers captures a tiny random gpt2 language model.
func TestCaptureTransformers(t *testing.T) {
	py := testenv.Python(t)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := capture.Run(context.Background(), []string{"--hf", "gpt2", "--task", "causal-lm", "--dynamic", "-o", out, "--json"},
		capture.Options{Python: py, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatalf("capture: %v\n%s", err, stderr.String())
	}
	var rep struct {
		Fired []string `json:"fired"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	for _, id := range []string{"DYN-S04", "DYN-S07", "DYN-S09", "DYN-P05", "DYN-P06"} {
		if !contains(rep.Fired, id) {
			t.Errorf("capture step %s did not fire; fired %v", id, rep.Fired)
		}
	}
	prog, err := pt2.Read(filepath.Join(out, "program.pt2"))
	if err != nil {
		t.Fatalf("reading the captured program: %v", err)
	}
	if len(prog.Main.Inputs) < 2 {
		t.Errorf("want parameters and input_ids/attention_mask as inputs, got %d", len(prog.Main.Inputs))
	}
}

// TestCaptureErrorIsOneLine: a bad model path is one line of stderr, no
// Python traceback, and exit status 1.
func TestCaptureErrorIsOneLine(t *testing.T) {
	py := testenv.Python(t)
	var stdout, stderr bytes.Buffer
	err := capture.Run(context.Background(), []string{"--model", "/no/such/model.py:f", "-o", t.TempDir()},
		capture.Options{Python: py, Stdout: &stdout, Stderr: &stderr})
	var ee *capture.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 {
		t.Fatalf("err = %v, want exit status 1", err)
	}
	msg := strings.TrimSpace(stderr.String())
	if strings.Contains(msg, "Traceback") || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "/no/such/model.py") {
		t.Errorf("stderr = %q, want one line naming the file", msg)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestExportSkipsRefused: a module whose class EXPORT_SKIPS lists is refused
// before torch.export runs, in one line naming the table and its reason;
// every entry of the data file has a scope, classes, a reason and the fix it
// waits for.
func TestExportSkipsRefused(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("fxport_capture", "export_skips.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Entries []struct {
			Scope, Reason, Fix string
			Classes            []string
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("export_skips.json: %v", err)
	}
	if len(doc.Entries) == 0 {
		t.Fatal("export_skips.json has no entries")
	}
	for i, e := range doc.Entries {
		if e.Scope != "all" || e.Reason == "" || e.Fix == "" || len(e.Classes) == 0 {
			t.Errorf("entry %d: %+v: want scope all, classes, a reason and a fix", i, e)
		}
	}
	py := testenv.Python(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "skipped.py")
	code := "import torch\n\nclass VideoMAEForPreTraining(torch.nn.Module):\n    def forward(self, x):\n        return x + 1\n\n" +
		"def factory():\n    return VideoMAEForPreTraining(), (torch.ones(2),)\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err = capture.Run(context.Background(), []string{"--model", src + ":factory", "-o", filepath.Join(dir, "out")},
		capture.Options{Python: py, Stdout: &stdout, Stderr: &stderr})
	var ee *capture.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("err = %v, want the capture refused", err)
	}
	msg := strings.TrimSpace(stderr.String())
	if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "EXPORT_SKIPS") || !strings.Contains(msg, "loss") || !strings.Contains(msg, "--ignore-skips") {
		t.Errorf("stderr = %q, want one line naming EXPORT_SKIPS, the reason and --ignore-skips", msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "program.pt2")); err == nil {
		t.Error("a refused capture wrote program.pt2")
	}
}
