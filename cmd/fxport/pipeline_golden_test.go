package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/pm"
)

var updatePipelines = flag.Bool("update-pipelines", false, "rewrite testdata/pipeline/*.golden")

// TestPipelineGolden pins `fxport pipeline` for every target and backend:
// a change of the pipeline tables shows up as a diff of these files.
func TestPipelineGolden(t *testing.T) {
	n := 0
	for _, target := range pm.Targets() {
		for _, b := range pm.ExportBackends(target) {
			n++
			out, errOut, code := fxport(t, "pipeline", "--target", target, "--backend", b)
			if code != 0 {
				t.Fatalf("pipeline --target %s --backend %s: exit %d: %s", target, b, code, errOut)
			}
			base := b
			if target == pm.TargetDynamo {
				base = "dynamo"
			}
			checkPipelineGolden(t, filepath.Join("testdata", "pipeline", base+".golden"), out)
			checkPipelineGolden(t, filepath.Join("testdata", "pipeline", base+".order"), entryOrder(t, target, b))
		}
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "pipeline", "*.golden"))
	if !*updatePipelines && len(files) != n {
		t.Errorf("%d pipeline goldens for %d target/backend pairs: remove the stale ones", len(files), n)
	}
}

// entryOrder lists what runs in a fixed order inside the pipeline's drivers:
// the patches an export installs (the patch drivers apply them in this
// order), the backend prepares and the partitioners they select.
func entryOrder(t *testing.T, target, backend string) string {
	t.Helper()
	e, err := pm.NewExport(target, backend)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	byStage := map[string][]string{}
	var stages []string
	for _, p := range e.Patches() {
		if byStage[p.Stage] == nil {
			stages = append(stages, p.Stage)
		}
		byStage[p.Stage] = append(byStage[p.Stage], p.Name)
	}
	for _, s := range stages {
		fmt.Fprintf(&b, "patches %s: %s\n", s, strings.Join(byStage[s], ", "))
	}
	var prepares []string
	for _, bp := range pm.Default.Prepares.All() {
		if pm.Applies(bp.Backend, e.Backend()) {
			prepares = append(prepares, bp.Name)
		}
	}
	fmt.Fprintf(&b, "prepares: %s\n", strings.Join(prepares, ", "))
	fmt.Fprintf(&b, "partitioners: %s\n", strings.Join(e.Partitioners(), ", "))
	return b.String()
}

func checkPipelineGolden(t *testing.T, path, got string) {
	t.Helper()
	if *updatePipelines {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `go test ./cmd/fxport -run TestPipelineGolden -update-pipelines`)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
