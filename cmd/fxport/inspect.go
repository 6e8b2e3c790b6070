package main

import (
	"io"
	"path/filepath"

	"github.com/fxport/fxport/targets/executorch/pte"
)

// runInspect decodes an ExecuTorch program (.pte, or a bundled .bpte) and
// prints a summary (a .ptd data file prints its named tensors):
// header, segments, methods, values, instructions,
// delegates (with XNNPACK graphs) and the memory plan.
func runInspect(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("inspect", stderr)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageErr("want one FILE.pte, got %d", len(files))
	}
	if filepath.Ext(files[0]) == ".ptd" {
		d, err := pte.ReadPTD(files[0])
		if err != nil {
			return err
		}
		return d.Summary(stdout)
	}
	f, err := pte.Read(files[0])
	if err != nil {
		return err
	}
	return f.Summary(stdout)
}
