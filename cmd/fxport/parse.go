package main

import (
	"fmt"
	"io"

	"github.com/fxport/fxport/ir"
)

func runParse(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("parse", stderr)
	verify := fs.Bool("verify", true, "run the IR verifier")
	verifyTypes := fs.Bool("verify-types", false, "also re-run shape/dtype inference on every node")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageErr("want one FILE, got %d", len(files))
	}
	p, err := loadProgram(files[0])
	if err != nil {
		return err
	}
	if *verify || *verifyTypes {
		if err := ir.VerifyWith(p, ir.VerifyOptions{Types: *verifyTypes}); err != nil {
			return fmt.Errorf("%s: %w", files[0], err)
		}
	}
	_, err = io.WriteString(stdout, ir.Print(p))
	return err
}
