// Package capture is fxport's front door from a PyTorch model to a .pt2:
// it carries the Python package fxport_capture (embedded in the binary) and
// runs it with a Python that has torch, so that `fxport capture` works from
// any directory. The Python side runs torch.export with the catalog's
// capture steps applied as reversible patches and records the IDs of those
// that fired in the program's metadata (export.capture_steps), which the
// check-capture-steps pass reports.
package capture

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"

	"github.com/fxport/fxport/internal/checkout"
)

//go:embed fxport_capture/*.py fxport_capture/*.json
var pkg embed.FS

// Options say which Python runs the capture and where its output goes.
type Options struct {
	// Python is the interpreter; empty means FindPython's choice.
	Python string
	// Stdout and Stderr receive the capture's report and errors.
	Stdout, Stderr io.Writer
}

// ExitError is a capture that ran and failed; its message was already
// written to Options.Stderr by the Python side.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("capture failed (exit status %d)", e.Code) }

// Run captures a model: args are the Python front door's arguments
// (`--model FILE.py:FACTORY` or `--hf ARCH`, `-o DIR`, …; `--help` lists
// them).
func Run(ctx context.Context, args []string, opt Options) error {
	py := opt.Python
	if py == "" {
		var err error
		if py, err = FindPython(); err != nil {
			return err
		}
	}
	dir, err := unpack()
	if err != nil {
		return fmt.Errorf("unpacking the capture package: %w", err)
	}
	cmd := exec.CommandContext(ctx, py, append([]string{"-m", "fxport_capture"}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+joinPath(dir, os.Getenv("PYTHONPATH")), "PYTHONDONTWRITEBYTECODE=1")
	cmd.Stdout, cmd.Stderr = opt.Stdout, opt.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() > 0 {
			return &ExitError{Code: ee.ExitCode()}
		}
		return fmt.Errorf("running %s: %w", py, err)
	}
	return nil
}

func joinPath(a, b string) string {
	if b == "" {
		return a
	}
	return a + string(os.PathListSeparator) + b
}

// FindPython returns the interpreter for captures: $FXPORT_PYTHON, else the
// venv (third_party/venv) of the checkout holding the executable or the
// working directory, else python3 on PATH. It fails when none has a chance.
func FindPython() (string, error) {
	if p := os.Getenv("FXPORT_PYTHON"); p != "" {
		return p, nil
	}
	var starts []string
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, dir := range starts {
		if p := checkout.VenvPython(checkout.Root(dir)); p != "" {
			return p, nil
		}
	}
	if p, err := exec.LookPath("python3"); err == nil {
		return p, nil
	}
	return "", errors.New("no Python with torch found: set FXPORT_PYTHON, or run `make venv` in the fxport checkout")
}

// unpack writes the embedded package into the user's cache, in a folder
// named by the content's hash (so a new fxport never runs an old copy), and
// returns the folder to put on PYTHONPATH.
func unpack() (string, error) {
	names, err := fs.Glob(pkg, "fxport_capture/*.*")
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := pkg.ReadFile(n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "fxport", "capture-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "fxport_capture", "__main__.py")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".capture-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := os.Mkdir(filepath.Join(tmp, "fxport_capture"), 0o755); err != nil {
		return "", err
	}
	for _, n := range names {
		b, _ := pkg.ReadFile(n)
		if err := os.WriteFile(filepath.Join(tmp, n), b, 0o644); err != nil {
			return "", err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another fxport unpacked the same content first.
		if _, serr := os.Stat(filepath.Join(dir, "fxport_capture", "__main__.py")); serr == nil {
			return dir, nil
		}
		return "", err
	}
	return dir, nil
}
