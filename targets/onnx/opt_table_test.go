package onnx

import (
	"strings"
	"testing"
)

func TestOptimizeDisabledScopes(t *testing.T) {
	cases := []struct {
		class   string
		dynamic bool
		off     bool
		scope   string
	}{
		{"YolosModel", false, true, "all"},
		{"YolosModel", true, true, "all"},
		{"ProphetNetModel", false, false, ""},
		{"ProphetNetModel", true, true, "dynamic"},
		{"BertModel", true, false, ""},
		{"", true, false, ""},
	}
	for _, c := range cases {
		off, why := OptimizeDisabled(c.class, c.dynamic)
		if off != c.off || (off && !strings.Contains(why, "(scope "+c.scope+")")) {
			t.Errorf("%s dynamic=%v: off=%v %q", c.class, c.dynamic, off, why)
		}
	}
	for _, e := range DisableOptimize {
		if e.Reason == "" || e.Upstream == "" || len(e.Classes) == 0 || (e.Scope != ScopeAll && e.Scope != ScopeDynamic) {
			t.Errorf("bad entry %+v", e)
		}
	}
}

// Emit follows the table through the program's model class.
func TestEmitHonoursDisableTable(t *testing.T) {
	p := runPipeline(t, loadExample(t)) // symbolic batch dim: a dynamic export
	if !DynamicExport(p) {
		t.Fatal("example should be dynamic")
	}
	m, err := Emit(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Optimization.Ran {
		t.Errorf("default: optimizer did not run: %s", m.Optimization.Why)
	}
	p.Meta.Set(MetaModelClass, "ZoeDepthForDepthEstimation")
	m, err = Emit(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Optimization.Ran || !strings.Contains(m.Optimization.Why, "ZoeDepthForDepthEstimation") {
		t.Errorf("table entry ignored: %+v", m.Optimization)
	}
	m, err = Emit(p, Options{Optimize: OptimizeOn})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Optimization.Ran {
		t.Error("OptimizeOn did not override the table")
	}
}
