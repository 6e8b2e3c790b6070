package dynamo

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

const twoInputs = `input x: user_input
input n: constant_input = 3
output user_output

graph forward(%x: f32[4], %n: int) {
  %neg: f32[4] = aten.neg.default(%x)
  return %neg
}
`

func TestIONamesReadsWhatFlatIONamesWrote(t *testing.T) {
	p := mustParse(t, twoInputs)
	if _, _, ok, err := p.IONames(); ok || err != nil {
		t.Fatalf("before the pass: ok %v, err %v", ok, err)
	}
	pl, err := pm.ParsePipeline("dynamo: dynamo.pytree(flat-io-names)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
		t.Fatal(err)
	}
	in, out, ok, err := p.IONames()
	if err != nil || !ok || strings.Join(in, ",") != "x,n" || strings.Join(out, ",") != "neg" {
		t.Fatalf("IONames = %q %q %v %v", in, out, ok, err)
	}
	// A later change to the inputs makes the recorded names stale: an error.
	p.Meta.Set(ir.MetaInputNames, `["x"]`)
	if _, _, _, err := p.IONames(); err == nil || !strings.Contains(err.Error(), `names 1 inputs, the program has 2 user inputs`) {
		t.Errorf("stale names: %v", err)
	}
	p.Meta.Set(ir.MetaInputNames, `{"x": 1}`)
	if _, _, _, err := p.IONames(); err == nil || !strings.Contains(err.Error(), `meta "io.input_names": want a JSON array of strings`) {
		t.Errorf("malformed names: %v", err)
	}
}
