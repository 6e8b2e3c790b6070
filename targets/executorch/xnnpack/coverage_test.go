package xnnpack

import (
	"os"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// Every XN01 node kind of our schema has a coverage entry, every op an
// entry names has a support rule, every op with a rule is listed, and
// docs/targets/executorch.md holds the generated table.
func TestCoverageTable(t *testing.T) {
	for k, name := range xnnfb.EnumNamesXNodeUnion {
		if k == xnnfb.XNodeUnionNONE {
			continue
		}
		c, ok := coverage[k]
		if !ok {
			t.Errorf("node kind %s has no coverage entry", name)
			continue
		}
		if len(c.Ops) == 0 && c.Reason == "" {
			t.Errorf("node kind %s is not written and has no reason", name)
		}
	}
	if len(coverage) != len(xnnfb.EnumNamesXNodeUnion)-1 {
		t.Errorf("%d coverage entries for %d node kinds", len(coverage), len(xnnfb.EnumNamesXNodeUnion)-1)
	}
	listed := map[ir.Op]bool{}
	for k, c := range coverage {
		for _, op := range c.Ops {
			if !rules.Has(op) {
				t.Errorf("%s: op %s has no support rule", k, op)
			}
			listed[op] = true
		}
	}
	for _, op := range rules.Ops() {
		if !listed[op] {
			t.Errorf("op %s has a support rule but no coverage entry", op.Info().Name)
		}
	}
	doc, err := os.ReadFile("../../../docs/targets/executorch.md")
	if err != nil {
		t.Skipf("docs not found: %v", err)
	}
	if want := CoverageMarkdown(); !strings.Contains(string(doc), want) {
		t.Errorf("docs/targets/executorch.md does not hold the current node-kind table; paste:\n%s", want)
	}
}
