package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
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

// Every table row names a registered pass, every registered pass with a
// stage is in a table and every patch in PatchOrder (fxport links every
// target, so this is the full check).
func TestBuiltinTables(t *testing.T) {
	if err := pm.CheckBuiltins(); err != nil {
		t.Fatal(err)
	}
}

// The pipelines, listings and patch order do not depend on the order in
// which Go initializes (hence registers) the workaround files: every entry
// of Default registered into a fresh catalog in shuffled order gives the
// same results. Renaming or moving a source file changes only that order.
func TestPipelinesIgnoreRegistrationOrder(t *testing.T) {
	describe := func(c *pm.Catalog) string {
		var b strings.Builder
		pls, err := c.BuildAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, pl := range pls {
			fmt.Fprintln(&b, pl.String())
			e, err := pm.NewExport(pl.Target, pl.Backend, pm.WithCatalog(c))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, strings.Join(e.PatchNames(), ","), e.Partitioners())
		}
		for _, e := range c.List() {
			fmt.Fprintln(&b, e.Kind, e.Name, e.Stage)
		}
		return b.String()
	}
	want := describe(pm.Default)
	entries := pm.Default.Entries()
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 5 {
		perm := r.Perm(len(entries))
		c := pm.NewCatalog()
		for _, j := range perm {
			if err := c.Add(entries[j]); err != nil {
				t.Fatal(err)
			}
		}
		if got := describe(c); got != want {
			t.Fatalf("shuffle %d: registration order changed the pipelines or listings:\ngot:\n%s\nwant:\n%s", i, got, want)
		}
	}
}
