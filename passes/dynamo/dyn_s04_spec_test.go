package dynamo

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

func bound(b *sym.Bound) string {
	if b == nil {
		return "keep"
	}
	return b.String()
}

func specString(ds []DimSpec) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, d.Label()+"="+d.Name+"["+bound(d.Min)+","+bound(d.Max)+"]")
	}
	return strings.Join(parts, " ")
}

func TestParseDynamicShapesText(t *testing.T) {
	got, err := ParseDynamicShapes(" input_ids.1=seq:2..512, past_key_values.layers.0.keys.2=past:..inf;\nx.-1=7..\n y.0=batch ", "test")
	if err != nil {
		t.Fatal(err)
	}
	want := "input_ids.1=seq[2,512] past_key_values.layers.0.keys.2=past[keep,inf] x.-1=[7,keep] y.0=batch[keep,keep]"
	if s := specString(got); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
	if got[0].Where != `test: entry 1 "input_ids.1=seq:2..512"` {
		t.Errorf("Where = %q", got[0].Where)
	}
	if ds, err := ParseDynamicShapes("  ", "test"); err != nil || ds != nil {
		t.Errorf("empty spec: %v %v", ds, err)
	}
}

func TestParseDynamicShapesJSON(t *testing.T) {
	got, err := ParseDynamicShapes(`{"y": {"10": "b", "2": {"min": 1, "max": "inf"}}, "x": {"0": {"name": "batch", "max": 64, "min": null}}}`, "meta")
	if err != nil {
		t.Fatal(err)
	}
	// Inputs sorted by name, dims numerically.
	want := "x.0=batch[keep,64] y.2=[1,inf] y.10=b[keep,keep]"
	if s := specString(got); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}

func TestParseDynamicShapesErrors(t *testing.T) {
	cases := []struct{ in, msg string }{
		{"x.0", `entry 1 "x.0": want <input>.<dim>=<name>`},
		{"x=batch", `"x" is not <input>.<dim>`},
		{"x.a=batch", `dim "a" is not an integer`},
		{"x.0=2batch", `"2batch" is not a valid symbol name`},
		{"x.0=True", `"True" is not a valid symbol name`},
		{"x.0=b:", `empty range after "b:"`},
		{"x.0=b:1-4", `range "1-4" is not <lo>..<hi>`},
		{"x.0=b:a..4", `bound "a": want an integer`},
		{"x.0=b:-inf..4", `only the upper bound may be infinite`},
		{"x.0=b:9..3", "min 9 > max 3"},
		{"x.0=b:-1..3", "min -1 is negative"},
		{"x.0=..", "neither a name nor a range"},
		{"ok.0=a, x.0=b:5..1", `entry 2 "x.0=b:5..1": min 5 > max 1`},
		{`{"x": [1]}`, "want {input: {dim: name or {name, min, max}}}"},
		{`{"x": {"a": "b"}}`, `"x" dim "a": dim key is not an integer`},
		{`{"x": {"0": {"nmae": "b"}}}`, `unknown field "nmae"`},
		{`{"x": {"0": {"max": [3]}}}`, `bound "[3]"`},
		{`{"x": {"0": "1b"}}`, `"1b" is not a valid symbol name`},
		{`{"x": {"0": {}}}`, "neither a name nor a range"},
	}
	for _, c := range cases {
		_, err := ParseDynamicShapes(c.in, "spec")
		if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "spec: ") {
			t.Errorf("%q: got %v, want …%s…", c.in, err, c.msg)
		}
	}
}

// A malformed spec option is rejected when the pipeline is built, before
// anything runs.
func TestDynamicShapesOptionCheckedAtBuild(t *testing.T) {
	_, err := pm.ParsePipeline(`dynamo: dynamo.dynamic-shapes(apply-dynamic-shapes{spec="x.0=b:9..1"})`)
	if err == nil || !strings.Contains(err.Error(), "min 9 > max 1") {
		t.Errorf("got %v", err)
	}
	if _, err := pm.ParsePipeline(`dynamo: dynamo.dynamic-shapes(apply-dynamic-shapes{spec="x.0=b:2..9"})`); err != nil {
		t.Errorf("valid spec rejected: %v", err)
	}
}

// runPipeline parses src, runs the pipeline text on it and returns the program.
func runPipeline(t *testing.T, pipeline, src string) (*ir.Program, *pm.Report, error) {
	t.Helper()
	p, err := ir.Parse([]byte(src), "test.fxir")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pm.ParsePipeline(pipeline)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true})
	return p, rep, err
}

// Renaming in both directions at once (a swap) is simultaneous, and the
// hints, ranges and unbacked flags follow the names.
func TestApplyDynamicShapesSwap(t *testing.T) {
	src := `symbol s0: [2, 64] hint 8
symbol s1: [1, 32] hint 3

graph forward(%x: f32[s0, s1]) {
  %sym_size_int: Sym(s1) = aten.sym_size.int(%x, 1)
  return %x, %sym_size_int
}
`
	p, _, err := runPipeline(t, `dynamo: dynamo.dynamic-shapes(apply-dynamic-shapes{spec="x.0=s1:2..16, x.1=s0"})`, src)
	if err != nil {
		t.Fatal(err)
	}
	want := `symbol s0: [1, 32] hint 3
symbol s1: [2, 16] hint 8

graph forward(%x: f32[s1, s0]) {
  %sym_size_int: Sym(s0) = aten.sym_size.int(%x, 1)
  return %x, %sym_size_int
}
`
	if got := ir.Print(p); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
