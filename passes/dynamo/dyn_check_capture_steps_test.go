package dynamo

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// Every capture-only Dynamo row of the catalog is declared once, for all
// backends, in a Dynamo stage.
func TestDynamoCaptureRowsDeclared(t *testing.T) {
	ids := []string{"DYN-S01", "DYN-S02", "DYN-S03", "DYN-S04", "DYN-S05", "DYN-S06", "DYN-S07", "DYN-S08", "DYN-S09",
		"DYN-P01", "DYN-P02", "DYN-P03", "DYN-P04", "DYN-P05", "DYN-P06", "DYN-P07"}
	for _, id := range ids {
		steps := pm.Default.Captures.ByID(id)
		if len(steps) != 1 {
			t.Errorf("%s: %d capture steps", id, len(steps))
			continue
		}
		s := steps[0]
		if s.Backend != pm.BackendAll || pm.StageIndex(pm.TargetDynamo, s.Stage) < 0 || s.Target == "" || s.Reason == "" {
			t.Errorf("%s: %+v", id, *s)
		}
	}
	for _, d := range captureDetectors {
		if len(pm.Default.Captures.ByID(d.step)) != 1 {
			t.Errorf("detector for undeclared step %s", d.step)
		}
	}
}

func mustParse(t *testing.T, src string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), "test.fxir")
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.VerifyWith(p, ir.VerifyOptions{Types: true}); err != nil {
		t.Fatal(err)
	}
	return p
}

// Near misses of the per-segment attention loop are not reported.
func TestSegmentLoopNearMisses(t *testing.T) {
	cases := map[string]string{
		"queries from two different splits": `graph forward(%q: f32[2, 12, 8], %r: f32[2, 12, 8], %k: f32[2, 6, 8]) {
  %q0: f32[2, 6, 8], %q1: f32[2, 6, 8] = aten.split.Tensor(%q, 6, 1)
  %r0: f32[2, 6, 8], %r1: f32[2, 6, 8] = aten.split.Tensor(%r, 6, 1)
  %a: f32[2, 6, 8] = aten.scaled_dot_product_attention.default(%q0, %k, %k)
  %b: f32[2, 6, 8] = aten.scaled_dot_product_attention.default(%r1, %k, %k)
  %cat: f32[2, 12, 8] = aten.cat.default([%a, %b], 1)
  return %cat
}
`,
		"one segment attended twice": `graph forward(%q: f32[2, 12, 8], %k: f32[2, 6, 8]) {
  %q0: f32[2, 6, 8], %q1: f32[2, 6, 8] = aten.split.Tensor(%q, 6, 1)
  %a: f32[2, 6, 8] = aten.scaled_dot_product_attention.default(%q0, %k, %k)
  %b: f32[2, 6, 8] = aten.scaled_dot_product_attention.default(%q0, %k, %k)
  %cat: f32[2, 12, 8] = aten.cat.default([%a, %b], 1)
  return %cat
}
`,
		"a cat of attention and something else": `graph forward(%q: f32[2, 12, 8], %k: f32[2, 6, 8]) {
  %q0: f32[2, 6, 8], %q1: f32[2, 6, 8] = aten.split.Tensor(%q, 6, 1)
  %a: f32[2, 6, 8] = aten.scaled_dot_product_attention.default(%q0, %k, %k)
  %cat: f32[2, 12, 8] = aten.cat.default([%a, %q1], 1)
  return %cat
}
`,
		"softmax of something that is not a product": `graph forward(%q: f32[2, 12, 8], %v: f32[2, 8, 8]) {
  %q0: f32[2, 6, 8], %q1: f32[2, 6, 8] = aten.split.Tensor(%q, 6, 1)
  %s0: f32[2, 6, 8] = aten.softmax.int(%q0, -1)
  %s1: f32[2, 6, 8] = aten.softmax.int(%q1, -1)
  %a: f32[2, 6, 8] = aten.matmul.default(%s0, %v)
  %b: f32[2, 6, 8] = aten.matmul.default(%s1, %v)
  %cat: f32[2, 12, 8] = aten.cat.default([%a, %b], 1)
  return %cat
}
`,
	}
	for name, src := range cases {
		if err := findSegmentAttentionLoop(mustParse(t, src)); err != nil {
			t.Errorf("%s: reported: %v", name, err)
		}
	}
}

// The check can be disabled, which exports a program it would reject.
func TestCheckCaptureStepsCanBeDisabled(t *testing.T) {
	const src = "graph forward(%input_ids: i64[2], %labels: i64[2]) {\n  return %input_ids\n}\n"
	const pipeline = "dynamo: dynamo.signature(check-capture-steps)"
	if _, _, err := runPipelineCfg(t, pipeline, src, pm.Config{}); err == nil || !strings.Contains(err.Error(), "DYN-S01") {
		t.Fatalf("enabled: %v", err)
	}
	_, rep, err := runPipelineCfg(t, pipeline, src, pm.Config{Disable: []string{CheckCaptureSteps.Name}})
	if err != nil {
		t.Fatal(err)
	}
	if pr, ok := rep.Pass(CheckCaptureSteps.Name); !ok || !pr.Disabled {
		t.Errorf("report: %+v", pr)
	}
}

func runPipelineCfg(t *testing.T, pipeline, src string, cfg pm.Config) (*ir.Program, *pm.Report, error) {
	t.Helper()
	p := mustParse(t, src)
	pl, err := pm.ParsePipeline(pipeline)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pm.Run(p, pl, nil, cfg)
	return p, rep, err
}
