package explorer

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

const before = `graph forward(%x: f32[2]) {
  %a: f32[2] = aten.neg.default(%x)
  %b: f32[2] = aten.abs.default(%a)
  return %b
}
`

const after = `graph forward(%x: f32[2]) {
  %c: f32[2] = aten.relu.default(%x)
  %b: f32[2] = aten.abs.default(%c)
  return %b
}
`

func render(t *testing.T, p *Page) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRender(t *testing.T) {
	p := &Page{Title: "m.fxir", Target: "onnx", Backend: "onnx", Pipeline: "a, b", Version: "devel", Input: before, Times: true,
		Passes: []Pass{
			{Name: "noop", Kind: "fix", Stage: "s", Duration: time.Millisecond},
			{Name: "swap", Kind: "patch", Stage: "s", Changed: true, IR: after, Duration: 2 * time.Millisecond,
				Stats: []Stat{{"swapped", 1}},
				Fired: []Firing{
					{Entry: "swap-neg", Kind: "patch", ID: "ONNX-P99", Graph: "forward", Node: "%a (aten.neg.default)", Detail: "<neg>"},
					{Entry: "swap-neg", Kind: "patch", ID: "ONNX-P99", Graph: "forward", Node: "%c (aten.relu.default)"},
				}},
		}}
	out := render(t, p)
	for _, want := range []string{
		`<span class="del">-  %a: f32[2] = aten.neg.default(%x)</span>`,
		`<span class="add">&#43;  %c: f32[2] = aten.relu.default(%x)</span>`,
		`<span id="p2-forward-c" class="chg">`, // the changed node, highlighted
		`<span id="p2-forward-b" class="chg">`, // its user's line changed too
		`<span id="p0-forward-a">`,             // the input listing
		`href="#p0-forward-a"`,                 // a removed node: linked where it was
		`href="#p2-forward-c"`,                 // a new node: linked where it is
		`<tr id="cat-ONNX-P99">`,
		`: &lt;neg&gt;`, // escaped
		`<td class="n">2</td><td><a href="#p0-forward-a">go</a>`,
		`+2 −2`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(out, "2ms") == false {
		t.Errorf("Times: the pass durations are missing")
	}
	if strings.Count(out, `<div class="diff"`) != 1 {
		t.Errorf("want one diff (one pass changed the IR)")
	}
	p.Times = false
	out2 := render(t, p)
	if strings.Contains(out2, "2ms") || strings.Contains(out2, "<th>time</th>") {
		t.Errorf("without Times the page shows durations")
	}
	if out2 != render(t, p) {
		t.Errorf("Render is not deterministic")
	}
}

func TestDrawArena(t *testing.T) {
	a := drawArena(Arena{Name: "b1", Size: 100, Steps: 4, Tensors: []Tensor{
		{Value: 3, Offset: 0, Size: 50, First: 0, Last: 1},
		{Value: 5, Offset: 50, Size: 50, First: 1, Last: 3},
		{Value: 7, Offset: 0, Size: 40, First: 2, Last: 3},
	}})
	if len(a.Rects) != 3 {
		t.Fatalf("rects: %d", len(a.Rects))
	}
	// Tensor 5: instructions 1..3 of 4, bytes 50..100 of 100.
	r := a.Rects[1]
	if r.X != "250.0" || r.W != "540.0" || r.Y != "120.0" || r.H != "110.0" {
		t.Errorf("rect = %+v", r)
	}
	if a.Peak != 100 || a.PeakStep != 1 {
		t.Errorf("peak %d at %d, want 100 at 1", a.Peak, a.PeakStep)
	}
}
