package fb

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
)

// The committed generated code must equal what gen.sh produces from the
// schemas now (hand-written doc.go files excepted).
func TestGeneratedCodeIsFresh(t *testing.T) {
	if _, err := exec.LookPath("flatc"); err != nil {
		t.Skip("flatc not installed (Debian: flatbuffers-compiler)")
	}
	tmp := t.TempDir()
	cmd := exec.Command("sh", "gen.sh", tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen.sh: %v\n%s", err, out)
	}
	list := func(root string) []string {
		var files []string
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if d.IsDir() || filepath.Dir(rel) == "." || filepath.Base(rel) == "doc.go" {
				return nil
			}
			files = append(files, rel)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(files)
		return files
	}
	gen, committed := list(tmp), list(".")
	if len(gen) == 0 {
		t.Fatal("gen.sh produced no files")
	}
	in := map[string]bool{}
	for _, f := range committed {
		in[f] = true
	}
	for _, f := range gen {
		if !in[f] {
			t.Errorf("%s is generated but not committed (run go generate ./targets/executorch/fb)", f)
			continue
		}
		delete(in, f)
		want, _ := os.ReadFile(filepath.Join(tmp, f))
		got, _ := os.ReadFile(f)
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale (run go generate ./targets/executorch/fb)", f)
		}
	}
	for f := range in {
		t.Errorf("%s is committed but no longer generated", f)
	}
}
