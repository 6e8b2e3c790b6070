package onnx

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated section of docs/targets/onnx.md")

const (
	docPath  = "../../docs/targets/onnx.md"
	docBegin = "<!-- BEGIN GENERATED: go test ./targets/onnx -run TestDocCoverage -update -->\n"
	docEnd   = "<!-- END GENERATED -->"
)

func TestDocCoverageFresh(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, docBegin), strings.Index(s, docEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the generated-section markers", docPath)
	}
	want := s[:i+len(docBegin)] + CoverageMarkdown(opCaseOps(t)) + s[j:]
	if want == s {
		return
	}
	if *update {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s coverage tables are stale: go test ./targets/onnx -run TestDocCoverage -update", docPath)
}

// Each op has at most one lowering per minimum opset (two would make the
// resolution order arbitrary).
func TestNoDuplicateLowerings(t *testing.T) {
	for _, op := range table.Ops() {
		vs := versions(op)
		for i := 1; i < len(vs); i++ {
			if vs[i].MinOpset == vs[i-1].MinOpset {
				t.Errorf("%s has two lowerings from opset %d", op, vs[i].MinOpset)
			}
		}
	}
}
