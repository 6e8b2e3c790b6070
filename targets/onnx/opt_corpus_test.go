package onnx

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/frontends/pt2"
)

// TestCorpusOptimizedInORT emits every corpus program with and without the
// optimizer, checks both against torch's outputs in ORT, checks the
// optimized model is byte-identical across two emissions, and logs the node
// counts (the table in docs/targets/onnx.md).
func TestCorpusOptimizedInORT(t *testing.T) {
	needORT(t)
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Skipf("no corpus: %v", err)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| program | nodes unoptimized | optimized | folded | rewritten | identities | cse | dead |\n|---|---|---|---|---|---|---|---|\n")
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(corpusDir, name)
			p, err := pt2.Read(filepath.Join(dir, "program.pt2"))
			if err != nil {
				t.Fatalf("frontend cannot read the program: %v", err)
			}
			runPipeline(t, p)
			plain, err := Emit(p, Options{Optimize: OptimizeOff})
			if err != nil {
				t.Fatalf("emit: %v", err)
			}
			m, err := Emit(p, Options{Optimize: OptimizeOn})
			if err != nil {
				t.Fatalf("emit optimized: %v", err)
			}
			if !m.Optimization.Ran {
				t.Fatalf("optimizer did not run: %s", m.Optimization.Why)
			}
			st := m.Optimization.Stats
			if st.NodesBefore != len(plain.Proto.Graph.Node) || st.NodesAfter != len(m.Proto.Graph.Node) {
				t.Errorf("stats %d → %d, graphs have %d and %d nodes", st.NodesBefore, st.NodesAfter, len(plain.Proto.Graph.Node), len(m.Proto.Graph.Node))
			}
			if st.NodesAfter > st.NodesBefore {
				t.Errorf("optimizer grew the graph: %s", st)
			}
			again, err := Emit(p, Options{Optimize: OptimizeOn})
			if err != nil {
				t.Fatal(err)
			}
			b1, err := m.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			b2, err := again.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b1, b2) {
				t.Error("optimized emission is not byte-identical across runs")
			}
			for _, mm := range []*Model{plain, m} {
				diffs, err := verifyFixture(mm, filepath.Join(dir, "io"), 1e-4)
				if err != nil {
					t.Fatalf("optimized=%v: %v", mm.Optimization.Ran, err)
				}
				for _, d := range diffs {
					if !d.OK(1e-4) {
						t.Errorf("optimized=%v output %s: %s max abs %g max rel %g", mm.Optimization.Ran, d.Name, d.Err, d.MaxAbs, d.MaxRel)
					}
				}
			}
			fmt.Fprintf(&table, "| `%s` | %d | %d | %d | %d | %d | %d | %d |\n", name, st.NodesBefore, st.NodesAfter, st.Folded, st.Rewritten, st.IdentitiesRemoved, st.CSEMerged, st.DeadNodes)
		})
	}
	t.Logf("node counts:\n%s", table.String())
}
