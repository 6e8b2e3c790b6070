package xnnpack_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// TestCorpus exports every corpus program to an XNNPACK .pte, decodes it
// with our reader and, when flatc is installed, with flatc and our schema.
// Programs the pipeline or the portable emitter cannot handle yet are
// skipped with the reason.
func TestCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../../tests/corpus/*/program.pt2")
	if len(files) == 0 {
		t.Skip("no corpus programs")
	}
	flatc, _ := exec.LookPath("flatc")
	delegated := 0
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f))
		t.Run(name, func(t *testing.T) {
			p, err := pt2.Read(f)
			if err != nil {
				t.Skipf("not loadable: %v", err)
			}
			pl, err := pm.Build(pm.TargetExecuTorch, "executorch.xnnpack")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil {
				t.Skipf("pipeline: %v", err)
			}
			if err := ir.Verify(p); err != nil {
				t.Fatalf("partitioned program does not verify: %v", err)
			}
			ef, err := emit.Program(p, emit.Options{})
			if err != nil {
				t.Skipf("emitter: %v", err)
			}
			b, err := pte.Encode(ef)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			got, err := pte.Decode(name+".pte", b)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			n := len(got.Methods[0].Delegates)
			if n > 0 {
				delegated++
			}
			t.Logf("%d XNNPACK delegates, %d bytes", n, len(b))
			if flatc == "" {
				return
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "x.pte")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(flatc, "--json", "--strict-json", "--raw-binary", "-o", dir, "../schema/program.fbs", "--", path).CombinedOutput()
			if err != nil {
				t.Fatalf("flatc rejects the program: %v\n%s", err, out)
			}
		})
	}
	t.Logf("%d corpus programs exported with XNNPACK delegates", delegated)
}
