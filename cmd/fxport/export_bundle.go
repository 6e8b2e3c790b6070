package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/fxport/fxport/internal/atomicfile"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/bundle"
	etemit "github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// bundledExt is the extension of ExecuTorch bundled programs.
const bundledExt = ".bpte"

// The export command's --bundle state: the directories named, the test
// cases read from them, and the program before lowering (the interpreter
// computes expected outputs the directories lack on it).
var (
	bundleDirs  listFlag
	bundleCases []bundle.Case
	bundleSrc   *ir.Program
)

// prepareBundle checks the --bundle flags against the rest of the command
// line and reads the test cases; src is the unlowered program (export
// lowers clones of it).
func prepareBundle(src *ir.Program, target, out string) error {
	bundleCases, bundleSrc = nil, nil
	if len(bundleDirs) == 0 {
		if filepath.Ext(out) == bundledExt {
			return usageErr("-o %s: a bundled program needs test cases: add --bundle DIR", out)
		}
		return nil
	}
	if target == "all" {
		return usageErr("--bundle needs one target (executorch-portable or executorch-xnnpack), not --target all")
	}
	if filepath.Ext(out) != bundledExt {
		return usageErr("--bundle writes a bundled program: use -o OUT%s", bundledExt)
	}
	for _, d := range bundleDirs {
		c, err := bundle.ReadDir(d)
		if err != nil {
			return fmt.Errorf("--bundle: %w", err)
		}
		bundleCases = append(bundleCases, c)
	}
	bundleSrc = src
	return nil
}

// writeBundled emits p (lowered by a portable or XNNPACK pipeline) as a
// .pte, wraps it with the --bundle test cases into the bundled program
// path (and the .ptd beside it when the options move data out), written
// atomically, and says where each case's expected outputs came from.
func writeBundled(p *ir.Program, path string, opts etemit.Options, stdout io.Writer) error {
	f, data, err := etemit.ProgramWithData(p, opts)
	if err != nil {
		return err
	}
	var prog bytes.Buffer
	if err := pte.Write(&prog, f); err != nil {
		return err
	}
	decoded, err := pte.Decode(path, prog.Bytes())
	if err != nil {
		return err
	}
	suite, origins, err := bundle.Suite(bundleSrc, decoded, "forward", bundleCases)
	if err != nil {
		return fmt.Errorf("--bundle: %w", err)
	}
	bp, err := pte.EncodeBundled(prog.Bytes(), []pte.BundledSuite{suite})
	if err != nil {
		return err
	}
	files := []atomicfile.File{{Path: path, Write: func(w io.Writer) error { _, err := w.Write(bp); return err }}}
	if len(data) > 0 {
		files = append([]atomicfile.File{{Path: ptdPath(path), Write: func(w io.Writer) error {
			return pte.WritePTD(w, data, etemit.PTDOptions)
		}}}, files...)
	}
	if err := atomicfile.WriteAll(files...); err != nil {
		return err
	}
	for i, o := range origins {
		fmt.Fprintf(stdout, "%s: test case %d (%s): %s\n", path, i, bundleCases[i].Dir, o)
	}
	return nil
}
