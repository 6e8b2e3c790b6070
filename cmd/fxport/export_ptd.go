package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fxport/fxport/ir"
	etemit "github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// etOpts holds the export command's ExecuTorch emission flags
// (--external-constants, --external-delegate-data).
var etOpts etemit.Options

// ptdPath is the .ptd written beside (and found beside) a .pte.
func ptdPath(ptePath string) string {
	return strings.TrimSuffix(ptePath, filepath.Ext(ptePath)) + ".ptd"
}

// writeExecuTorch emits p (lowered by a portable or XNNPACK pipeline) as
// path, and, when the options move data out of the program, the .ptd
// beside it. Both are streamed (pte.Write, pte.WritePTD: the weights go
// from their sources to the files one at a time, never all in memory) into
// temporary files, renamed into place only when both were written.
func writeExecuTorch(p *ir.Program, path string, opts etemit.Options) error {
	f, data, err := etemit.ProgramWithData(p, opts)
	if err != nil {
		return err
	}
	writePTE := func(w io.Writer) error { return pte.Write(w, f) }
	if len(data) == 0 {
		return writeFilesAtomic([]string{path}, []func(io.Writer) error{writePTE})
	}
	writePTD := func(w io.Writer) error { return pte.WritePTD(w, data, etemit.PTDOptions) }
	return writeFilesAtomic([]string{path, ptdPath(path)}, []func(io.Writer) error{writePTE, writePTD})
}

// writeFilesAtomic writes every file to a temporary file beside it with
// its writer, then renames them into place, the first one last; if any
// write fails, no file is touched.
func writeFilesAtomic(paths []string, write []func(io.Writer) error) error {
	var tmps []string
	cleanup := func() {
		for _, t := range tmps {
			os.Remove(t)
		}
	}
	for i, path := range paths {
		tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
		if err != nil {
			cleanup()
			return err
		}
		tmps = append(tmps, tmp.Name())
		werr := write[i](tmp)
		cerr := tmp.Close()
		if werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Chmod(tmp.Name(), 0o644)
		}
		if werr != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", path, werr)
		}
	}
	// The first file (the .pte) goes in last: a rename that fails leaves
	// it untouched, and a later one fails only after an earlier rename in
	// the same directory succeeded.
	for i := len(paths) - 1; i >= 0; i-- {
		if err := os.Rename(tmps[i], paths[i]); err != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", paths[i], err)
		}
	}
	return nil
}

// fileExists reports a regular file at path.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
