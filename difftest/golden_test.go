package difftest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/difftest"
	"github.com/fxport/fxport/frontends/fxtext"
	"github.com/fxport/fxport/ir"
	_ "github.com/fxport/fxport/passes"         // the ExecuTorch workarounds (and the Dynamo stages)
	_ "github.com/fxport/fxport/passes/onnxfix" // the ONNX workarounds
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/tests/goldenfile"
)

// invalidGoldens are golden cases whose input program is not a valid
// program (it fails ir.VerifyWith(Types: true)), so it has no meaning to
// keep. Each entry says why; fixing the case removes the entry.
var invalidGoldens = map[string]string{
	"passes/onnx_p20_split.fxir case 1": "x: f32[2, s0] split by s0 along dim 1 is one piece; the case declares two results",
}

// TestGoldenInputs runs the differential check on the input of every golden
// case (IR text, or FX text read by frontends/fxtext) with the case's own
// pipeline: no registered pass may change what a golden program computes.
func TestGoldenInputs(t *testing.T) {
	files, err := filepath.Glob("../tests/testdata/*/*.fxir")
	if err != nil {
		t.Fatal(err)
	}
	fx, err := filepath.Glob("../tests/testdata/*/*.fx")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, fx...)
	if len(files) == 0 {
		t.Fatal("no golden inputs found")
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range goldenfile.Split(file, string(data)) {
			c := c
			t.Run(strings.TrimPrefix(c.Name, "../tests/testdata/"), func(t *testing.T) {
				if _, bad := c.WantsError(); bad {
					t.Skip("the case expects the pipeline to fail")
				}
				if why, ok := invalidGoldens[strings.TrimPrefix(c.Name, "../tests/testdata/")]; ok {
					t.Skip("invalid input program: " + why)
				}
				var p *ir.Program
				if strings.HasSuffix(c.File, ".fx") {
					p, err = fxtext.Parse([]byte(c.Src), c.File, fxtext.Options{})
				} else {
					p, err = ir.Parse([]byte(c.Src), c.File)
				}
				if err != nil {
					t.Fatal(err)
				}
				pl, err := c.Pipeline()
				if err != nil {
					t.Fatal(err)
				}
				if err := difftest.Check(p, pl, difftest.WithExportOptions(c.ExportOptions()...)); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestExamplesThroughPipelines checks every example program through the
// default pipeline of every target and export backend, pass by pass.
func TestExamplesThroughPipelines(t *testing.T) {
	files, err := filepath.Glob("../examples/*/*.fxir")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no example programs found")
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range pm.Targets() {
			for _, backend := range pm.ExportBackends(target) {
				t.Run(filepath.Base(filepath.Dir(file))+"/"+backend, func(t *testing.T) {
					p, err := ir.Parse(src, file)
					if err != nil {
						t.Fatal(err)
					}
					pl, err := pm.Build(target, backend)
					if err != nil {
						t.Fatal(err)
					}
					if err := difftest.Check(p, pl); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
}
