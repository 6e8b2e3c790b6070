package dynamo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fxport/fxport/pm"
)

// A stack of many blocks drops thousands of weights at once: every unused
// one goes, the used one stays, and the report line names a bounded number
// of them and counts the rest.
func TestDropUnusedWeightsManyAtOnce(t *testing.T) {
	const unused = maxNamesListed + 8
	var src, params strings.Builder
	src.WriteString("input p_used: parameter \"used\"\n")
	params.WriteString("%p_used: f32[2]")
	for i := 0; i < unused; i++ {
		fmt.Fprintf(&src, "input p_w%d: parameter \"w%d\"\n", i, i)
		fmt.Fprintf(&params, ", %%p_w%d: f32[2]", i)
	}
	src.WriteString("input x: user_input\noutput user_output\n")
	src.WriteString("weight \"used\": f32[2] = inline(\"0000803f00000040\")\n")
	for i := 0; i < unused; i++ {
		fmt.Fprintf(&src, "weight \"w%d\": f32[2] = inline(\"0000803f00000040\")\n", i)
	}
	fmt.Fprintf(&src, "\ngraph forward(%s, %%x: f32[2]) {\n  %%mul: f32[2] = aten.mul.Tensor(%%x, %%p_used)\n  return %%mul\n}\n", params.String())
	p := mustParse(t, src.String())

	pl, err := pm.ParsePipeline("dynamo: dynamo.state-cleanup(drop-unused-weights)")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(p.Main.Inputs); got != 2 {
		t.Errorf("inputs after the fix: %d, want 2 (p_used, x)", got)
	}
	if len(p.Signature.Inputs) != 2 || p.Signature.Inputs[0].Target != "used" {
		t.Errorf("signature inputs: %+v", p.Signature.Inputs)
	}
	if len(p.Weights) != 1 || p.Weights[0].Name != "used" {
		t.Errorf("weights left: %d (want only %q)", len(p.Weights), "used")
	}
	for i, in := range p.Main.Inputs {
		if in.Index != i {
			t.Errorf("input %s has index %d, want %d", in, in.Index, i)
		}
	}
	if len(rep.Fired) != 1 {
		t.Fatalf("fired %d times, want once", len(rep.Fired))
	}
	d := rep.Fired[0].Detail
	if want := fmt.Sprintf(" and 8 more (%d in all)", unused); !strings.HasSuffix(d, want) {
		t.Errorf("report line %q does not end with %q", d, want)
	}
	if n := strings.Count(d, "%p_w"); n != maxNamesListed {
		t.Errorf("report line names %d weights, want %d", n, maxNamesListed)
	}
}
