package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fxport/fxport/internal/testenv"
)

const (
	resultsFile = "results.json"
	docFile     = "../../docs/ops.md"
	// smallCases is a committed sample of the sweep's cases, re-run by
	// TestOpsNoRegression.
	smallCases = "testdata/cases"
)

// docs/ops.md is rendered from the committed results, and the results
// account for every Core ATen op (swept or listed with a reason).
func TestOpsDocFresh(t *testing.T) {
	r, err := ReadResults(resultsFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(docFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(doc) != r.Markdown() {
		t.Fatalf("docs/ops.md is stale: go run ./tools/opsweep -render (from the repository root)")
	}
	swept := map[string]bool{}
	for _, row := range r.Rows {
		swept[row.Op] = true
		for _, tgt := range Targets {
			if row.FXPort[tgt] == "" {
				t.Errorf("%s: no verdict for %s", row.Case, tgt)
			}
		}
	}
	if len(r.Core) < 150 {
		t.Fatalf("results list %d Core ATen ops; torch has about 190", len(r.Core))
	}
	for _, op := range r.Core {
		if !swept[op] && r.NotSwept[op] == "" {
			t.Errorf("core op %s is neither swept nor listed with a reason", op)
		}
	}
}

// TestOpsNoRegression re-runs the committed sample of cases through
// fxport and the genuine judges (one Python process) and compares each
// verdict with the committed results: a case that passed must still pass,
// and a case that now passes must be recorded (rerun make ops).
func TestOpsNoRegression(t *testing.T) {
	py := testenv.Python(t)
	root := testenv.Root(t)
	r, err := ReadResults(resultsFile)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Row{}
	for _, row := range r.Rows {
		want[row.Case] = row
	}
	entries, err := os.ReadDir(smallCases)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 8 {
		t.Fatalf("%s holds %d cases; the sample must cover several op kinds", smallCases, len(entries))
	}
	got, err := Sweep(smallCases, t.TempDir(), py, filepath.Join(root, "tools", "opsweep", "sweep.py"))
	if err != nil {
		t.Fatal(err)
	}
	passed := 0
	for _, row := range got.Rows {
		w, ok := want[row.Case]
		if !ok {
			t.Errorf("%s: not in %s", row.Case, resultsFile)
			continue
		}
		var tgts []string
		for tgt := range row.FXPort {
			tgts = append(tgts, tgt)
		}
		sort.Strings(tgts)
		for _, tgt := range tgts {
			g, wv := row.FXPort[tgt], w.FXPort[tgt]
			switch {
			case pass(g):
				passed++
				if !pass(wv) {
					t.Errorf("%s on %s passes now (recorded: %s): rerun make ops", row.Case, tgt, wv)
				}
			case pass(wv):
				t.Errorf("%s on %s regressed: %s", row.Case, tgt, g)
			case kind(g) != kind(wv):
				t.Errorf("%s on %s: %s, recorded %s", row.Case, tgt, g, wv)
			}
		}
	}
	if passed == 0 {
		t.Fatal("no case passed: the judges did not run")
	}
	t.Logf("%d (case, target) pairs pass of %d cases", passed, len(got.Rows))
}

// kind is a verdict's class: pass, fail, refused or capture.
func kind(v string) string {
	k, _, _ := strings.Cut(v, ":")
	return k
}

// -merge replaces the swept cases' rows and keeps every other row.
func TestMergeResults(t *testing.T) {
	old := &Results{Torch: "2.0", Core: []string{"aten.a.default", "aten.b.default"}, NotSwept: map[string]string{"aten.c.default": "why"},
		Rows: []Row{
			{Case: "a.default.f32", Op: "aten.a.default", DType: "f32", FXPort: map[string]string{"onnx": "pass", "portable": "refused: no"}, Anchors: map[string]string{"onnx": "pass"}},
			{Case: "b.default.f32", Op: "aten.b.default", DType: "f32", FXPort: map[string]string{"onnx": "fail: x"}},
		}}
	fresh := &Results{Rows: []Row{
		{Case: "a.default.f32", Op: "aten.a.default", DType: "f32", FXPort: map[string]string{"onnx": "pass", "portable": "pass"}},
		{Case: "a.default.i64", Op: "aten.a.default", DType: "i64", FXPort: map[string]string{"onnx": "pass", "portable": "pass"}},
	}}
	keepAnchors(fresh, old)
	got := mergeResults(old, fresh)
	if got.Torch != "2.0" || len(got.Core) != 2 || got.NotSwept["aten.c.default"] != "why" {
		t.Errorf("op lists not kept: %+v", got)
	}
	var cases []string
	for _, r := range got.Rows {
		cases = append(cases, r.Case)
	}
	if strings.Join(cases, " ") != "a.default.f32 a.default.i64 b.default.f32" {
		t.Fatalf("rows %v", cases)
	}
	if got.Rows[0].FXPort["portable"] != "pass" || got.Rows[0].Anchors["onnx"] != "pass" {
		t.Errorf("a.default.f32 not replaced with its anchors kept: %+v", got.Rows[0])
	}
	if got.Rows[2].FXPort["onnx"] != "fail: x" {
		t.Errorf("b.default.f32 not kept: %+v", got.Rows[2])
	}
}

// mergeAnchors replaces only the anchor verdicts it is given: fxport's
// verdicts, the other targets' anchors and the other rows stay.
func TestMergeAnchors(t *testing.T) {
	r := &Results{Rows: []Row{
		{Case: "a.default.f32", FXPort: map[string]string{"onnx": "pass"}, Anchors: map[string]string{"onnx": "fail: old", "portable": "pass"}},
		{Case: "b.default.f32", FXPort: map[string]string{"onnx": "refused: no"}},
		{Case: "c.default.f32", FXPort: map[string]string{"onnx": "pass"}, Anchors: map[string]string{"xnnpack": "pass"}},
	}}
	missing := mergeAnchors(r, map[string]map[string]string{
		"a.default.f32": {"onnx": "pass"},
		"b.default.f32": {"onnx": "pass", "portable": "fail: x", "xnnpack": "pass"},
		"z.default.f32": {"onnx": "pass"},
	})
	if strings.Join(missing, " ") != "z.default.f32" {
		t.Errorf("missing %v, want z.default.f32", missing)
	}
	a, b, c := r.Rows[0], r.Rows[1], r.Rows[2]
	if a.Anchors["onnx"] != "pass" || a.Anchors["portable"] != "pass" || a.FXPort["onnx"] != "pass" {
		t.Errorf("a: %+v", a)
	}
	if len(b.Anchors) != 3 || b.Anchors["portable"] != "fail: x" || b.FXPort["onnx"] != "refused: no" {
		t.Errorf("b: %+v", b)
	}
	if len(c.Anchors) != 1 || c.Anchors["xnnpack"] != "pass" {
		t.Errorf("c: %+v", c)
	}
}

// A case the judge has no kernel for is named, not counted: the op passes
// on its other dtypes, and an op with only such cases is neither.
func TestUnjudgedCasesAreNotCounted(t *testing.T) {
	const noKernel = "fail: NotImplemented: [ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for MatMul(13) node"
	rows := []Row{
		{Case: "mm_bf16", Op: "aten.mm.default", DType: "bf16", FXPort: map[string]string{"onnx": noKernel}},
		{Case: "mm_f32", Op: "aten.mm.default", DType: "f32", FXPort: map[string]string{"onnx": "pass"}},
	}
	v, ok := opStatus(rows, "onnx", false)
	if !ok || !passed(v) || !strings.Contains(v, "bf16 not judged") {
		t.Errorf("bf16 unjudged, f32 passing: %q %v", v, ok)
	}
	rows[1].FXPort["onnx"] = "fail: output 0: values differ"
	if v, ok := opStatus(rows, "onnx", false); !ok || passed(v) || !strings.HasPrefix(v, "f32: fail") {
		t.Errorf("f32 failing: %q %v", v, ok)
	}
	if v, ok := opStatus(rows[:1], "onnx", false); ok || !strings.HasPrefix(v, "not judged") {
		t.Errorf("only an unjudged case: %q %v", v, ok)
	}
	// An ordinary failure is a failure, whatever its words.
	if unjudged("fail: output 0: values differ") || unjudged("refused: no kernel in ExecuTorch's portable kernel library") {
		t.Error("an ordinary failure counted as unjudged")
	}
}
