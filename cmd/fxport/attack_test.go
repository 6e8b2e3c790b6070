package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fxport/fxport/tests/attack"
)

// Bounds of one attack case.
const (
	attackTimeout = 30 * time.Second
	attackAlloc   = 1 << 30 // bytes allocated (cumulative: an upper bound of the peak)
)

// TestAttackCorpus runs every case of the attack corpus (tests/attack)
// through the command line's code path, in-process, each in its own
// sandbox folder: it fails on a panic, a hang past attackTimeout, more
// than attackAlloc bytes allocated, a file written anywhere but the
// output path, a temporary or partial file left behind, a corrupt input
// accepted, or a refusal that does not name the file or say why. The
// committed small cases must equal what the generator writes.
func TestAttackCorpus(t *testing.T) {
	root := repoRoot
	cs, err := attack.Cases()
	if err != nil {
		t.Fatal(err)
	}
	base, err := attack.BasePTE()
	if err != nil {
		t.Fatal(err)
	}
	committed, _ := filepath.Glob(filepath.Join(root, "tests", "attack", "cases", "*"))
	small := 0
	for _, c := range cs {
		if c.Big {
			continue
		}
		small++
		got, err := os.ReadFile(filepath.Join(root, "tests", "attack", "cases", c.Name))
		if err != nil || !bytes.Equal(got, c.Data) {
			t.Errorf("tests/attack/cases/%s is stale or missing (go run ./tests/attack/gen)", c.Name)
		}
	}
	if len(committed) != small {
		t.Errorf("tests/attack/cases holds %d files, the generator %d (go run ./tests/attack/gen)", len(committed), small)
	}
	for _, c := range cs {
		t.Run(c.Name, func(t *testing.T) { runAttack(t, c, base) })
	}
}

func runAttack(t *testing.T, c attack.Case, base []byte) {
	top := t.TempDir()
	box := filepath.Join(top, "box")
	if err := os.Mkdir(box, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(box, c.Name)
	if err := os.WriteFile(file, c.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(box, "out"+outExt(c.Args))
	inputs := map[string]bool{file: true}
	var args []string
	for _, a := range c.Args {
		switch a {
		case "FILE":
			a = file
		case "OUT":
			a = out
		case "PTE":
			a = filepath.Join(box, "base.pte")
			if err := os.WriteFile(a, base, 0o644); err != nil {
				t.Fatal(err)
			}
			inputs[a] = true
		case "DIR":
			a = filepath.Join(box, "inputs")
			if err := os.MkdirAll(a, 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				p := filepath.Join(a, fmt.Sprintf("input_%d.npy", i))
				if err := os.WriteFile(p, c.Data, 0o644); err != nil {
					t.Fatal(err)
				}
				inputs[p] = true
			}
			file = filepath.Join(a, "input_0.npy") // the refusal names it
			inputs[a] = true
		}
		args = append(args, a)
	}
	type result struct {
		code           int
		stdout, stderr string
		panic          any
	}
	done := make(chan result, 1)
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	go func() {
		var so, se bytes.Buffer
		defer func() {
			if r := recover(); r != nil {
				done <- result{panic: r}
			}
		}()
		code := run(args, &so, &se)
		done <- result{code: code, stdout: so.String(), stderr: se.String()}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(attackTimeout):
		t.Fatalf("fxport %s: no answer after %v (a hang)", strings.Join(args, " "), attackTimeout)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	t.Logf("exit %d: %.400s", r.code, r.stderr)
	if r.panic != nil {
		t.Fatalf("fxport %s: panic: %v", strings.Join(args, " "), r.panic)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > attackAlloc {
		t.Errorf("allocated %d MiB, over the %d MiB cap", n>>20, attackAlloc>>20)
	}
	if strings.Contains(r.stderr, "panic") {
		t.Errorf("a recovered panic: %s", r.stderr)
	}
	// Nothing but the inputs and (when accepted) the output may exist.
	wrote := r.code == 0 && c.Want == "" && strings.Contains(strings.Join(c.Args, " "), "OUT")
	filepath.Walk(top, func(p string, info os.FileInfo, err error) error {
		if err != nil || p == top || p == box || inputs[p] {
			return nil
		}
		if p == out && wrote {
			return nil
		}
		t.Errorf("left behind: %s", p)
		return nil
	})
	if c.Want == "" {
		if r.code != 0 {
			t.Fatalf("a legal input refused (exit %d): %s", r.code, r.stderr)
		}
		return
	}
	if r.code == 0 {
		t.Fatalf("a corrupt input accepted: fxport %s\nstdout: %.300s", strings.Join(args, " "), r.stdout)
	}
	if !strings.Contains(r.stderr, file) {
		t.Errorf("the refusal does not name %s: %s", file, r.stderr)
	}
	if !strings.Contains(strings.ToLower(r.stderr), strings.ToLower(c.Want)) {
		t.Errorf("the refusal does not say %q: %s", c.Want, r.stderr)
	}
}

// outExt is the extension of the output path a case's target writes.
func outExt(args []string) string {
	for i, a := range args {
		if a == "--target" && i+1 < len(args) {
			switch {
			case args[i+1] == "onnx":
				return ".onnx"
			case args[i+1] == "dynamo":
				return ".fxir"
			case strings.HasPrefix(args[i+1], "executorch"):
				return ".pte"
			}
		}
	}
	return ""
}
