package main

import (
	"os"

	fxapi "github.com/fxport/fxport"
	"github.com/fxport/fxport/ir"
	etemit "github.com/fxport/fxport/targets/executorch/emit"
)

// etOpts holds the export command's ExecuTorch emission flags
// (--external-constants, --external-delegate-data).
var etOpts etemit.Options

// ptdPath is the .ptd written beside (and found beside) a .pte.
func ptdPath(ptePath string) string { return fxapi.PTDPath(ptePath) }

// writeExecuTorch emits p (lowered by a portable or XNNPACK pipeline) as
// path and, when the options move data out of the program, the .ptd beside
// it (fxapi.WriteExecuTorch).
func writeExecuTorch(p *ir.Program, path string, opts etemit.Options) error {
	_, err := fxapi.WriteExecuTorch(p, path, opts)
	return err
}

// fileExists reports a regular file at path.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
