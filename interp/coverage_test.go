package interp

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated coverage section of docs/interpreter.md")

const (
	beginCoverage = "<!-- BEGIN GENERATED COVERAGE -->\n"
	endCoverage   = "<!-- END GENERATED COVERAGE -->"
)

// TestCoverageDocIsFresh keeps the op coverage listed in docs/interpreter.md
// equal to what the interpreter supports.
func TestCoverageDocIsFresh(t *testing.T) {
	const path = "../docs/interpreter.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, beginCoverage), strings.Index(doc, endCoverage)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated coverage section", path)
	}
	want := doc[:i+len(beginCoverage)] + CoverageMarkdown() + doc[j:]
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want != doc {
		t.Fatalf("the coverage section of %s is stale: run `go test ./interp -run Coverage -update`", path)
	}
}

// TestUnsupportedReasonsAreCurrent keeps unsupportedWhy free of ops that
// have a kernel now.
func TestUnsupportedReasonsAreCurrent(t *testing.T) {
	for op := range unsupportedWhy {
		if kernels.Has(op) {
			t.Errorf("%s has a kernel but is listed as unsupported", op)
		}
	}
}
