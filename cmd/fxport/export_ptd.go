package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fxport/fxport/internal/atomicfile"
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
	files := []atomicfile.File{{Path: path, Write: func(w io.Writer) error { return pte.Write(w, f) }}}
	if len(data) > 0 {
		// The .ptd goes in first: the .pte that names its data lands last.
		files = append([]atomicfile.File{{Path: ptdPath(path), Write: func(w io.Writer) error {
			return pte.WritePTD(w, data, etemit.PTDOptions)
		}}}, files...)
	}
	return atomicfile.WriteAll(files...)
}

// fileExists reports a regular file at path.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
