package goldenfile

import (
	"testing"

	_ "github.com/fxport/fxport/passes/dynamo"  // the dynamo stages every pipeline starts with
	_ "github.com/fxport/fxport/passes/onnxfix" // the ONNX stages of the onnx pipeline
)

func TestSplitInheritsFirstCaseHeader(t *testing.T) {
	text := `# A comment: not a header key
# target: onnx
# passes: onnx-node-fixes
graph forward(%x: f32[2]) {
  return %x
}
# -----
# passes: dce
# exclude-patches: where-promote,ONNX-P01
graph forward(%x: f32[2]) {
  return %x
}
# -----
# error: boom
graph forward() {
  return
}
`
	cases := Split("f.fxir", text)
	if len(cases) != 3 {
		t.Fatalf("%d cases, want 3", len(cases))
	}
	if cases[0].Header["target"] != "onnx" || cases[0].Header["passes"] != "onnx-node-fixes" || len(cases[0].Header) != 2 {
		t.Fatalf("case 1 header %v", cases[0].Header)
	}
	if cases[1].Header["target"] != "onnx" || cases[1].Header["passes"] != "dce" || cases[1].Name != "f.fxir case 2" {
		t.Fatalf("case 2 header %v (%s)", cases[1].Header, cases[1].Name)
	}
	if len(cases[1].ExportOptions()) != 1 {
		t.Fatal("exclude-patches should give one export option")
	}
	if want, ok := cases[2].WantsError(); !ok || want != "boom" || cases[2].Header["passes"] != "onnx-node-fixes" {
		t.Fatalf("case 3 header %v", cases[2].Header)
	}
	if _, ok := cases[0].WantsError(); ok {
		t.Fatal("case 1 expects no error")
	}
	pl, err := cases[0].Pipeline()
	if err != nil {
		t.Fatal(err)
	}
	if pl.Target != "onnx" || pl.Backend != "onnx" {
		t.Fatalf("pipeline %s", pl)
	}
}
