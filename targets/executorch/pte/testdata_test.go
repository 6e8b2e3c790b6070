package pte

import (
	"os"
	"path/filepath"
	"testing"
)

// genuineDir finds shared/testdata/pte: beside the repository checkout
// (../shared from the repo root), one level further up, or inside it.
func genuineDir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			t.Skip("repository root (go.mod) not found")
		}
		root = parent
	}
	for _, rel := range []string{"../shared/testdata/pte", "../../shared/testdata/pte", "shared/testdata/pte"} {
		dir := filepath.Join(root, rel)
		if _, err := os.Stat(filepath.Join(dir, "PROVENANCE.md")); err == nil {
			return dir
		}
	}
	t.Skipf("genuine ExecuTorch files not found (looked for shared/testdata/pte next to or inside %s)", root)
	return ""
}

func genuineFiles(t testing.TB, pattern string) []string {
	files, err := filepath.Glob(filepath.Join(genuineDir(t), pattern))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no %s files in the genuine test data", pattern)
	}
	return files
}

const corruptFile = "djl_corrupt_not_a_pte.pte"
