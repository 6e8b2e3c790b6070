package main

import (
	"fmt"
	"io"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// runReplay re-runs the pipeline stored in a reproducer on the IR it holds.
func runReplay(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("replay", stderr)
	var rf runFlags
	rf.register(fs)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageErr("want one REPRODUCER, got %d", len(files))
	}
	pl, p, failed, err := pm.LoadReproducer(files[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "replaying %s: pipeline %s (failed pass: %s)\n", files[0], pl, failed)
	exp, err := pm.NewExport(pl.Target, pl.Backend)
	if err != nil {
		return err
	}
	cfg := rf.config(stderr)
	cfg.VerifyEach = true
	if _, err := pm.Run(p, pl, exp, cfg); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "the pipeline now succeeds on the reproducer")
	_, err = io.WriteString(stdout, ir.Print(p))
	return err
}
