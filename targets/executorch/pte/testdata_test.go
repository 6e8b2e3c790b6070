package pte

import (
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/internal/testenv"
)

// genuineDir finds shared/testdata/pte (testenv.Shared): a test without it
// skips naming the step that provides it, and fails under CI.
func genuineDir(t testing.TB) string {
	t.Helper()
	return testenv.Shared(t, "testdata/pte")
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
